"""Generate the golden public-eval inputs (run once; the outputs come from pytest)."""
import json, random

def dump(path, rows):
    with open(path, "w") as fh:
        for r in rows:
            fh.write(json.dumps(r, separators=(",", ":")) + "\n")

# basic: 40 single-run instances, full metrics and token breakdown; the treatment saves
r = random.Random(7)
base, treat = [], []
for i in range(40):
    iid = f"django__django-{11000 + i}"
    res_b = r.random() < 0.7
    res_t = res_b or r.random() < 0.1  # recoveries only: a supported case
    for arm, res, scale in ((base, res_b, 1.0), (treat, res_t, 0.6)):
        inp = int(r.randint(20000, 60000) * scale)
        cached = int(inp * 0.2)
        out = r.randint(800, 3000)
        reasoning = r.randint(0, 2000)
        total = inp + cached + out + reasoning
        arm.append({"instance_id": iid, "resolved": res, "tokens": total,
                    "usd": round(total * 0.000012, 6), "latency_ms": r.randint(60000, 240000) * scale,
                    "tool_calls": int(r.randint(10, 40) * scale),
                    "input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out,
                    "reasoning_tokens": reasoning, "total_tokens": total})
r.shuffle(treat)  # line order must not matter
dump("public-eval-basic/baseline.jsonl", base)
dump("public-eval-basic/treatment.jsonl", treat)

# repeated: 12 instances x 3 runs; latency missing in some rows; usd_measured false in one row
r = random.Random(11)
base, treat = [], []
for i in range(12):
    for run in range(3):
        iid = f"task-{i:02d}"
        p = 0.5 + 0.04 * i
        rb = r.random() < p
        rt = r.random() < p - 0.03
        b = {"instance_id": iid, "run": run, "resolved": rb, "tokens": r.randint(5000, 9000),
             "usd": 0.05, "tool_calls": r.randint(3, 9), "governance_tokens": 0,
             "reviewed_stops": 0, "false_stops": 0}
        t = {"instance_id": iid, "run": run, "resolved": rt, "tokens": r.randint(3000, 8000),
             "usd": 0.03, "tool_calls": r.randint(3, 9), "governance_tokens": r.randint(50, 200),
             "reviewed_stops": r.randint(0, 2), "false_stops": 0, "repeated_calls": r.randint(0, 3)}
        if not (i == 3 and run == 1):
            b["latency_ms"] = 1000 + 10 * i
            t["latency_ms"] = 900 + 10 * i
        if i == 5 and run == 2:
            t["usd_measured"] = False
        base.append(b); treat.append(t)
dump("public-eval-repeated/baseline.jsonl", base)
dump("public-eval-repeated/treatment.jsonl", treat)

# within-margin: 100 instances, 4 regressions and 4 recoveries: the point estimate (0 pp)
# is inside a 1 pp margin, the interval's lower bound is not
base, treat = [], []
for i in range(100):
    rb = i < 60 or 90 <= i < 94
    rt = i < 60 or 94 <= i < 98
    base.append({"instance_id": f"i{i:03d}", "resolved": rb, "tokens": 10000 + 37 * i})
    treat.append({"instance_id": f"i{i:03d}", "resolved": rt, "tokens": 6000 + 29 * i})
dump("public-eval-within-margin/baseline.jsonl", base)
dump("public-eval-within-margin/treatment.jsonl", treat)
