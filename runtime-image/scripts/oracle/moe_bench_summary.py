#!/usr/bin/env python3
"""The MoE benchmark's table (issue #31): our decode per batch and 2,048-token prefill against transformers' in the
same run, and the batch-1 step against the active-parameter roofline: the bytes one token reads (attention, router,
top-k experts' weights of every layer, norms, the LM head's rows; the embedding's one row) / the device read bandwidth
measured in the run.

usage: moe_bench_summary.py --model DIR --ours OURS.json --tf TF.json [--out SUMMARY.json]
Prints the table; exit 0 when every target holds (>= 60% of the roofline at batch 1, faster than transformers at each
batch, prefill >= 1.0x), 1 otherwise.
"""
import argparse
import json
import os
import sys


def active_bytes(c, elem=2):
    h = c["hidden_size"]
    hd = c.get("head_dim") or h // c["num_attention_heads"]
    q = c["num_attention_heads"] * hd
    kv = c["num_key_value_heads"] * hd
    experts = c.get("num_experts") or c.get("num_local_experts")
    k = c["num_experts_per_tok"]
    inter = c.get("moe_intermediate_size") or c["intermediate_size"]
    attn = h * (q + 2 * kv) + q * h
    layer = attn + experts * h + k * 3 * h * inter + 2 * h
    return elem * (c["num_hidden_layers"] * layer + c["vocab_size"] * h + h + h)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--ours", required=True)
    ap.add_argument("--tf", required=True)
    ap.add_argument("--out")
    a = ap.parse_args()
    c = json.load(open(os.path.join(a.model, "config.json")))
    ours = json.load(open(a.ours))
    tf = json.load(open(a.tf))
    bw = tf.get("device_bw", {}).get("read_gbps")
    act = active_bytes(c)
    rows, ok = [], True
    tf_dec = {r["batch"]: r for r in tf.get("eager_sdpa", {}).get("decode", [])}
    print("MoE bench: %s layers=%d experts=%s top-%d expert intermediate %s; active bytes/token %.3f GB; read bw %s GB/s"
          % (c["architectures"][0], c["num_hidden_layers"], c.get("num_experts") or c.get("num_local_experts"),
             c["num_experts_per_tok"], c.get("moe_intermediate_size"), act / 1e9, "%.0f" % bw if bw else "?"))
    print("%-10s %12s %14s %10s" % ("batch", "ours ms", "transformers", "ratio"))
    for d in ours.get("decode", []):
        b = d["batch"]
        m = d["wall_ms"]["median"]
        t = tf_dec.get(b, {}).get("wall_ms", {}).get("median")
        ratio = t / m if t else None
        ok &= ratio is not None and ratio > 1.0
        rows.append(dict(batch=b, ours_ms=m, transformers_ms=t, speedup=ratio))
        print("%-10s %12.3f %14s %10s" % (b, m, "%.3f" % t if t else "-", "%.2fx" % ratio if ratio else "-"))
    p, tp = ours.get("prefill"), tf.get("eager_sdpa", {}).get("prefill")
    pre = None
    if p and tp:
        pre = tp["wall_ms"]["median"] / p["wall_ms"]["median"]
        print("prefill %d: ours %.2f ms, transformers %.2f ms: %.2fx (target >= 1.0)"
              % (p["tokens"], p["wall_ms"]["median"], tp["wall_ms"]["median"], pre))
    ok &= pre is not None and pre >= 1.0
    b1 = next((d for d in ours.get("decode", []) if d["batch"] == 1), None)
    roof = None
    if b1 and bw:
        ideal_ms = act / (bw * 1e9) * 1e3
        roof = ideal_ms / b1["gpu_ms"]["median"]
        print("batch 1: gpu %.3f ms, active-parameter roofline %.3f ms: %.1f%% (target >= 60%%)"
              % (b1["gpu_ms"]["median"], ideal_ms, 100 * roof))
    ok &= roof is not None and roof >= 0.6
    print("moe bench: %s" % ("PASS" if ok else "FAIL"))
    if a.out:
        json.dump(dict(active_bytes=act, read_gbps=bw, decode=rows, prefill_speedup=pre, roofline_fraction=roof,
                       verdict="PASS" if ok else "FAIL"), open(a.out, "w"), indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
