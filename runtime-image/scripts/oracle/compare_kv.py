#!/usr/bin/env python3
"""The FP8 KV cache against the engine's own bf16-KV runs (needs numpy only; device-kvfp8.sh calls it).

  --runs RUNSDIR  RUNSDIR/<model>/tp<N>/ (bf16 KV) and RUNSDIR/<model>/tp<N>-kvfp8/ (--kv-cache-dtype fp8), each with
                  generate.jsonl and logits/prompt-<i>.f32 (device-models.sh's layout)
  --ref  REFDIR   reference.py's REFDIR/<model>/{prompts.jsonl, ref-<i>.f32, greedy.jsonl}: the prompts, and the fp32
                  Hugging Face logits both runs are also measured against (reported, not gated)
  --bench "BF16.json FP8.json"  (optional) bench-model --op-breakdown JSON of the same checkpoint and context, bf16 KV
                  then fp8 KV: the attention kernels' GPU ms per decode batch and prefill
  --out  RESULT.json

Rows (PASS/FAIL), per model and TP:
  logits/kv16   prefill logits of the fp8-KV run vs the bf16-KV run: top-1 agreement >= --top1-min (97%); cosine
                min/mean reported (gated only with --cos-min > 0)
  greedy/kv16   64 greedy tokens vs the bf16-KV run: compare.py's walk (at the first difference each token must be in
                the other's top-5)
  kv tokens     the KV cache's tokens from the same memory fraction: fp8 / bf16 >= 1.99 (the summaries' kv_tokens),
                with the bytes each took
  ref (info)    both runs' prefill logits against the fp32 reference: cosine and top-1, for the record
and, with --bench, per decode batch and for the prefill:
  attention     fp8-KV attention GPU ms <= --slower-max (1.05) x bf16's (one eager pass each, --op-breakdown), and
                the step's median GPU ms of both
Exit code 1 when any gated row FAILs.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from compare import Missing, greedy_metrics, logits_metrics, our_greedy, read_generate, run_dirs  # noqa: E402


def strip(m):
    return {k: v for k, v in m.items() if k != "per_prompt"}


def model_rows(args, model, add):
    ref_dir = os.path.join(args.ref, model)
    run_dir = os.path.join(args.runs, model)
    try:
        prompts = common.read_jsonl(os.path.join(ref_dir, "prompts.jsonl"))
    except (OSError, ValueError) as e:
        add(model, "-", "logits/kv16", {}, ["no prompts: %s" % e])
        return
    bases = [d for d in run_dirs(run_dir) if "-" not in d]
    if not bases:
        add(model, "-", "logits/kv16", {}, ["no bf16-KV run under %s" % run_dir])
    for base in bases:
        kv8 = base + "-kvfp8"
        b_dir, f_dir = os.path.join(run_dir, base), os.path.join(run_dir, kv8)
        if not os.path.isdir(f_dir):
            add(model, base, "logits/kv16", {}, ["missing %s" % f_dir])
            continue
        m, r = logits_metrics(lambda i: os.path.join(b_dir, "logits", "prompt-%d.f32" % i),
                              os.path.join(f_dir, "logits"), prompts, args.cos_min, args.top1_min)
        add(model, base, "logits/kv16", m, r)
        try:
            b_rows, b_sum = read_generate(os.path.join(b_dir, "generate.jsonl"))
            f_rows, f_sum = read_generate(os.path.join(f_dir, "generate.jsonl"))
        except Missing as e:
            add(model, base, "greedy/kv16", {}, [str(e)])
            continue
        refs = [our_greedy(b_rows[i]) if i in b_rows else ([], []) for i in range(len(prompts))]
        g, gr = greedy_metrics(refs, f_rows, prompts, args.max_new)
        add(model, base, "greedy/kv16", g, gr)
        kt = {}
        reasons = []
        for name, s in (("bf16", b_sum), ("fp8", f_sum)):
            s = s or {}
            kt[name] = {k: s.get(k) for k in ("kv_dtype", "kv_tokens", "kv_bytes", "kv_bytes_per_block")}
        t16, t8 = kt["bf16"]["kv_tokens"], kt["fp8"]["kv_tokens"]
        if not t16 or not t8:
            reasons.append("a summary has no kv_tokens")
        else:
            kt["ratio"] = round(t8 / t16, 4)
            if kt["ratio"] < 1.99:
                reasons.append("fp8 holds %.4f x the bf16 tokens (< 1.99)" % kt["ratio"])
        if kt["fp8"]["kv_dtype"] != "fp8":
            reasons.append("the fp8 run's summary says kv_dtype %s" % kt["fp8"]["kv_dtype"])
        add(model, base, "kv tokens", kt, reasons)
        info = {}
        for name, d in (("bf16", b_dir), ("fp8", f_dir)):
            mm, _ = logits_metrics(lambda i: os.path.join(ref_dir, "ref-%d.f32" % i), os.path.join(d, "logits"),
                                   prompts, 0.0, 0.0)
            info[name] = strip(mm)
        add(model, base, "ref (info)", info, [], gated=False)


def attention_ms(bench):
    """{'decode b<N>': (attention ms, step median gpu ms), 'prefill': ...} of a bench-model JSON."""
    out = {}
    for d in bench.get("decode") or []:
        ops = d.get("ops_gpu_ms_eager") or {}
        out["decode b%d" % d.get("batch")] = (ops.get("attention"), (d.get("gpu_ms") or {}).get("median"))
    p = bench.get("prefill")
    if p:
        ops = p.get("ops_gpu_ms_eager") or {}
        out["prefill %d" % p.get("tokens")] = (ops.get("attention"), (p.get("gpu_ms") or {}).get("median"))
    return out


def bench_rows(args, add):
    paths = args.bench.split()
    try:
        b16, b8 = (json.load(open(p)) for p in paths)
    except (OSError, ValueError) as e:
        add("bench", "-", "attention", {}, ["unreadable bench JSON %s: %s" % (paths, e)])
        return
    a16, a8 = attention_ms(b16), attention_ms(b8)
    for key in a16:
        m = {"context": b16.get("context") if key.startswith("decode") else 0,
             "kv_dtypes": [b16.get("kv_cache_dtype"), b8.get("kv_cache_dtype")]}
        reasons = []
        if key not in a8:
            add("bench", key, "attention", m, ["no %s in the fp8 run" % key])
            continue
        (at16, st16), (at8, st8) = a16[key], a8[key]
        m.update(attention_ms_bf16=at16, attention_ms_fp8=at8, step_gpu_ms_bf16=st16, step_gpu_ms_fp8=st8)
        if at16 is None or at8 is None:
            reasons.append("no attention time (run bench-model with --op-breakdown)")
        else:
            m["ratio"] = round(at8 / at16, 4) if at16 > 0 else None
            if m["ratio"] is None or m["ratio"] > args.slower_max:
                reasons.append("fp8 attention %.4f ms vs bf16 %.4f ms (> %.2f x)" % (at8, at16, args.slower_max))
        if m["kv_dtypes"] != ["bf16", "fp8"]:
            reasons.append("the bench files are for KV dtypes %s, expected [bf16, fp8]" % m["kv_dtypes"])
        add("bench", key, "attention", m, reasons)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref", required=True)
    ap.add_argument("--runs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default=os.environ.get("MODELS", ""), help="the models to compare ('' for none)")
    ap.add_argument("--max-new", type=int, default=64)
    ap.add_argument("--top1-min", type=float, default=97.0)
    ap.add_argument("--cos-min", type=float, default=0.0)
    ap.add_argument("--bench", default="")
    ap.add_argument("--slower-max", type=float, default=1.05)
    args = ap.parse_args()
    rows = []

    def add(model, run, check, metrics, reasons, gated=True):
        rows.append({"model": model, "run": run, "check": check,
                     "result": ("PASS" if not reasons else "FAIL") if gated else "INFO",
                     "reasons": reasons, "metrics": metrics})

    models = args.only.split()  # none: the bench rows only
    for m in models:
        model_rows(args, m, add)
    if args.bench:
        bench_rows(args, add)
    with open(args.out, "w") as f:
        json.dump({"rows": rows}, f, indent=1)
    print("%-8s %-10s %-12s %-6s %s" % ("model", "run", "check", "result", "figures / reasons"))
    for r in rows:
        m = r["metrics"]
        if r["check"] == "logits/kv16":
            fig = "cos_min %s cos_mean %s top1 %s%% (%s positions)" % (
                m.get("cos_min"), m.get("cos_mean"), m.get("top1_pct"), m.get("positions"))
        elif r["check"] == "greedy/kv16":
            fig = "match %s close %s fail %s short %s missing %s, matched mean %s min %s" % (
                m.get("match"), m.get("close"), m.get("fail"), m.get("short"), m.get("missing"),
                m.get("matched_mean"), m.get("matched_min"))
        elif r["check"] == "kv tokens":
            fig = "bf16 %s tokens (%s B), fp8 %s tokens (%s B), ratio %s" % (
                (m.get("bf16") or {}).get("kv_tokens"), (m.get("bf16") or {}).get("kv_bytes"),
                (m.get("fp8") or {}).get("kv_tokens"), (m.get("fp8") or {}).get("kv_bytes"), m.get("ratio"))
        elif r["check"] == "ref (info)":
            fig = "vs fp32 HF: bf16-KV cos_min %s top1 %s%%, fp8-KV cos_min %s top1 %s%%" % (
                m["bf16"].get("cos_min"), m["bf16"].get("top1_pct"), m["fp8"].get("cos_min"),
                m["fp8"].get("top1_pct"))
        else:
            fig = "context %s: attention bf16 %s ms, fp8 %s ms (x%s); step gpu median bf16 %s ms, fp8 %s ms" % (
                m.get("context"), m.get("attention_ms_bf16"), m.get("attention_ms_fp8"), m.get("ratio"),
                m.get("step_gpu_ms_bf16"), m.get("step_gpu_ms_fp8"))
        print("%-8s %-10s %-12s %-6s %s%s" % (r["model"], r["run"], r["check"], r["result"], fig,
                                             ("; " + "; ".join(r["reasons"])) if r["reasons"] else ""))
    failed = sum(1 for r in rows if r["result"] == "FAIL")
    print("compare_kv: %d rows, %d FAIL" % (len(rows), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
