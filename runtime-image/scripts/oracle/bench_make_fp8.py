#!/usr/bin/env python3
"""Writes the FP8 versions of the bench's Llama-3.1-8B-shaped checkpoint (bench_make_8b.py) for bench-model.

Each decoder linear (q/k/v/o, gate/up/down) of SRC is quantized on the GPU with make_fp8.py's functions (the layouts
and their sources are documented there): --variant fp8b: e4m3 + F32 weight_scale_inv per 128x128 block (scale =
amax/448, the layout of Qwen3-*-FP8); fp8c: e4m3 + BF16 weight_scale per output row (compressed-tensors
float-quantized, "FP8-dynamic"). Embeddings, norms and lm_head are copied in bf16. One output file per input shard
(no index: the engine reads every *.safetensors of a directory), config.json with the quantization_config, the
tokenizer files copied; OUT/.complete last.

usage: bench_make_fp8.py --src DIR --out DIR --variant fp8b|fp8c
"""
import argparse
import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fp8  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--variant", choices=("fp8b", "fp8c"), required=True)
    args = ap.parse_args()
    import torch
    from safetensors import safe_open
    from safetensors.torch import save_file

    if os.path.exists(os.path.join(args.out, ".complete")):
        print("bench_make_fp8: %s is complete" % args.out, flush=True)
        return
    t0 = time.time()
    os.makedirs(args.out, exist_ok=True)
    for f in os.listdir(args.src):
        if f.endswith(".safetensors") or f in ("config.json", "model.safetensors.index.json", ".complete"):
            continue
        p = os.path.join(args.src, f)
        if os.path.isfile(p):
            shutil.copy(p, os.path.join(args.out, f))
    cfg = json.load(open(os.path.join(args.src, "config.json")))
    qcfg = make_fp8.FP8B_QCFG if args.variant == "fp8b" else make_fp8.ct_qcfg("channel")
    make_fp8.write_config(cfg, args.out, qcfg, "bfloat16")
    written = 0
    for f in sorted(x for x in os.listdir(args.src) if x.endswith(".safetensors")):
        out = {}
        with safe_open(os.path.join(args.src, f), framework="pt", device="cuda") as st:
            for k in st.keys():
                w = st.get_tensor(k)
                if make_fp8.LINEAR_RE.match(k):
                    q, s, suffix = make_fp8.quantize(torch, args.variant, w, torch.float32, torch.float32)
                    out[k] = q.cpu()
                    out[k[: -len("weight")] + suffix] = s.cpu()
                else:
                    out[k] = w.cpu()
        save_file(out, os.path.join(args.out, f), metadata={"format": "pt"})
        written += sum(t.numel() * t.element_size() for t in out.values())
    open(os.path.join(args.out, ".complete"), "w").close()
    print("bench_make_fp8: %s %s: %.2f GB in %.1f s" % (args.variant, args.out, written / 1e9, time.time() - t0),
          flush=True)


if __name__ == "__main__":
    main()
