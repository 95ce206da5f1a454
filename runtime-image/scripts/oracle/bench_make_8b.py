#!/usr/bin/env python3
"""Writes a Llama-3.1-8B-shaped checkpoint with random bf16 weights (for bench-model and bench_transformers.py).

Geometry of Llama-3.1-8B: hidden 4096, intermediate 14336, 32 layers, 32 query / 8 KV heads (head_dim 128),
vocab 128256, untied LM head, rope llama3 (factor 8, low 1, high 4, original 8192, theta 500000),
max_position_embeddings 131072. The model is built directly on the GPU in bf16 (no CPU init), its weights drawn
from N(0, 0.02) (norm weights 1) with a fixed seed, then saved with save_pretrained as sharded safetensors
(max_shard_size 5GB), plus a tokenizer.json that covers the whole vocabulary: a tiny byte-level BPE (512 ids) and
plain vocabulary entries "<tN>" for every id above it, so that every id a random model generates decodes to text
(serve streams a chunk per token that has text; loadgen measures from those chunks). Vocabulary entries, not added
tokens: with ~127,700 added tokens the Rust tokenizers library took 70 s to load the file through DJL (0.6 s as
vocabulary entries; measured on the build machine, 2026-12-01). A file OUT/.complete is written last: its presence means the checkpoint is whole.

Runs on the GPU machine (torch, transformers 5.x, tokenizers; no internet). Prints bytes written and seconds.

With --geometry qwen3-30b-a3b: Qwen3-30B-A3B's geometry instead (Qwen3MoeForCausalLM: hidden 2048, 48 layers, 32 query /
4 KV heads of 128, 128 experts of 768, top-8 renormalised, vocab 151936, rope theta 1e6), for the MoE benchmark; at 48
layers that is ~61 GB, so pass --layers (per-layer times are what the benchmark compares).

usage: bench_make_8b.py --out DIR [--layers 32] [--geometry llama-3.1-8b|qwen3-30b-a3b] [--force]
"""
import argparse
import json
import os
import sys
import time

SPECIALS = ["<|begin_of_text|>", "<|end_of_text|>", "<|pad|>"]   # ids 0, 1, 2


def log(*a):
    print(*a, flush=True)


def config_kwargs(layers):
    return dict(
        hidden_size=4096, intermediate_size=14336, num_hidden_layers=layers, num_attention_heads=32,
        num_key_value_heads=8, head_dim=128, vocab_size=128256, max_position_embeddings=131072,
        rms_norm_eps=1e-5, tie_word_embeddings=False, hidden_act="silu", attention_bias=False, mlp_bias=False,
        bos_token_id=0, eos_token_id=1, pad_token_id=2,
    )


ROPE = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
        "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}


def qwen3_moe_config(transformers, layers):
    cfg = transformers.Qwen3MoeConfig(
        hidden_size=2048, intermediate_size=6144, moe_intermediate_size=768, num_experts=128, num_experts_per_tok=8,
        norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[], num_hidden_layers=layers,
        num_attention_heads=32, num_key_value_heads=4, head_dim=128, vocab_size=151936, max_position_embeddings=40960,
        rms_norm_eps=1e-6, tie_word_embeddings=False, bos_token_id=0, eos_token_id=1, pad_token_id=2,
        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
    for name in ("dtype", "torch_dtype"):
        try:
            setattr(cfg, name, "bfloat16")
        except Exception:  # noqa: BLE001 - either name may be a read-only alias
            pass
    return cfg


def make_config(transformers, layers, geometry="llama-3.1-8b"):
    if geometry == "qwen3-30b-a3b":
        return qwen3_moe_config(transformers, layers)
    kw = config_kwargs(layers)
    try:   # transformers 5: rope_parameters
        cfg = transformers.LlamaConfig(rope_parameters=dict(ROPE), **kw)
        rp = getattr(cfg, "rope_parameters", None)
        if not rp or rp.get("rope_type") != "llama3":
            raise TypeError("rope_parameters not kept")
    except TypeError:   # transformers 4: rope_theta + rope_scaling
        scaling = {k: v for k, v in ROPE.items() if k != "rope_theta"}
        cfg = transformers.LlamaConfig(rope_theta=ROPE["rope_theta"], rope_scaling=scaling, **kw)
    for name in ("dtype", "torch_dtype"):
        try:
            setattr(cfg, name, "bfloat16")
        except Exception:  # noqa: BLE001 - either name may be a read-only alias
            pass
    return cfg


def write_tokenizer(out, vocab_size):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=512, special_tokens=SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    text = ["def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
            "The quick brown fox jumps over the lazy dog. " * 4,
            "import os, sys, json, time\nfor i in range(10):\n    print(i)\n"] * 20
    tok.train_from_iterator(text, trainer)
    path = os.path.join(out, "tokenizer.json")
    tok.save(path)
    size = fillers_as_vocab(path, vocab_size)
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump({"bos_token": SPECIALS[0], "eos_token": SPECIALS[1], "pad_token": SPECIALS[2], "add_bos_token": True,
                   "model_max_length": 131072, "tokenizer_class": "PreTrainedTokenizerFast"}, f, indent=1)
    with open(os.path.join(out, "special_tokens_map.json"), "w") as f:
        json.dump({"bos_token": SPECIALS[0], "eos_token": SPECIALS[1], "pad_token": SPECIALS[2]}, f, indent=1)
    return size


def fillers_as_vocab(path, vocab_size):
    """Adds "<tN>" to the BPE model's vocabulary of tokenizer.json at `path` for every id from the next free one up to
    vocab_size (no merges make them: they only decode). Returns the vocabulary size."""
    with open(path) as f:
        t = json.load(f)
    vocab = t["model"]["vocab"]
    taken = set(vocab.values()) | {a["id"] for a in t.get("added_tokens", [])}
    for i in range(max(taken) + 1, vocab_size):
        vocab["<t%d>" % i] = i
    with open(path, "w") as f:
        json.dump(t, f, ensure_ascii=False)
    return max(max(vocab.values()), max(taken)) + 1


def dir_bytes(d):
    return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if os.path.isfile(os.path.join(d, f)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=32, help="fewer layers for a quick trial (default 32)")
    ap.add_argument("--force", action="store_true", help="rewrite even when OUT/.complete exists")
    ap.add_argument("--geometry", default="llama-3.1-8b", choices=["llama-3.1-8b", "qwen3-30b-a3b"])
    args = ap.parse_args()
    if os.path.exists(os.path.join(args.out, ".complete")) and not args.force:
        log("bench_make_8b: %s is complete (%.3f GB); nothing to do (--force rewrites)" % (args.out, dir_bytes(args.out) / 1e9))
        return 0
    t_all = time.time()
    import torch
    import transformers
    if not torch.cuda.is_available():
        raise SystemExit("bench_make_8b: no CUDA device (the random init runs on the GPU)")
    os.makedirs(args.out, exist_ok=True)
    for f in os.listdir(args.out):   # a partial earlier attempt
        if f.endswith(".safetensors") or f.endswith(".json") or f == ".complete":
            os.remove(os.path.join(args.out, f))
    log("bench_make_8b: torch %s, transformers %s, %s" % (torch.__version__, transformers.__version__, torch.cuda.get_device_name(0)))
    cfg = make_config(transformers, args.layers, args.geometry)
    t0 = time.time()
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device("cuda"):
            model = transformers.AutoModelForCausalLM.from_config(cfg)
    finally:
        torch.set_default_dtype(old)
    model.eval()
    gen = torch.Generator(device="cuda").manual_seed(0)
    n_params = 0
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dtype != torch.bfloat16 or p.device.type != "cuda":
                raise SystemExit("bench_make_8b: %s is %s on %s, expected bf16 on cuda" % (name, p.dtype, p.device))
            if p.dim() == 1:
                p.fill_(1.0)
            else:
                p.normal_(0.0, 0.02, generator=gen)
            n_params += p.numel()
    torch.cuda.synchronize()
    log("bench_make_8b: %d parameters (%.3f GB bf16) initialised on the GPU in %.1f s" % (n_params, n_params * 2 / 1e9, time.time() - t0))
    t1 = time.time()
    try:
        model.save_pretrained(args.out, max_shard_size="5GB")
    except TypeError:
        model.save_pretrained(args.out, max_shard_size="5GB", safe_serialization=True)
    log("bench_make_8b: save_pretrained in %.1f s" % (time.time() - t1))
    vocab = write_tokenizer(args.out, cfg.vocab_size)
    with open(os.path.join(args.out, "config.json")) as f:
        c = json.load(f)
    shards = sorted(f for f in os.listdir(args.out) if f.endswith(".safetensors"))
    st_bytes = sum(os.path.getsize(os.path.join(args.out, f)) for f in shards)
    total = dir_bytes(args.out)
    with open(os.path.join(args.out, ".complete"), "w") as f:
        json.dump({"parameters": n_params, "safetensors_bytes": st_bytes, "shards": shards, "seconds": time.time() - t_all}, f)
    log("bench_make_8b: wrote %s: %d shard(s), %.3f GB of safetensors (%d bytes), %.3f GB in all, tokenizer vocab %d, "
        "rope %s, in %.1f s" % (args.out, len(shards), st_bytes / 1e9, st_bytes, total / 1e9, vocab,
                                c.get("rope_parameters") or c.get("rope_scaling"), time.time() - t_all))
    return 0


if __name__ == "__main__":
    sys.exit(main())
