#!/usr/bin/env python3
"""Which logits failures a routing near-tie explains (MoE models; issue #31: "ties explain the rest; report them").

compare.py fails a logits row when one position's cosine is below the bar. In a Mixture of Experts a position whose
router's k-th and (k+1)-th probabilities nearly tie may take the other expert in the engine (its activations differ
from the reference's in the last bits), and that position's logits then move by more than rounding. This reads
compare.py's results (each prompt's positions below the bar, "below") and moe_routing.py's dumps of the same model
(each (prompt, position, layer) whose experts differ from transformers', with the reference's probability gap) and
says, per failing logits row, whether EVERY position below the bar has a routing disagreement at that very prompt and
position with a gap under --max-gap: in the row's own run (a row against the reference), or in its run or TP 1's (a
TP N against TP 1 row: one of the two took the other expert at a near-tie). A row is "explained" only then; any other
failure stays a failure.

  routing_ties.py --results results.json --routing MODEL@RUN=routing.json [...] [--max-gap 0.005] [--out ties.json]

RUN is compare.py's run name (tp1, tp2, ...); MODEL=routing.json means MODEL@tp1. Exit 0 when every failing row is a
logits row (against the reference, or TP N against TP 1) that is explained and whose top-1 still passes, 1 otherwise
(any other failing row, or a failing row without the routing dumps it needs).
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--routing", action="append", default=[],
                    help="MODEL@RUN=moe_routing.py JSON (MODEL=...: that model at TP 1)")
    ap.add_argument("--max-gap", type=float, default=0.005)
    ap.add_argument("--out")
    a = ap.parse_args()
    res = json.load(open(a.results))
    top1_min = res["thresholds"]["top1_min_pct"]
    dumps = {}
    for spec in a.routing:
        key, path = spec.split("=", 1)
        model, run = key.split("@", 1) if "@" in key else (key, "tp1")
        try:
            dumps[(model, run)] = json.load(open(path))
        except (OSError, ValueError) as e:
            print("routing %s: unreadable (%s)" % (key, e))
    ok = True
    rows = []
    for row in res["rows"]:
        if row["status"] == "PASS":
            continue
        if row["check"] not in ("logits/ref", "logits/tp1"):
            ok = False
            print("%-18s %-5s %s: FAIL, not a logits row against the reference (%s)" % (
                row["model"], row["run"], row["check"], row["reason"]))
            continue
        m = row["metrics"]
        model, run = row["model"], row["run"]
        below = [(p["index"], pos) for p in m.get("per_prompt", []) for pos in p.get("below", [])]
        runs = [run] if row["check"] == "logits/ref" else [run, "tp1"]
        have = [dumps[(model, r)] for r in runs if (model, r) in dumps]
        dump = have if len(have) == len(runs) else None
        ties = {}
        for d in dump or []:
            for mm in d.get("mismatches", []):
                if mm["ref_gap"] < a.max_gap:
                    ties.setdefault((mm["prompt"], mm["pos"]), []).append(mm)
        unexplained = [b for b in below if b not in ties]
        explained = (dump is not None and below and not unexplained and m.get("top1_pct", 0) >= top1_min
                     and row["reason"].startswith("cos_min") and ";" not in row["reason"])
        ok &= bool(explained)
        detail = ", ".join("prompt %d pos %d: layer %s gap %.2g" % (pi, po, "/".join(str(t["layer"]) for t in ties[(pi, po)]),
                                                                    min(t["ref_gap"] for t in ties[(pi, po)]))
                           for pi, po in below if (pi, po) in ties)
        line = "%-18s %-5s %-10s %s: %d position(s) below the bar; %s%s" % (
            model, run, row["check"], "EXPLAINED by routing near-ties" if explained else "NOT explained",
            len(below), detail or "no near-tie at them",
            "" if dump else " (no routing dump of %s for this model)" % " and ".join(runs))
        if unexplained:
            line += "; unexplained: %s" % unexplained
        print(line)
        rows.append(dict(model=model, run=run, check=row["check"], explained=bool(explained), below=below,
                         unexplained=unexplained))
    if a.out:
        json.dump(dict(max_gap=a.max_gap, rows=rows, all_explained=ok), open(a.out, "w"), indent=1)
    print("routing ties: %s (%d failing logits row(s), max gap %.3g)" % ("ALL EXPLAINED" if ok else "NOT ALL EXPLAINED",
                                                                        len(rows), a.max_gap))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
