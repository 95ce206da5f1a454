#!/usr/bin/env python3
"""The engine's expert routing against transformers' on the same prompts (issue #31's routing check).

The engine writes every step's routing when TENSORLANE_MOE_ROUTING_DUMP names a file (llm/RoutingDump.java): per step,
little-endian int32 n, layers, k; then per token (row, position, token id); then the expert ids [layers][n][k]. This
script rebuilds each sequence from the steps (a row's tokens from position 0 on), matches it to its prompt by token
ids, and compares each prompt position's k experts per MoE layer with transformers' top-k of softmax(router logits) in
fp32 (the router's input captured by a hook; ties to the lower expert, as the engine breaks them). A (token, slot) pair
agrees when the engine's expert is among transformers' k. Each disagreement is reported with transformers' gap
between its k-th and (k+1)-th probability: a near-tie there explains it. --act-quant: transformers' linears get their
inputs quantized as the engine's prefill quantizes them (reference.py's add_act_quant); --expert-act-quant: the expert
projections too (reference.py's add_expert_act_quant); so it routes as the gating logits reference does.

usage: moe_routing.py --model DIR --prompts PROMPTS.jsonl --dump FILE [--out JSON] [--min-agree 99.5]
                     [--act-quant [--expert-act-quant]]
Exit 0 when agreement >= --min-agree, 1 otherwise, 2 on bad input.
"""
import argparse
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import log  # noqa: E402


def read_dump(path):
    """Yields (tokens [(row, pos, id)], layers, k, ids [layers][n][k]) per step."""
    data = open(path, "rb").read()
    off = 0
    while off < len(data):
        n, layers, k = struct.unpack_from("<3i", data, off)
        off += 12
        toks = [struct.unpack_from("<3i", data, off + 12 * i) for i in range(n)]
        off += 12 * n
        flat = struct.unpack_from("<%di" % (layers * n * k), data, off)
        off += 4 * layers * n * k
        ids = [[flat[(l * n + t) * k:(l * n + t + 1) * k] for t in range(n)] for l in range(layers)]
        yield toks, layers, k, ids


def engine_sequences(path):
    """Sequences as {"ids": [...], "routing": {pos: [layer][k]}}, in the order they started."""
    seqs, current = [], {}
    layers_k = None
    for toks, layers, k, ids in read_dump(path):
        layers_k = (layers, k)
        for t, (row, pos, tid) in enumerate(toks):
            if row < 0:
                continue
            if pos == 0 or row not in current:
                current[row] = {"ids": [], "routing": {}}
                seqs.append(current[row])
            s = current[row]
            if pos != len(s["ids"]):
                continue  # a padding token or a recompute: only the first pass through each position counts
            s["ids"].append(tid)
            s["routing"][pos] = [list(ids[l][t]) for l in range(layers)]
    return seqs, layers_k


def reference_routing(transformers, torch, model_dir, prompts, k, act_quant=False, expert_act_quant=False):
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).to("cuda")
    if hasattr(model, "set_experts_implementation"):
        model.set_experts_implementation("eager")
    model.eval()
    expert_calls = None
    if act_quant:
        import reference  # the logits reference's quantization, the same functions
        log("act-quant: %d linears" % reference.add_act_quant(torch, model))
        if expert_act_quant:
            expert_calls = reference.add_expert_act_quant(torch, model)
            if expert_calls is None:
                raise SystemExit("--expert-act-quant: %s has no 3-D experts parameters to quantize the inputs of"
                                 % model_dir)
    experts = getattr(model.config, "num_experts", None) or getattr(model.config, "num_local_experts")
    routers = [m for name, m in model.named_modules()
               if name.endswith("gate") and getattr(m, "weight", None) is not None
               and m.weight.ndim == 2 and m.weight.shape[0] == experts]
    captured = []
    hooks = [r.register_forward_pre_hook(lambda mod, args: captured.append((mod, args[0].detach()))) for r in routers]
    out = []
    with torch.inference_mode():
        for p in prompts:
            captured.clear()
            model(input_ids=torch.tensor([p["ids"]], device="cuda"))
            per_layer = []
            for mod, h in captured:
                h = h.reshape(-1, h.shape[-1]).float()
                probs = torch.softmax(h @ mod.weight.float().t(), dim=-1).cpu().tolist()
                rows = []
                for pr in probs:
                    order = sorted(range(experts), key=lambda e: (-pr[e], e))
                    gap = pr[order[k - 1]] - (pr[order[k]] if k < experts else 0.0)
                    rows.append((order[:k], gap))
                per_layer.append(rows)
            out.append(per_layer)
    for h in hooks:
        h.remove()
    if expert_calls is not None:
        if len(expert_calls) > 1:
            torch.nn.functional.linear = expert_calls[1]
        if expert_calls[0] == 0:
            raise SystemExit("--act-quant: no expert projection was quantized (see reference.add_expert_act_quant)")
        log("act-quant: %d expert projections" % expert_calls[0])
    return out, len(routers)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--prompts", required=True)
    ap.add_argument("--dump", required=True)
    ap.add_argument("--out")
    ap.add_argument("--min-agree", type=float, default=99.5)
    ap.add_argument("--act-quant", action="store_true")
    ap.add_argument("--expert-act-quant", action="store_true")
    args = ap.parse_args()
    import torch
    import transformers
    prompts = common.read_jsonl(args.prompts)
    seqs, layers_k = engine_sequences(args.dump)
    if layers_k is None:
        log("no routing records in %s" % args.dump)
        return 2
    layers, k = layers_k
    ref, ref_layers = reference_routing(transformers, torch, args.model, prompts, k, args.act_quant,
                                        args.expert_act_quant)
    if ref_layers != layers:
        log("transformers has %d routers, the engine dumped %d MoE layers" % (ref_layers, layers))
        return 2
    pairs = agree = 0
    mismatches, gaps = [], []
    for i, p in enumerate(prompts):
        ids = p["ids"]
        match = next((s for s in seqs if s["ids"][:len(ids)] == ids and all(q in s["routing"] for q in
                                                                        range(len(ids)))), None)
        if match is None:
            log("prompt %d: no engine sequence with its tokens" % i)
            return 2
        for pos in range(len(ids)):
            for l in range(layers):
                want, gap = ref[i][l][pos]
                got = match["routing"][pos][l]
                hit = sum(1 for e in got if e in want)
                pairs += k
                agree += hit
                gaps.append(gap)
                if hit < k:
                    mismatches.append(dict(prompt=i, pos=pos, layer=l, engine=got, ref=want, ref_gap=gap))
    pct = 100.0 * agree / max(1, pairs)
    gaps.sort()
    median_gap = gaps[len(gaps) // 2] if gaps else float("nan")
    verdict = "PASS" if pct >= args.min_agree else "FAIL"
    log("routing %s: %d/%d (token, slot) pairs agree = %.3f%% (>= %.1f%%), %d layers x top-%d; "
        "median k-th/(k+1)-th gap %.4g" % (verdict, agree, pairs, pct, args.min_agree, layers, k, median_gap))
    for m in mismatches[:20]:
        log("  prompt %d pos %d layer %d: engine %s, transformers %s, its k-th/(k+1)-th probability gap %.3g"
            % (m["prompt"], m["pos"], m["layer"], m["engine"], m["ref"], m["ref_gap"]))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(dict(pairs=pairs, agree=agree, pct=pct, median_gap=median_gap, verdict=verdict,
                           mismatches=mismatches), f, indent=1)
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
