#!/usr/bin/env python3
"""Hugging Face transformers references for the engine's checks (runs on the GPU machine).

For each model directory under --models (made by make_models.py), writes REFDIR/<model>/:
  prompts.jsonl        16 lines {"ids": [...]}: held-out stdlib snippets, 8..120 tokens, BOS first
  prompts-meta.jsonl   where each prompt came from (file, line, length)
  ref-<i>.f32          fp32 reference: prefill logits of prompt i, float32 little-endian [len(ids), vocab]
  greedy.jsonl         bf16 greedy reference, 64 new tokens, EOS ignored: {"ids": [64], "top5": [[5] x 64],
                       "top5_logprobs": [[5] x 64]}
  tok-input.jsonl      ~300 lines {"text": ...}
  tok-expected.jsonl   {"ids", "ids_plain", "decoded", "decoded_skip"} from tokenizers.Tokenizer
  meta.json            versions, vocab sizes, timings

usage: reference.py --models DIR --out REFDIR [--max-new 64] [--only "llama qwen3"] [--attn eager] [--act-quant]
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import log  # noqa: E402


def load_model(transformers, torch, path, dtype, attn):
    kw = dict(dtype=dtype)
    if attn:
        kw["attn_implementation"] = attn
    try:
        model = transformers.AutoModelForCausalLM.from_pretrained(path, **kw)
    except (TypeError, ValueError) as e:
        log("  from_pretrained(%s) failed (%s); retrying without attn_implementation" % (kw, e))
        model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    model = model.to("cuda" if torch.cuda.is_available() else "cpu")
    if hasattr(model.config, "num_experts_per_tok") and hasattr(model, "set_experts_implementation"):
        model.set_experts_implementation("eager")   # the plain loop over experts, in the reference's dtype
    model.eval()
    got = next(model.parameters()).dtype
    if got != dtype:
        log("  WARNING: asked for %s, parameters are %s; converting" % (dtype, got))
        model = model.to(dtype)
    return model


def make_prompts(tok, n_lengths):
    rows, meta = [], []
    for j, (snip, target) in enumerate(zip(common.prompt_texts(len(n_lengths)), n_lengths)):
        ids = tok.encode(snip["text"], add_special_tokens=True).ids
        if len(ids) < target:
            raise SystemExit("prompt %d: snippet from %s has only %d tokens < %d" % (j, snip["file"], len(ids), target))
        ids = ids[:target]
        rows.append({"ids": ids})
        meta.append({"index": j, "file": snip["file"], "line": snip["line"], "len": len(ids)})
    return rows, meta


def fake_quant_fp8(torch, x, group=128):
    """x quantized as the engine quantizes a linear's input for the FP8 tensor-core GEMM (kernels tl_quant_fp8): per
    token and `group` columns, scale = amax / 448 (1 for an all-zero group), e4m3 round to nearest even, back to x's
    dtype times the scale."""
    cols = x.shape[-1]
    groups = (cols + group - 1) // group
    pad = groups * group - cols
    xf = torch.nn.functional.pad(x.float(), (0, pad)).reshape(*x.shape[:-1], groups, group)
    amax = xf.abs().amax(dim=-1, keepdim=True)
    s = torch.where(amax > 0, amax / 448.0, torch.ones_like(amax))
    q = (xf / s).to(torch.float8_e4m3fn).float() * s
    return q.reshape(*x.shape[:-1], groups * group)[..., :cols].to(x.dtype)


def add_act_quant(torch, model):
    """Forward pre-hooks on the decoder's linears that the engine runs on FP8 tensor cores in prefill (every nn.Linear
    but lm_head, both dims multiples of 16: CublasLt.fits): their inputs fake-quantized by fake_quant_fp8. Returns how
    many linears got one."""
    n = 0
    for name, mod in model.named_modules():
        if isinstance(mod, torch.nn.Linear) and not name.endswith("lm_head") \
                and mod.in_features % 16 == 0 and mod.out_features % 16 == 0:
            mod.register_forward_pre_hook(lambda m, args: (fake_quant_fp8(torch, args[0]),) + tuple(args[1:]))
            n += 1
    return n


def add_expert_act_quant(torch, model):
    """The experts' projections with their inputs fake-quantized by fake_quant_fp8 too, as the engine's long steps run
    FP8 experts by default (FP8 tensor cores, W8A8: Fp8ExpertGemm; with TENSORLANE_MOE_FP8_GEMM=off it dequantizes
    them: W8A16, and this hook is not wanted). transformers 5's experts modules keep each projection as a 3-D
    parameter and call nn.functional.linear on one expert's slice (not a Parameter, the parameter's trailing shape);
    that call is wrapped. Returns [calls quantized (0 after a forward: not hooked), the original linear], or None for a
    model without 3-D parameters (a dense model: no experts, nothing to quantize)."""
    shapes = {tuple(p.shape[1:]) for p in model.parameters() if p.dim() == 3}
    if not shapes:
        return None
    calls = [0]
    F = torch.nn.functional
    linear = F.linear

    def quantized_linear(x, w, b=None):
        if w.dim() == 2 and not isinstance(w, torch.nn.Parameter) and tuple(w.shape) in shapes:
            calls[0] += 1
            x = fake_quant_fp8(torch, x)
        return linear(x, w, b)

    F.linear = quantized_linear
    calls.append(linear)  # the original, put back by fp32_logits
    return calls


def fp32_logits(transformers, torch, path, prompts, out_dir, vocab, attn, act_quant=False, expert_act_quant=False):
    import numpy as np
    model = load_model(transformers, torch, path, torch.float32, attn)
    expert_calls = None
    if act_quant:
        log("  %s: %d linears with their inputs quantized per token and 128 columns (e4m3)" % (
            os.path.basename(path), add_act_quant(torch, model)))
        if expert_act_quant:
            expert_calls = add_expert_act_quant(torch, model)
    dev = next(model.parameters()).device
    stats = []
    with torch.inference_mode():
        for i, p in enumerate(prompts):
            x = torch.tensor([p["ids"]], dtype=torch.long, device=dev)
            logits = model(input_ids=x).logits[0].float()
            if expert_calls is not None and expert_calls[0] == 0:
                raise SystemExit("--act-quant: no expert projection went through nn.functional.linear on a slice of"
                                 " a 3-D experts parameter; this transformers' experts are not quantized as the"
                                 " engine's")
            if logits.shape != (len(p["ids"]), vocab):
                raise SystemExit("logits shape %s != (%d, %d)" % (tuple(logits.shape), len(p["ids"]), vocab))
            arr = logits.cpu().numpy().astype("<f4", copy=False)
            if not np.isfinite(arr).all():
                raise SystemExit("non-finite fp32 logits for prompt %d" % i)
            arr.tofile(os.path.join(out_dir, "ref-%d.f32" % i))
            pr = torch.softmax(logits, dim=-1).max(dim=-1).values
            stats.append(float(pr.mean()))
    if expert_calls is not None:
        torch.nn.functional.linear = expert_calls[1]
        log("  %s: %d expert projections with their inputs quantized as well" % (
            os.path.basename(path), expert_calls[0]))
    del model
    torch.cuda.empty_cache()
    return stats


def greedy(transformers, torch, path, prompts, max_new, attn):
    model = load_model(transformers, torch, path, torch.bfloat16, attn)
    dev = next(model.parameters()).device
    rows = []
    fallbacks = 0
    with torch.inference_mode():
        for i, p in enumerate(prompts):
            try:
                rows.append(_greedy_cached(model, torch, dev, p["ids"], max_new))
            except Exception as e:  # noqa: BLE001
                if fallbacks == 0:
                    log("  KV-cache decode failed (%s: %s); recomputing the full sequence per step" % (type(e).__name__, e))
                fallbacks += 1
                rows.append(_greedy_full(model, torch, dev, p["ids"], max_new))
    del model
    torch.cuda.empty_cache()
    return rows, fallbacks


def _step_record(torch, logits, ids, top5, top5_lp):
    lf = logits.float()
    vals, idx = torch.topk(lf, 5)
    lp = torch.log_softmax(lf, dim=-1)
    chosen = int(idx[0])
    ids.append(chosen)
    top5.append([int(t) for t in idx])
    top5_lp.append([round(float(lp[t]), 5) for t in idx])
    return chosen


def _greedy_cached(model, torch, dev, prompt, max_new):
    ids, top5, top5_lp = [], [], []
    out = model(input_ids=torch.tensor([prompt], dtype=torch.long, device=dev), use_cache=True)
    pkv = out.past_key_values
    if pkv is None:
        raise RuntimeError("no past_key_values returned")
    nxt = _step_record(torch, out.logits[0, -1], ids, top5, top5_lp)
    for _ in range(max_new - 1):
        out = model(input_ids=torch.tensor([[nxt]], dtype=torch.long, device=dev), past_key_values=pkv, use_cache=True)
        pkv = out.past_key_values
        nxt = _step_record(torch, out.logits[0, -1], ids, top5, top5_lp)
    return {"ids": ids, "top5": top5, "top5_logprobs": top5_lp}


def _greedy_full(model, torch, dev, prompt, max_new):
    ids, top5, top5_lp = [], [], []
    seq = list(prompt)
    for _ in range(max_new):
        out = model(input_ids=torch.tensor([seq], dtype=torch.long, device=dev), use_cache=False)
        seq.append(_step_record(torch, out.logits[0, -1], ids, top5, top5_lp))
    return {"ids": ids, "top5": top5, "top5_logprobs": top5_lp}


def tokenizer_reference(tok, texts):
    inputs, expected = [], []
    for t in texts:
        ids = tok.encode(t, add_special_tokens=True).ids
        plain = tok.encode(t, add_special_tokens=False).ids
        inputs.append({"text": t})
        expected.append({"ids": ids, "ids_plain": plain,
                         "decoded": tok.decode(plain, skip_special_tokens=False),
                         "decoded_skip": tok.decode(ids, skip_special_tokens=True)})
    return inputs, expected


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True, help="directory with one sub-directory per model")
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-new", type=int, default=64)
    ap.add_argument("--only", default=os.environ.get("MODELS", ""), help="subset, e.g. 'llama qwen3'")
    ap.add_argument("--attn", default="eager", help="attn_implementation (eager, sdpa; '' for the default)")
    ap.add_argument("--act-quant", action="store_true",
                    help="prefill logits with the decoder linears' inputs quantized to e4m3 per token and 128 columns "
                         "(the FP8 checkpoints' dynamic activation scheme, as the engine's tensor-core path runs it); "
                         "the greedy reference stays unquantized (the engine's one-token steps take the W8A16 GEMV)")
    ap.add_argument("--expert-act-quant", action="store_true",
                    help="with --act-quant, the MoE experts' projections too (the engine's grouped FP8 expert GEMM, "
                         "its default; a dense model has none and is left as --act-quant leaves it)")
    args = ap.parse_args()

    import torch
    import transformers
    import tokenizers
    from tokenizers import Tokenizer
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        torch.set_float32_matmul_precision("highest")
    except Exception:  # noqa: BLE001
        pass
    torch.manual_seed(0)

    names = common.model_dirs(args.models, common.parse_only(args.only))
    if not names:
        raise SystemExit("no model directories (with config.json) under %s" % args.models)
    log("reference: models %s; torch %s transformers %s tokenizers %s; %s" % (
        names, torch.__version__, transformers.__version__, tokenizers.__version__,
        torch.cuda.get_device_name(0) if torch.cuda.is_available() else "NO GPU"))
    tok_texts = common.tokenizer_inputs()
    t_all = time.time()
    for name in names:
        t0 = time.time()
        path = os.path.join(args.models, name)
        out_dir = os.path.join(args.out, name)
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(path, "config.json")) as f:
            cfg = json.load(f)
        vocab = int(cfg["vocab_size"])
        tok = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))

        prompts, meta = make_prompts(tok, common.PROMPT_LENGTHS)
        common.write_jsonl(os.path.join(out_dir, "prompts.jsonl"), prompts)
        common.write_jsonl(os.path.join(out_dir, "prompts-meta.jsonl"), meta)

        t1 = time.time()
        maxp = fp32_logits(transformers, torch, path, prompts, out_dir, vocab, args.attn, args.act_quant,
                          args.expert_act_quant)
        t_fp32 = time.time() - t1

        t1 = time.time()
        rows, fallbacks = greedy(transformers, torch, path, prompts, args.max_new, args.attn)
        common.write_jsonl(os.path.join(out_dir, "greedy.jsonl"), rows)
        t_greedy = time.time() - t1
        eos = cfg.get("eos_token_id")
        n_eos = sum(r["ids"].count(eos) for r in rows) if isinstance(eos, int) else -1

        inputs, expected = tokenizer_reference(tok, tok_texts)
        common.write_jsonl(os.path.join(out_dir, "tok-input.jsonl"), inputs)
        common.write_jsonl(os.path.join(out_dir, "tok-expected.jsonl"), expected)

        info = dict(model=name, vocab=vocab, tokenizer_vocab=tok.get_vocab_size(with_added_tokens=True),
                    prompts=len(prompts), prompt_lengths=[len(p["ids"]) for p in prompts],
                    mean_max_prob_fp32=round(sum(maxp) / len(maxp), 4), greedy_new_tokens=args.max_new,
                    greedy_eos_emitted=n_eos, greedy_kv_fallbacks=fallbacks, tokenizer_cases=len(inputs),
                    attn=args.attn, act_quant=args.act_quant, torch=torch.__version__, transformers=transformers.__version__,
                    tokenizers=tokenizers.__version__, seconds_fp32=round(t_fp32, 1),
                    seconds_greedy=round(t_greedy, 1))
        with open(os.path.join(out_dir, "meta.json"), "w") as f:
            json.dump(info, f, indent=2)
        log("REF %-8s vocab %d, %d prompts (%d..%d tokens), mean max-prob %.3f, greedy %d x %d (EOS emitted %d, "
            "fallbacks %d), %d tokenizer cases, %.1f s" % (
                name, vocab, len(prompts), min(info["prompt_lengths"]), max(info["prompt_lengths"]),
                info["mean_max_prob_fp32"], len(rows), args.max_new, n_eos, fallbacks, len(inputs), time.time() - t0))
    log("reference: done in %.1f s" % (time.time() - t_all))


if __name__ == "__main__":
    main()
