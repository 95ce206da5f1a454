#!/usr/bin/env python3
"""The fused MoE decode kernels' benchmark (issue #31, TENSORLANE_MOE_FUSED_DECODE): bench-model runs of the same
checkpoint with the switch off and on, side by side per batch (GPU ms of a graph replay, median), and each run's batch-1
step against the active-parameter roofline (moe_bench_summary.active_bytes / the read bandwidth bench_transformers.py
--parts bw measured in the same call).

usage: moe_fused_summary.py --model DIR --bw BW.json --run off=OFF.json --run on=ON.json [--run ...] [--out SUMMARY.json]
Prints the table, one line per run "batch 1 <label>: gpu X ms, roofline Y ms: Z%" and each later run's batch-1 speed
against the first's; exit 0 when every run has a
batch-1 number (the 60% target is reported, not gating: the kernels' correctness is checked elsewhere), 1 otherwise.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from moe_bench_summary import active_bytes  # noqa: E402  one source of the active bytes per token


def decode_rows(path):
    try:
        return {d["batch"]: d for d in json.load(open(path)).get("decode", [])}
    except (OSError, ValueError) as e:
        print("moe fused: cannot read %s: %s" % (path, e))
        return {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--bw", required=True)
    ap.add_argument("--run", action="append", required=True, help="LABEL=bench-model.json")
    ap.add_argument("--out")
    a = ap.parse_args()
    c = json.load(open(os.path.join(a.model, "config.json")))
    try:
        bw = json.load(open(a.bw)).get("device_bw", {}).get("read_gbps")
    except (OSError, ValueError):
        bw = None
    act = active_bytes(c)
    runs = [(r.split("=", 1)[0], decode_rows(r.split("=", 1)[1])) for r in a.run]
    ideal_ms = act / (bw * 1e9) * 1e3 if bw else None
    print("MoE fused decode: %d layers, active bytes/token %.3f GB, read bw %s GB/s, roofline %s ms"
          % (c["num_hidden_layers"], act / 1e9, "%.0f" % bw if bw else "?", "%.3f" % ideal_ms if ideal_ms else "?"))
    batches = sorted({b for _, rows in runs for b in rows})
    print("%-6s " % "batch" + " ".join("%14s" % ("%s gpu ms" % label) for label, _ in runs))
    for b in batches:
        print("%-6s " % b + " ".join("%14s" % ("%.3f" % rows[b]["gpu_ms"]["median"] if b in rows else "-")
                                     for _, rows in runs))
    ok = True
    summary = dict(active_bytes=act, read_gbps=bw, roofline_ms=ideal_ms, runs={})
    for label, rows in runs:
        b1 = rows.get(1)
        if not b1 or not ideal_ms:
            ok = False
            print("batch 1 %s: no number" % label)
            continue
        ms = b1["gpu_ms"]["median"]
        frac = ideal_ms / ms
        summary["runs"][label] = dict(batch1_gpu_ms=ms, roofline_fraction=frac,
                                      decode={b: r["gpu_ms"]["median"] for b, r in rows.items()})
        print("batch 1 %s: gpu %.3f ms, roofline %.3f ms: %.1f%% of the roofline (target >= 60%%: %s)"
              % (label, ms, ideal_ms, 100 * frac, "met" if frac >= 0.6 else "not met"))
    l0 = runs[0][0]
    for l1, _ in runs[1:]:  # each later run against the first (how much faster)
        if l0 in summary["runs"] and l1 in summary["runs"]:
            print("batch 1 %s / %s: %.3fx" % (l0, l1, summary["runs"][l0]["batch1_gpu_ms"] / summary["runs"][l1]["batch1_gpu_ms"]))
    if a.out:
        json.dump(summary, open(a.out, "w"), indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
