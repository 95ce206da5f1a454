#!/usr/bin/env python3
"""The token-mask cost table of device-mask-bench.sh (issue #30 item 3: at batch 32 the mask must cost at most 10% of
the decode step).

Reads two bench-model --json files of the same checkpoint and batches: one plain (greedy decode rows), one with
--masks (every row greedy under a token mask, a pool of masks per row as the server's cached ones). Prints per batch the
decode step's wall and GPU-event medians of both, the mask's cost relative to the plain step ((masked - plain) / plain),
the graph-replayed steps of each, and a last line `mask-bench: PASS|FAIL`: PASS when at batch TARGET_BATCH the wall
ratio is at most TARGET.

usage: mask_bench_table.py --plain PLAIN.json --masks MASKS.json [--target 0.10] [--target-batch 32]
Exit status: 0 on PASS, 1 on FAIL.
"""
import argparse
import json
import os
import sys


def decode(path):
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        return {d["batch"]: d for d in json.load(f).get("decode", [])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plain", required=True)
    ap.add_argument("--masks", required=True)
    ap.add_argument("--target", type=float, default=0.10)
    ap.add_argument("--target-batch", type=int, default=32)
    a = ap.parse_args()
    plain, masked = decode(a.plain), decode(a.masks)
    print("%6s %12s %12s %9s %12s %12s %9s %8s" % ("batch", "plain wall", "masks wall", "cost", "plain gpu",
                                                   "masks gpu", "cost gpu", "graphs"))
    verdict = None
    for b in sorted(set(plain) | set(masked)):
        p, m = plain.get(b), masked.get(b)
        if p is None or m is None:
            print("%6d %s" % (b, "missing in " + ("plain" if p is None else "masks")))
            continue
        pw, mw = p["wall_ms"]["median"], m["wall_ms"]["median"]
        pg, mg = p["gpu_ms"]["median"], m["gpu_ms"]["median"]
        cost, cost_gpu = (mw - pw) / pw, (mg - pg) / pg
        print("%6d %9.3f ms %9.3f ms %8.1f%% %9.3f ms %9.3f ms %8.1f%% %3d/%-3d" % (
            b, pw, mw, 100 * cost, pg, mg, 100 * cost_gpu, p["graph_replayed_steps"], m["graph_replayed_steps"]))
        if b == a.target_batch:
            verdict, cost_at = cost <= a.target, cost
    if verdict is None:
        print("mask-bench: FAIL (no batch %d in both runs)" % a.target_batch)
        sys.exit(1)
    print("mask-bench: %s (batch %d: the masks cost %.1f%% of the decode step, target <= %.0f%%)" % (
        "PASS" if verdict else "FAIL", a.target_batch, 100 * cost_at, 100 * a.target))
    sys.exit(0 if verdict else 1)


if __name__ == "__main__":
    main()
