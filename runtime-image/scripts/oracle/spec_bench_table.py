"""The verify-step cost table of device-spec-bench.sh (issue 34, Performance item 1).

Reads bench-model --json files of --verify-ks runs, one with verify graphs on (TENSORLANE_SPEC_GRAPHS=on) and one with
them off (eager verify steps), and prints per k (rows) and batch (columns) the cost of a verify step relative to the
plain decode step of the same run (wall-clock medians; the GPU-event ratio beside it), the eager/graph wall ratio (the
graphs' gain), and a last line `spec-bench: PASS|FAIL`: PASS when, with graphs on, k = TARGET_K at batch 1 costs at
most TARGET x a decode step (wall) and the on run's verify steps did replay graphs.

usage: spec_bench_table.py --on ON.json [--off OFF.json] [--target 1.3] [--target-k 4]
Exit status: 0 on PASS, 1 on FAIL.
"""
import argparse
import json
import os
import sys


def load(path):
    if not path or not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def rows(run):
    """{(batch, k): row} of a run's verify table (k = 0: the decode step)."""
    return {(r["batch"], r["k"]): r for r in (run or {}).get("verify", [])}


def cell(r):
    if r is None:
        return "%15s" % "-"
    return "%6.3fx (%5.3f)" % (r["x_decode_wall"], r["x_decode_gpu"])


def table(on, off, out):
    ron, roff = rows(on), rows(off)
    batches = sorted({b for b, _ in list(ron) + list(roff)})
    ks = sorted({k for _, k in list(ron) + list(roff)})
    for name, rs in (("graphs on", ron), ("graphs off (eager verify steps)", roff)):
        out.append("verify step / decode step, wall median (gpu events), %s:" % name)
        if not rs:
            out.append("  (no run)")
            continue
        out.append("  k  " + "".join("%17s" % ("batch %d" % b) for b in batches) + "   replayed (of timed steps)")
        for k in ks:
            line = "%3d  " % k + "".join("%17s" % cell(rs.get((b, k))) for b in batches)
            rep = ["%d/%d" % (rs[(b, k)]["graph_replayed_steps"], rs[(b, k)]["steps"]) for b in batches if (b, k) in rs]
            out.append(line + "   " + " ".join(rep))
        out.append("  decode step (k = 0) wall ms: " + ", ".join(
            "b%d %.3f" % (b, rs[(b, 0)]["wall_ms_median"]) for b in batches if (b, 0) in rs))
    if ron and roff:
        out.append("graph gain: eager verify wall ms / graph verify wall ms")
        out.append("  k  " + "".join("%10s" % ("b%d" % b) for b in batches))
        for k in ks:
            if k == 0:
                continue
            cells = []
            for b in batches:
                a, g = roff.get((b, k)), ron.get((b, k))
                cells.append("%9.3fx" % (a["wall_ms_median"] / g["wall_ms_median"]) if a and g else "%10s" % "-")
            out.append("%3d  " % k + "".join(cells))


def verdict(on, target, target_k):
    """(ok, reason) for the on run."""
    r = rows(on).get((1, target_k))
    if r is None:
        return False, "no k=%d batch-1 row in the graphs-on run" % target_k
    if r["graph_replayed_steps"] < r["steps"]:
        return False, "k=%d batch 1: only %d of %d timed verify steps replayed a graph" % (
            target_k, r["graph_replayed_steps"], r["steps"])
    ok = r["x_decode_wall"] <= target
    return ok, "k=%d at batch 1 costs %.3fx a decode step (wall; gpu %.3fx), target <= %.2fx" % (
        target_k, r["x_decode_wall"], r["x_decode_gpu"], target)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--on", required=True)
    ap.add_argument("--off")
    ap.add_argument("--target", type=float, default=1.3)
    ap.add_argument("--target-k", type=int, default=4)
    args = ap.parse_args()
    on, off = load(args.on), load(args.off)
    out = []
    if on:
        cfg = on.get("config") or {}
        out.append("model: %s, layers %s, hidden %s; context %s" % (
            on.get("model", "?"), cfg.get("layers", "?"), cfg.get("hidden", "?"), on.get("context", "?")))
    table(on, off, out)
    ok, reason = verdict(on, args.target, args.target_k) if on else (False, "no graphs-on result (%s)" % args.on)
    out.append("spec-bench: %s (%s)" % ("PASS" if ok else "FAIL", reason))
    print("\n".join(out))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
