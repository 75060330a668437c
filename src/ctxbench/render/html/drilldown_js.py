"""The drill-down's inline script and style, and the CSP hash that allows the script.

The script follows each drill-down's data, a ``<script type="application/json">`` block
(never executed), and builds the table with ``textContent`` and ``setAttribute`` only, so no
string from a trial log is ever parsed as HTML. It needs no network and no other file;
``SCRIPT_HASH`` goes into the page's ``script-src`` so nothing else may run.
"""

from __future__ import annotations

import base64
import hashlib

__all__ = ["DRILL_CSS", "SCRIPT", "SCRIPT_HASH"]

SCRIPT = r"""(function () {
"use strict";
const PAGE = 100;
function el(tag, attrs, kids) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) {
    if (k === "text") e.textContent = attrs[k]; else e.setAttribute(k, attrs[k]);
  }
  for (const c of kids || []) if (c !== null && c !== undefined) e.append(c);
  return e;
}
function num(v) { return v === null ? "\u2014" : String(v); }
function pick(label, options, value) {
  const s = el("select", {"aria-label": label});
  for (const [v, t, title] of options) {
    const o = el("option", {value: v, text: t});
    if (title) o.setAttribute("title", title);
    s.append(o);
  }
  s.value = value;
  return el("label", {}, [label + " ", s]);
}
function Drill(root) {
  const D = JSON.parse(root.querySelector("script.dd-data").textContent);
  const P = D.prefix, T = D.trials, S = D.texts;
  const F = {line: 0, task: 1, cond: 2, rep: 3, stratum: 4, ok: 5, err: 6, answer: 7,
             score: 8, recall: 9, unsup: 10, ctx: 11, out: 12, lat: 13, cost: 14,
             packet: 15, extras: 16, query: 17, expected: 18, details: 19, selected: 20};
  const NOT = "not recorded (the trial line predates the member)";
  const NAMES = {method: "scoring method", matched: "matched",
                 evidence_required: "evidence required", evidence_found: "evidence found",
                 judged_by: "judged by"};
  const byLine = new Map(T.map((t, i) => [t[F.line], i]));
  let blocks = null;  // the packets follow this program: found when a trial opens
  const labels = [D.lost, D.gained, "same score"];
  const cmp = pick("Comparison", [["", "all comparisons"]].concat(
    D.conditions.filter(c => c !== D.baseline).map(c => [c, c + " vs " + D.baseline])), "");
  const str = pick("Stratum", [["", "all strata"]].concat(
    D.strata.map((s, i) => [String(i), s, D.strataFull[i]])), "");
  const out = pick("Outcome", [["", "all pairs"], ["discordant", "discordant pairs"],
    ["0", D.lost], ["1", D.gained], ["2", "same score"], ["failed", "a failure in the pair"]],
    "");
  const sort = pick("Sort", [["default", "discordant first"],
    ["loss", "score change, largest loss first"], ["gain", "score change, largest gain first"],
    ["task", "task"], ["tokens", "context tokens, largest cut first"],
    ["latency", "latency, largest cut first"]], "default");
  const find = el("input", {type: "search", placeholder: "task id contains",
                            "aria-label": "Task id contains"});
  const controls = el("div", {class: "dd-controls"},
                      [cmp, str, out, sort, el("label", {}, ["Task ", find])]);
  const count = el("p", {class: "dd-count", "aria-live": "polite"});
  const body = el("tbody");
  const head = ["task", "rep", "comparison", "stratum", "outcome", "task score",
                "context tokens", "latency ms", ""];
  const table = el("table", {class: "dd-table"}, [
    el("thead", {}, [el("tr", {}, head.map(h => el("th", {scope: "col", text: h})))]), body]);
  const more = el("button", {type: "button", class: "dd-more", text: "Show more"});
  root.querySelector(".dd-live").append(controls, count,
                                        el("div", {class: "tablewrap"}, [table]), more);
  let list = [], shown = PAGE;
  const open = new Set();
  const value = l => l.querySelector("select, input").value;
  function apply() {
    const c = value(cmp), s = value(str), o = value(out), q = find.value.toLowerCase();
    list = [];
    D.pairs.forEach((p, i) => {
      const b = T[p[1]], k = T[p[2]];
      if (c && D.conditions[p[0]] !== c) return;
      if (s && String(k[F.stratum]) !== s) return;
      if (o === "discordant" && p[3] === 2) return;
      if (o === "failed" && b[F.ok] && k[F.ok]) return;
      if (/^[012]$/.test(o) && String(p[3]) !== o) return;
      if (q && !D.tasks[k[F.task]].toLowerCase().includes(q)) return;
      list.push(i);
    });
    const key = value(sort);
    const delta = (i, f) => T[D.pairs[i][2]][f] - T[D.pairs[i][1]][f];
    const order = {
      default: (a, b) => D.pairs[a][3] - D.pairs[b][3] || a - b,
      loss: (a, b) => delta(a, F.score) - delta(b, F.score) || a - b,
      gain: (a, b) => delta(b, F.score) - delta(a, F.score) || a - b,
      task: (a, b) => D.tasks[T[D.pairs[a][2]][F.task]].localeCompare(
        D.tasks[T[D.pairs[b][2]][F.task]]) || a - b,
      tokens: (a, b) => delta(a, F.ctx) - delta(b, F.ctx) || a - b,
      latency: (a, b) => delta(a, F.lat) - delta(b, F.lat) || a - b,
    }[key];
    list.sort(order);
    shown = PAGE;
    draw();
  }
  function items(values, empty, titles) {
    if (!values.length) return el("span", {text: empty});
    return el("ul", {class: "dd-list"}, values.map((v, n) => el("li", titles
      ? {text: v, title: titles[n]} : {text: v})));
  }
  function add(dl, k, v) {
    dl.append(el("dt", {text: k}), el("dd", {}, [typeof v === "string"
      ? el("span", {text: v}) : v]));
  }
  function taskRows(dl, t) {
    add(dl, "query", t[F.query] >= 0 ? el("pre", {text: S[t[F.query]]}) : NOT);
    if (t[F.expected] < 0) { add(dl, "expected answer", NOT); return; }
    const [answers, terms, abstain] = D.expected[t[F.expected]];
    if (answers.length || !(terms.length || abstain)) {
      add(dl, "expected answers", items(answers.map(i => S[i]), "none"));
    }
    if (terms.length) add(dl, "expected answer terms", items(terms.map(i => S[i]), "none"));
    add(dl, "abstention expected", abstain ? "yes" : "no");
  }
  function scorerRows(dl, t) {
    if (t[F.details] < 0) add(dl, "scorer details", NOT);
    else for (const [k, v] of D.details[t[F.details]]) {
      const key = S[k], name = Object.hasOwn(NAMES, key) ? NAMES[key] : key;
      add(dl, name, typeof v === "number" ? S[v] : items(v.map(i => S[i]), "none"));
    }
    if (t[F.selected] < 0) { add(dl, "selected artifacts", NOT); return; }
    const chosen = D.selected[t[F.selected]].map(i => D.artifacts[i]);
    add(dl, "selected artifacts", items(chosen.map(a => a[0]), "none (no packet)",
                                        chosen.map(a => "BLAKE3 " + a[1])));
  }
  function sameTask(a, b) {
    return a[F.query] === b[F.query] && a[F.expected] === b[F.expected];
  }
  function trialPanel(ti, role, task) {
    const t = T[ti];
    const id = P + "trial-" + t[F.line];
    const box = el("div", {class: "dd-trial"});
    if (!document.getElementById(id)) box.id = id;
    box.append(el("h4", {}, [role + ": " + D.conditions[t[F.cond]] + " ",
      el("a", {href: "#" + id, text: "trial " + t[F.line]})]));
    const dl = el("dl", {});
    if (task) taskRows(dl, t);
    const rows = [["outcome", t[F.ok] ? "success" : "error"]];
    if (t[F.err] >= 0) rows.push(["failure reason", S[t[F.err]]]);
    rows.push(["task score", num(t[F.score])], ["evidence recall", num(t[F.recall])],
              ["unsupported-claim rate", num(t[F.unsup])],
              ["context tokens", num(t[F.ctx])], ["output tokens", num(t[F.out])],
              ["latency ms", num(t[F.lat])], ["billed cost USD", num(t[F.cost])]);
    for (const [k, v] of rows) dl.append(el("dt", {text: k}), el("dd", {text: v}));
    dl.append(el("dt", {text: "answer"}), el("dd", {}, [t[F.answer] >= 0
      ? el("pre", {text: S[t[F.answer]]}) : el("span", {text: "no answer recorded"})]));
    scorerRows(dl, t);
    if (t[F.extras] >= 0) {
      for (const [k, v] of JSON.parse(S[t[F.extras]])) {
        dl.append(el("dt", {text: k}), el("dd", {}, [el("pre", {text: v})]));
      }
    }
    const [sha, block, kept] = D.packets[t[F.packet]];
    let packet;
    let node = block >= 0 && blocks ? blocks[block] : undefined;
    if (block >= 0 && !node) {
      blocks = root.querySelectorAll("script.dd-pk");
      node = blocks[block];
    }
    if (node) {
      const text = JSON.parse(node.textContent);
      packet = el("details", {}, [el("summary", {text: "packet sent (" + text.length +
        " characters, sha256 " + sha.slice(0, 12) + "\u2026)"}), el("pre", {text: text})]);
    } else if (block >= 0) {  // opened while the page is still being read
      packet = el("span", {text: "packet still loading: close and open the pair again"});
    } else if (kept) {
      packet = el("a", {href: D.packetBase + sha + ".txt",
                        text: "packet file " + sha.slice(0, 12) + "\u2026"});
    } else {
      packet = el("span", {text: "packet not kept (sha256 " + sha + ")"});
    }
    dl.append(el("dt", {text: "packet"}), el("dd", {}, [packet]));
    box.append(dl);
    return box;
  }
  function detail(i) {
    const p = D.pairs[i];
    // the task's query and expected answer once, when both trials record the same
    const same = sameTask(T[p[1]], T[p[2]]);
    let task = null;
    if (same) { task = el("dl", {class: "dd-task"}); taskRows(task, T[p[2]]); }
    return el("tr", {class: "dd-detail"}, [el("td", {colspan: String(head.length)}, [task,
      el("div", {class: "dd-pair"}, [trialPanel(p[1], "baseline", !same),
                                     trialPanel(p[2], "candidate", !same)])])]);
  }
  function row(i) {
    const p = D.pairs[i], b = T[p[1]], k = T[p[2]];
    const arrow = f => num(b[f]) + " \u2192 " + num(k[f]);
    const button = el("button", {type: "button", class: "dd-open",
      "aria-expanded": String(open.has(i)), text: open.has(i) ? "close" : "open"});
    button.addEventListener("click", () => {
      if (open.has(i)) open.delete(i); else open.add(i);
      draw();
    });
    const stratum = el("td", {text: D.strata[k[F.stratum]],
                              title: D.strataFull[k[F.stratum]]});
    const cells = [
      el("td", {text: D.tasks[k[F.task]]}), el("td", {class: "n", text: String(k[F.rep])}),
      el("td", {text: D.conditions[p[0]]}), stratum,
      el("td", {text: labels[p[3]] + (b[F.ok] && k[F.ok] ? "" : " (failure)")}),
      el("td", {class: "n", text: arrow(F.score)}), el("td", {class: "n", text: arrow(F.ctx)}),
      el("td", {class: "n", text: arrow(F.lat)}), el("td", {}, [button])];
    cells.forEach((c, n) => { if (head[n]) c.setAttribute("data-label", head[n]); });
    return el("tr", {class: "dd-row o" + p[3]}, cells);
  }
  function draw() {
    body.replaceChildren();
    for (const i of list.slice(0, shown)) {
      body.append(row(i));
      if (open.has(i)) body.append(detail(i));
    }
    count.textContent = "Showing " + Math.min(shown, list.length) + " of " + list.length +
      " pairs (" + D.pairs.length + " in the run).";
    more.hidden = shown >= list.length;
  }
  more.addEventListener("click", () => { shown += PAGE; draw(); });
  for (const l of [cmp, str, out, sort]) l.querySelector("select").addEventListener(
    "change", apply);
  find.addEventListener("input", apply);
  function follow() {
    const m = new RegExp("^#" + P + "trial-(\\d+)$").exec(location.hash);
    if (!m || !byLine.has(Number(m[1]))) return;
    const ti = byLine.get(Number(m[1]));
    let pi = D.pairs.findIndex(p => p[2] === ti);
    if (pi < 0) pi = D.pairs.findIndex(p => p[1] === ti);
    if (pi < 0) return;
    cmp.querySelector("select").value = D.conditions[D.pairs[pi][0]];
    str.querySelector("select").value = "";
    out.querySelector("select").value = "";
    find.value = "";
    open.add(pi);
    apply();
    shown = Math.max(PAGE, list.indexOf(pi) + 1);
    draw();
    const target = document.getElementById(P + "trial-" + m[1]);
    if (target) { target.scrollIntoView(); target.classList.add("dd-target"); }
  }
  window.addEventListener("hashchange", follow);
  apply();
  // a deep link opens its trial once the page (its packets) has been read
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", follow);
  } else follow();
  root.setAttribute("data-ready", String(performance.now()));
}
// Each drill-down holds this program after its data: start those not started yet.
for (const root of document.querySelectorAll(".drill:not([data-ready])")) Drill(root);
})();
"""

SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()
                                           ).decode("ascii")

DRILL_CSS = """
.dd-controls{display:flex;flex-wrap:wrap;gap:.4em 1em;margin:.5em 0}
.dd-controls select,.dd-controls input{font:inherit;max-width:100%}
.dd-controls label{max-width:100%}
.dd-table td{max-width:28em;overflow-wrap:anywhere}.dd-row.o0 td:nth-child(5){color:var(--fail);
font-weight:700}.dd-row.o1 td:nth-child(5){color:var(--pass);font-weight:600}
.dd-pair{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:8px 20px}
.dd-trial dl{display:grid;grid-template-columns:fit-content(14em) minmax(0,1fr);gap:2px 10px;
margin:.3em 0}
.dd-trial dt,.dd-task dt{color:var(--muted);overflow-wrap:anywhere}
.dd-trial dd,.dd-task dd{margin:0;min-width:0}
.dd-task{display:grid;grid-template-columns:fit-content(14em) minmax(0,1fr);gap:2px 10px;
margin:.3em 0 .6em}
.dd-list{margin:0;padding-left:1.2em;overflow-wrap:anywhere}
.dd-trial pre,.dd-task pre,.dd-static pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:0;
background:var(--panel);padding:.3em .5em;max-height:28em;overflow-y:auto;font-size:.85em}
.dd-target{outline:3px solid var(--hl);outline-offset:2px}
.dd-more{margin:.4em 0}.dd-open{white-space:nowrap}
@media (max-width:700px){.dd-pair{display:block}.dd-table thead{display:none}
.dd-table,.dd-table tbody,.dd-table tr,.dd-table td{display:block;max-width:none}
.dd-table tr.dd-row{border-top:2px solid var(--rule);padding:.3em 0}
.dd-table td{border:none;padding:.05em .3em}.dd-table td.n{text-align:left}
.dd-table td[data-label]::before{content:attr(data-label) ": ";color:var(--muted)}}
"""
