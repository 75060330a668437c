"""HTML pages: the JSON's numbers on the page, loud errors on missing fields, no network."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxbench.cli.main import cli
from ctxbench.core import PointerError
from ctxbench.render.html import render_html, write_html

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
CEF = GOLDEN / "cef-two-stratum" / "report.json"
PE = GOLDEN / "public-eval-basic" / "report.json"
ECEB = GOLDEN / "eceb-seed" / "report.json"
CEF_NO_CLAIM = GOLDEN / "cef-no-claim" / "report.json"


def load(path: Path) -> dict[str, Any]:
    value = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


def render_doc(tmp_path: Path, doc: dict[str, Any], name: str = "report.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return render_html([path], tmp_path / "page.html")


def text_of(page: str) -> str:
    """The page's visible text, roughly: tags dropped, entities for quotes undone."""
    body = re.sub(r"<style>.*?</style>", "", page, flags=re.S)
    text = re.sub(r"<[^>]+>", " ", body)
    return text.replace("&#x27;", "'").replace("&quot;", '"').replace("&amp;", "&")


def test_cef_page_shows_headline_claims_and_every_hypothesis(tmp_path: Path) -> None:
    report = load(CEF)
    page = render_html([CEF], tmp_path / "p.html")
    text = text_of(page)
    assert report["headlines"][0] in text
    comp = report["strata"][1]["comparisons"][0]
    h1 = comp["hypotheses"][0]
    assert not h1["passed"]
    assert f"{comp['task_score_delta']['low']:+.4f}" in text
    assert f"margin {h1['threshold']:+.4f}" in text
    # strata come before the aggregate, and each stratum has its frontier and forest plots
    first, agg = page.index('id="stratum-1"'), page.index('id="aggregate"')
    assert page.index('id="stratum-2"') < agg and first < agg
    assert page.count("six objectives: mean context tokens against task score") == 3
    assert "polyline class=\"frontier" not in page
    assert page.count("H1 task quality:") == 3 and page.count("H4 context reduction:") == 3
    assert "ops-logs-000029" in text and "log archive for the task was corrupted" in text
    assert "FAIL" in text and "NO CLAIM" in text


def test_public_eval_page_shows_delta_interval_margin_and_savings(tmp_path: Path) -> None:
    report = load(PE)
    text = text_of(render_html([PE], tmp_path / "p.html"))
    q = report["quality"]
    assert f"{q['resolved_delta_pp']:+.2f} pp" in text
    assert f"{q['gate_ci_pp'][0]:.2f} to {q['gate_ci_pp'][1]:.2f} pp" in text
    assert (f"Gating 95% interval {q['gate_ci_pp'][0]:.2f} to {q['gate_ci_pp'][1]:.2f} pp "
            f"({q['gate_method']})") in " ".join(text.split())
    assert f"margin -{q['margin_pp']:g} pp" in text
    extra = q["not_gating"]
    flat = " ".join(text.split())
    assert (f"Not gating: 95% bootstrap interval {extra['bootstrap_ci_pp'][0]:.2f} to "
            f"{extra['bootstrap_ci_pp'][1]:.2f} pp ({extra['bootstrap_method']})") in flat
    low, high = extra["newcombe_hybrid_score_ci_pp"]
    assert (f"Not gating: 95% newcombe interval {low:.2f} to {high:.2f} pp (newcombe hybrid "
            "score)") in flat
    assert "No treatment row reviewed a stop" in text
    assert "savings are agent totals" in text
    tokens = report["savings"]["tokens"]
    assert f"{tokens['percent_saved']:.1f}%" in text
    assert f"{tokens['ci'][0]:.1f} to {tokens['ci'][1]:.1f}" in text
    assert (f"{tokens['ci'][0]:.1f} to {tokens['ci'][1]:.1f} {tokens['gate_lower_bound']:.1f}% "
            f"{tokens['percentile_ci_not_gating'][0]:.1f} to") in " ".join(text.split())
    assert "lower end of the symmetric 97.5% studentized bootstrap interval" in text
    assert f"Regressions (baseline resolved, treatment not) {q['regressions']}" in \
        " ".join(text.split())
    assert "Status: supported" in " ".join(text.split())
    from ctxbench.core.node import Node
    from ctxbench.protocols.public_eval import PublicEvalReport
    from ctxbench.render.public_eval import claim_sentence

    model = PublicEvalReport.from_json(Node(str(PE), "", report))
    assert claim_sentence(model) in text  # the same claim sentence as the Markdown's


def test_public_eval_unknown_savings_member_is_a_located_error(tmp_path: Path) -> None:
    """The schema closes ``savings``: a member it does not declare is named, not shown."""
    report = load(PE)
    report["savings"]["tokens_net"] = {**report["savings"]["tokens"], "percent_saved": 12.3456}
    with pytest.raises(PointerError) as info:
        render_doc(tmp_path, report)
    assert str(info.value) == (f"{tmp_path / 'report.json'}: /savings/tokens_net: expected "
                               "no such member (ctxbench.public-eval-report.v1 does not "
                               "define it), got an object")


def test_public_eval_page_labels_net_headline_gross_false_stops_and_design_effect(
        tmp_path: Path) -> None:
    src = GOLDEN / "public-eval-repeated" / "report.json"
    report = load(src)
    text = " ".join(text_of(render_html([src], tmp_path / "p.html")).split())
    q, savings = report["quality"], report["savings"]
    assert f"Status: {report['status']} \u2014 non-inferiority not shown" in text
    assert f"instance clustering (descriptive, not gating) {q['design_effect']:.3f}" in text
    net, gross = savings["tokens"], savings["gross_tokens"]
    assert (f"Tokens net: agent + overhead (headline) {net['baseline_total']:,} "
            f"{net['treatment_total']:,} {net['percent_saved']:.1f}% {net['ci'][0]:.1f} to "
            f"{net['ci'][1]:.1f}") in text
    assert (f"Tokens agent only (gross) {gross['baseline_total']:,} "
            f"{gross['treatment_total']:,} {gross['percent_saved']:.1f}%") in text
    assert "Headline savings are net" in text
    # the gross row sits right after its net headline row
    rows = text.index("Tokens net: agent"), text.index("Tokens agent only (gross)")
    assert rows[0] < rows[1] < text.index("Tool calls agent only", rows[0])
    stops = report["false_stops"]
    assert (f"Reviewed stops (treatment) {stops['reviewed_stops']} Judged false "
            f"{stops['false_stops']}") in text
    assert f"{stops['ci'][1] * 100:.1f}%" in text
    assert "Exceeds the maximum no" in text


@pytest.mark.parametrize(("status", "shown"), [
    ("quality_loss", "a loss beyond the margin is shown"),
    ("false_stop_risk", "the share of reviewed stops judged false exceeds the maximum rate"),
    ("no_savings", "the token-savings gate did not pass"),
    ("not_evaluable", "too few instances, or an arm resolved nothing"),
])
def test_public_eval_page_explains_every_status(status: str, shown: str,
                                                tmp_path: Path) -> None:
    report = load(PE)
    report["status"] = status
    text = " ".join(text_of(render_doc(tmp_path, report)).split())
    assert f"Status: {status} \u2014 {shown}" in text


def test_eceb_page_shows_grid_bstar_violations_corpus_and_claim(tmp_path: Path) -> None:
    report = load(ECEB)
    page = render_html([ECEB], tmp_path / "p.html")
    text = text_of(page)
    assert report["corpus"]["root"] in text
    assert report["claim_class"]["reported"] in text
    task = report["tasks"][1]
    row = f"{task['task_id']}: B* {task['minimum_viable_budget']};"
    assert row in page  # the grid's text alternative names B* per task
    assert page.count('class="cellbox bstar"') == sum(
        1 for t in report["tasks"] for lad in (t, t["naive_top_k"] or {})
        if lad.get("minimum_viable_budget") is not None)
    violations = [f for t in report["tasks"]
                  for f in t["failures"] + (t["naive_top_k"] or {"failures": []})["failures"]
                  if f["gate"] in ("policy", "provenance")]
    assert f"{len(violations)} policy and provenance violations" in text
    with_artifact = next(f for f in violations if f["artifact_ids"])
    assert with_artifact["artifact_ids"][0] in text
    assert "89.10%" in text  # mean_token_savings_bps 8910, read as text


@pytest.mark.parametrize("path", [CEF, PE, ECEB])
def test_pages_load_nothing_and_describe_every_plot(path: Path, tmp_path: Path) -> None:
    page = render_html([path], tmp_path / "p.html")
    assert "<script" not in page and " src=" not in page and "url(" not in page
    assert "@import" not in page and "@font-face" not in page
    urls = set(re.findall(r"https?://[^\"' )]+", page))
    assert urls == {"http://www.w3.org/2000/svg"}  # the SVG namespace name, never fetched
    assert "default-src 'none'" in page
    plots = page.count('<svg class="plot"')
    assert plots > 0
    assert page.count('role="img" aria-labelledby=') == plots
    assert len(re.findall(r"<desc id=\"d\d+\">[^<]{10,}</desc>", page)) == plots
    assert "prefers-color-scheme:dark" in page and "@media print" in page


def test_unknown_cef_fields_are_refused_and_text_is_shown_as_written(tmp_path: Path) -> None:
    # The CEF schema closes every object (additionalProperties: false); a member it does
    # not name would be dropped on reading, so the typed model refuses it, located.
    report = load(CEF)
    grown = copy.deepcopy(report)
    grown["strata"][0]["comparisons"][0]["extra_interval"] = {"estimate": 1}
    with pytest.raises(PointerError, match=r"b.json: /strata/0/comparisons/0/extra_interval: "
                                           "expected no such member"):
        render_doc(tmp_path, grown, "b.json")
    grown = copy.deepcopy(report)
    # methodology text is shown as written, so a new method statement appears by itself
    grown["methodology"]["gate_method"] = "a new gate statement"
    assert "gate method" in text_of(render_doc(tmp_path, grown, "c.json"))
    assert "a new gate statement" in text_of(render_doc(tmp_path, grown, "c.json"))


@pytest.mark.parametrize(("path", "edit", "message"), [
    (CEF, lambda r: r["strata"][0].pop("label"),
     "report.json: /strata/0/label: required field is missing"),
    (CEF, lambda r: r["headlines"].append(3),
     "report.json: /headlines/1: expected a string, got the integer 3"),
    (PE, lambda r: r["quality"].update(margin_pp="1"),
     'report.json: /quality/margin_pp: expected a number, got the string "1"'),
    (ECEB, lambda r: r["tasks"][0]["budgets"][0].update(passed=None),
     "report.json: /tasks/0/budgets/0/passed: expected a boolean, got null"),
    (ECEB, lambda r: r.update(schema="other"),
     'report.json: /schema_version: expected a CEF, public-eval or ECEB report, got the '
     'string "other"'),
])
def test_missing_or_mistyped_fields_fail_loudly(path: Path, edit: Any, message: str,
                                                 tmp_path: Path) -> None:
    report = load(path)
    edit(report)
    with pytest.raises(PointerError) as info:
        render_doc(tmp_path, report)
    assert str(info.value) == f"{tmp_path / message}"


def test_notes_are_shown_first(tmp_path: Path) -> None:
    report = {**load(ECEB), "notes": ["conformance fixture: nothing was measured"]}
    page = render_doc(tmp_path, report)
    assert page.index("conformance fixture: nothing was measured") < page.index("<main>")


def test_several_reports_give_a_side_by_side_page(tmp_path: Path) -> None:
    page = render_html([CEF, PE, ECEB], tmp_path / "p.html")
    text = " ".join(text_of(page).split())
    assert "3 reports side by side" in text
    assert "public-eval status \u2014 supported \u2014" in text
    assert "ECEB tasks qualified" in text and "12 / 13" in text
    for k in (1, 2, 3):
        assert f'id="r{k}-top"' in page


def test_cli_writes_the_page_and_reports_bad_input_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    result = CliRunner().invoke(cli, ["report", str(PE), "--html", str(out)],
                                standalone_mode=False)
    assert result.exit_code == 0 and out.read_text(encoding="utf-8").startswith("<!DOCTYPE")
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": "x"}', encoding="utf-8")
    from ctxbench.cli.main import main

    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(bad), "--html", str(out)])
    assert exit_info.value.code == 2


def seed_run(tmp_path: Path) -> Path:
    """A small run of ctxbench's own: the enterprise seed, the compiler's budget ladder."""
    from ctxbench.runner.experiment import run_experiment

    (tmp_path / "exp.toml").write_text(
        'name = "seed"\nseed = 3\nreplicates = 1\noutput = "out"\n'
        '[workload]\nsource = "builtin:enterprise-seed"\nlimit = 2\n'
        '[model]\nprovider = "fixture"\n'
        '[[conditions]]\nstrategy = "full_permitted_context"\n'
        '[[conditions]]\nstrategy = "compiled"\nbudgets = "ladder"\n', encoding="utf-8")
    run_experiment(tmp_path / "exp.toml")
    return tmp_path / "out"


def test_run_directory_page_shows_manifest_and_links_raw_files(tmp_path: Path) -> None:
    run = seed_run(tmp_path)
    manifest = load(run / "manifest.json")
    out = write_html([run], tmp_path / "site" / "run.html")
    page = out.read_text(encoding="utf-8")
    text = " ".join(text_of(page).split())
    for shown in (manifest["provider"]["model"], manifest["tokenizer"],
                  manifest["pricing"]["kind"], str(manifest["seed"]),
                  manifest["ctxbench_version"], manifest["run_id"]):
        assert shown in text
    for name in ("trials.jsonl", "manifest.json", "cef-report.json", "eceb-report.json"):
        assert f'href="../out/{name}"' in page
        assert (out.parent / "../out" / name).exists()
    assert "CEF report: Headline and claims" in text and "ECEB report: Task x budget" in text


def test_public_eval_page_lists_regressions_and_recoveries_by_instance(
        tmp_path: Path) -> None:
    src = GOLDEN / "public-eval-repeated" / "report.json"
    page = render_html([src], tmp_path / "p.html")
    text = " ".join(text_of(page).split())
    assert ("Regressions (baseline resolved, treatment not): all 11 cells listed "
            "instance runs task-00 0, 1, 2 "
            "task-01 2 task-02 2 task-04 0, 1, 2 task-08 1, 2 task-11 1") in text
    assert "Recoveries (treatment resolved, baseline not): all 6 cells listed" in text
    single = text_of(render_html([PE], tmp_path / "q.html"))
    flat = " ".join(single.split())
    assert "Regressions (baseline resolved, treatment not): none" in flat
    assert ("Recoveries (treatment resolved, baseline not): all 2 instances listed "
            "instance django__django-11006 "
            "django__django-11025") in flat


def test_a_bounded_listing_is_folded_and_says_it_was_cut(tmp_path: Path) -> None:
    report = load(PE)
    report["quality"]["regressed_cells"] = {
        "total": 1500, "limit": 1000,
        "listed": [{"instance_id": f"<i{k:04d}>", "run": 0} for k in range(1000)]}
    page = render_doc(tmp_path, report)
    assert ("<details><summary>Regressions (baseline resolved, treatment not): the first "
            "1,000 of 1,500 instances (the report lists at most 1,000)") in page
    assert page.count("<code>&lt;i0") == 1000 and "<i0001>" not in page


def test_a_run_page_opens_on_its_verdict_and_shows_short_stratum_labels(
        tmp_path: Path) -> None:
    run = seed_run(tmp_path)
    report = load(run / "cef-report.json")
    page = write_html([run], tmp_path / "run.html").read_text(encoding="utf-8")
    # the verdict comes before the run's manifest and file list
    assert page.index('class="headline"') < page.index('id="run"')
    label = report["strata"][0]["label"]
    root = report["strata"][0]["key"]["workload_version"].split(":")[-1]
    assert len(root) == 64 and root in label
    short = f"{root[:12]}\u2026"
    heading = re.search(r'<h2 id="cef-stratum-1-h" title="([^"]*)">([^<]*)</h2>', page)
    assert heading is not None
    assert short in heading.group(2) and root not in heading.group(2)
    assert len(heading.group(2)) <= len(heading.group(1)) - 51 and label in heading.group(1)
    # the JSON keeps the full label
    assert load(run / "cef-report.json")["strata"][0]["label"] == label


def test_budgets_are_listed_in_numeric_order_in_every_plot_and_table(tmp_path: Path) -> None:
    text = CEF_NO_CLAIM.read_text(encoding="utf-8")
    text = text.replace('"native_compaction"', '"compiled@1024"').replace(
        '"entroly"', '"compiled@128"')
    path = tmp_path / "report.json"
    path.write_text(text, encoding="utf-8")
    page = render_html([path], tmp_path / "page.html")
    rows = re.findall(r'class="rowlabel"[^>]*>([^<]*)</text>', page)
    # one row per condition in each forest plot, the smaller budget first
    assert len(rows) >= 2 and rows == ["compiled@128", "compiled@1024"] * (len(rows) // 2)
    points = page[page.index("<caption>Operating points"):]
    cells = re.findall(r"<tr><td>(raw|compiled@\d+)</td>", points)
    assert cells[:3] == ["raw", "compiled@128", "compiled@1024"]
    claims = page[page.index("<caption>Claims over all strata"):]
    assert re.findall(r"<tr><td>(compiled@\d+)</td>", claims)[:2] == [
        "compiled@128", "compiled@1024"]


def test_notes_stay_with_the_input_they_belong_to(tmp_path: Path) -> None:
    noted = tmp_path / "noted.json"
    noted.write_text(json.dumps({**load(ECEB), "notes": ["only this input's note"]}),
                     encoding="utf-8")
    page = render_html([CEF, noted], tmp_path / "p.html")
    note = "only this input&#x27;s note"
    assert page.count(note) == 1
    assert page.index("<main>") < page.index('id="r2-top"') < page.index(note)
    assert 'class="note"' not in page[:page.index("<main>")]


def test_every_page_kind_opens_on_its_verdict(tmp_path: Path) -> None:
    for paths in ([CEF], [PE], [ECEB], [CEF, PE, ECEB]):
        page = render_html(paths, tmp_path / "p.html")
        first = page.index("<section")
        assert page.index('class="headline"', first) < page.index("<table", first)
    multi = render_html([CEF, PE, ECEB], tmp_path / "p.html")
    head = multi[:multi.index("<table", multi.index("<section"))]
    assert head.count('class="headline"') == 3
    assert "public-eval status: supported." in head and "ECEB: Claim class" in head


def test_a_hostile_stratum_label_is_escaped_in_its_heading_and_tooltip(tmp_path: Path) -> None:
    report = load(CEF)
    hostile = '"><script>alert(1)</script>@' + "ab" * 32
    report["strata"][0]["label"] = hostile
    page = render_doc(tmp_path, report)
    assert "<script" not in page and "alert(1)" in page
    assert 'title="Stratum: &quot;&gt;&lt;script&gt;' in page
    assert "@abababababab\u2026" in page
