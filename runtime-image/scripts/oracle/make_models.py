#!/usr/bin/env python3
"""Makes small, trained Hugging Face checkpoints for the engine's checks: by default the four llama, mistral, qwen2,
qwen3; with --models also llama128 and llamaodd (the bases of make_fp8.py's FP8 checkpoints).

Runs on the GPU machine (no internet, no hub cache): the corpus is this Python's standard library, the tokenizers
are byte-level BPE trained here, the models are trained here in fp32 for --steps steps, then saved in bf16
(safetensors) with their tokenizer files:

    OUT/<model>/config.json, generation_config.json, model.safetensors,
                tokenizer.json, tokenizer_config.json, special_tokens_map.json

usage: make_models.py --out DIR [--steps 300] [--models "llama qwen3"]   (names: common.MODEL_NAMES)
"""
import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import BOS, EOS, PAD, SPECIAL_TOKENS, log  # noqa: E402

CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ message['role'] }}: {{ message['content'] }}\n"
    "{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}"
)

MAX_POS = 2048

# name -> (vocab, architecture kwargs); the classes are looked up in main() so that --help works without torch
SPECS = {
    "llama": dict(
        cls="LlamaForCausalLM", cfg="LlamaConfig", vocab=4096,
        kw=dict(hidden_size=512, intermediate_size=1408, num_hidden_layers=4, num_attention_heads=8,
                num_key_value_heads=2, max_position_embeddings=MAX_POS, tie_word_embeddings=True,
                rms_norm_eps=1e-5,
                rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                 "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                 "original_max_position_embeddings": 256})),
    "mistral": dict(
        cls="MistralForCausalLM", cfg="MistralConfig", vocab=4096,
        kw=dict(hidden_size=512, intermediate_size=1536, num_hidden_layers=4, num_attention_heads=8,
                num_key_value_heads=4, max_position_embeddings=MAX_POS, sliding_window=4096,
                tie_word_embeddings=False, rms_norm_eps=1e-5,
                rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})),
    "qwen2": dict(
        cls="Qwen2ForCausalLM", cfg="Qwen2Config", vocab=3003,
        kw=dict(hidden_size=512, intermediate_size=1408, num_hidden_layers=3, num_attention_heads=8,
                num_key_value_heads=2, max_position_embeddings=MAX_POS, tie_word_embeddings=False,
                rms_norm_eps=1e-6, use_sliding_window=False,
                rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})),
    "qwen3": dict(
        cls="Qwen3ForCausalLM", cfg="Qwen3Config", vocab=4096,
        kw=dict(hidden_size=512, intermediate_size=1536, num_hidden_layers=4, num_attention_heads=8,
                num_key_value_heads=4, head_dim=128, max_position_embeddings=MAX_POS, tie_word_embeddings=False,
                rms_norm_eps=1e-6, use_sliding_window=False,
                rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})),
    # for FP8 block-scaled weights (make_fp8.py): every matrix side and every TP 1/2/4/8 split of it a multiple of 128
    # (q/k/v 1024 rows, o_proj 1024 columns, gate/up 2048 rows, down_proj 2048 columns; 128 / 256 per rank at TP 8)
    "llama128": dict(
        cls="LlamaForCausalLM", cfg="LlamaConfig", vocab=4096,
        kw=dict(hidden_size=512, intermediate_size=2048, num_hidden_layers=3, num_attention_heads=8,
                num_key_value_heads=8, head_dim=128, max_position_embeddings=MAX_POS, tie_word_embeddings=False,
                rms_norm_eps=1e-5,
                rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                 "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                 "original_max_position_embeddings": 256})),
    # dims that are not multiples of 128 (partial FP8 blocks at the right and bottom edges; TP 1 only): hidden 448
    # = 3 x 128 + 64, k/v 64 rows (one KV head), intermediate 1200 = 9 x 128 + 48; tied embeddings
    "llamaodd": dict(
        cls="LlamaForCausalLM", cfg="LlamaConfig", vocab=4096,
        kw=dict(hidden_size=448, intermediate_size=1200, num_hidden_layers=2, num_attention_heads=7,
                num_key_value_heads=1, head_dim=64, max_position_embeddings=MAX_POS, tie_word_embeddings=True,
                rms_norm_eps=1e-5,
                rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                 "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                 "original_max_position_embeddings": 256})),
    # Mixtures of Experts (the engine's MoE layers): 16 experts, top-2, renormalised, each expert's intermediate 256
    # (a multiple of 8 at every TP 1/2/4/8: 32 per rank at 8); layer 0 keeps a dense MLP of 1024 (mlp_only_layers)
    "qwen3moe": dict(
        cls="Qwen3MoeForCausalLM", cfg="Qwen3MoeConfig", vocab=4096,
        kw=dict(hidden_size=512, intermediate_size=1024, moe_intermediate_size=256, num_experts=16,
                num_experts_per_tok=2, norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[0],
                num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=4, head_dim=64,
                max_position_embeddings=MAX_POS, tie_word_embeddings=False, rms_norm_eps=1e-6,
                use_sliding_window=False, rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})),
    # for FP8 experts (make_fp8.py, device-fp8moe.sh): 8 experts of 512, top-2, layer 0 a dense MLP of 2048; every
    # block-scaled split a multiple of 128 at TP 1/2/4 (q/o 1024 = 8 heads x 128, experts' down 512 columns: 128 a rank
    # at TP 4), and at TP 8 only the experts' 64 columns a rank cut the 128x128 blocks (the engine's refusal case)
    "qwen3moe128": dict(
        cls="Qwen3MoeForCausalLM", cfg="Qwen3MoeConfig", vocab=4096,
        kw=dict(hidden_size=512, intermediate_size=2048, moe_intermediate_size=512, num_experts=8,
                num_experts_per_tok=2, norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[0],
                num_hidden_layers=3, num_attention_heads=8, num_key_value_heads=4, head_dim=128,
                max_position_embeddings=MAX_POS, tie_word_embeddings=False, rms_norm_eps=1e-6,
                use_sliding_window=False, rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})),
    # 8 experts, top-2, every layer MoE, an expert intermediate of 702 = 2 x 351 (TP 1 and 2 only; 351 columns a rank
    # at TP 2, no multiple of 8: the kernels' scalar rows)
    "mixtral": dict(
        cls="MixtralForCausalLM", cfg="MixtralConfig", vocab=4096,
        kw=dict(hidden_size=512, intermediate_size=702, num_local_experts=8, num_experts_per_tok=2,
                num_hidden_layers=3, num_attention_heads=8, num_key_value_heads=2, head_dim=64,
                max_position_embeddings=MAX_POS, tie_word_embeddings=False, rms_norm_eps=1e-5, sliding_window=None,
                rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})),
}


# ---------------------------------------------------------------------------------------------------------
# tokenizer
# ---------------------------------------------------------------------------------------------------------

def train_tokenizer(texts, vocab_size):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, special_tokens=list(SPECIAL_TOKENS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer, length=len(texts))
    tok.add_special_tokens(list(SPECIAL_TOKENS))   # no-op when the trainer already did it
    bos_id = tok.token_to_id(BOS)
    tok.post_processor = processors.TemplateProcessing(
        single=BOS + " $A", pair=BOS + " $A " + BOS + ":1 $B:1", special_tokens=[(BOS, bos_id)])
    ids = {t: tok.token_to_id(t) for t in SPECIAL_TOKENS}
    if any(v is None for v in ids.values()):
        raise SystemExit("special tokens missing from the trained tokenizer: %s" % ids)
    if tok.get_vocab_size(with_added_tokens=True) > vocab_size:
        raise SystemExit("tokenizer vocab %d > %d" % (tok.get_vocab_size(with_added_tokens=True), vocab_size))
    return tok, ids


def save_tokenizer(tok, ids, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    tok.save(os.path.join(out_dir, "tokenizer.json"))
    cfg = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": BOS, "eos_token": EOS, "pad_token": PAD,
        "add_bos_token": True, "add_eos_token": False,
        "model_max_length": MAX_POS,
        "clean_up_tokenization_spaces": False,
        "chat_template": CHAT_TEMPLATE,
        "added_tokens_decoder": {str(ids[t]): {"content": t, "lstrip": False, "normalized": False,
                                               "rstrip": False, "single_word": False, "special": True}
                                 for t in SPECIAL_TOKENS},
    }
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2, ensure_ascii=False)
    with open(os.path.join(out_dir, "special_tokens_map.json"), "w", encoding="utf-8") as f:
        json.dump({"bos_token": BOS, "eos_token": EOS, "pad_token": PAD}, f, indent=2)


def check_auto_tokenizer(out_dir, tok):
    """Warn (never fail) when transformers' AutoTokenizer disagrees with tokenizers on a sample."""
    try:
        from transformers import AutoTokenizer
        at = AutoTokenizer.from_pretrained(out_dir)
        sample = "def f(x):\n    return x + 1  # caf\u00e9 \U0001F600"
        a = at(sample)["input_ids"]
        b = tok.encode(sample).ids
        log("  AutoTokenizer %s: %s" % (type(at).__name__, "agrees" if list(a) == list(b) else
                                          "DISAGREES %s vs %s" % (a, b)))
    except Exception as e:  # noqa: BLE001
        log("  AutoTokenizer check skipped: %s: %s" % (type(e).__name__, e))


# ---------------------------------------------------------------------------------------------------------
# model
# ---------------------------------------------------------------------------------------------------------

def encode_corpus(tok, texts, ids):
    import numpy as np
    encs = tok.encode_batch(texts, add_special_tokens=False)
    parts = []
    for e in encs:
        parts.append([ids[BOS]] + e.ids + [ids[EOS]])
    flat = np.fromiter((t for p in parts for t in p), dtype=np.int64)
    return flat


def eager_experts(model):
    """MoE models: transformers' loop over experts (the reference's, and its default grouped_mm needs 16-byte strides:
    an expert intermediate of 702 bf16 is not)."""
    if hasattr(model.config, "num_experts_per_tok") and hasattr(model, "set_experts_implementation"):
        model.set_experts_implementation("eager")
        log("  experts implementation: %s" % getattr(model.config, "_experts_implementation", "?"))


def train_model(name, spec, tok_ids, data, args, transformers, torch):
    cfg_cls = getattr(transformers, spec["cfg"])
    model_cls = getattr(transformers, spec["cls"])
    kw = dict(spec["kw"])
    cfg = cfg_cls(vocab_size=spec["vocab"], bos_token_id=tok_ids[BOS], eos_token_id=tok_ids[EOS],
                  pad_token_id=tok_ids[PAD], **kw)
    torch.manual_seed(args.seed)
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if hasattr(cfg, "num_experts_per_tok"):
        # the loop over experts (transformers' default grouped_mm needs 16-byte strides: 702 x 2 bytes are not)
        try:
            cfg._experts_implementation = "eager"
        except Exception as e:  # noqa: BLE001
            log("  experts_implementation not set: %s" % e)
    model = model_cls(cfg).to(dev, dtype=torch.float32)
    eager_experts(model)
    model.train()
    n_params = sum(p.numel() for p in model.parameters())

    decay, no_decay = [], []
    for pn, p in model.named_parameters():
        (no_decay if p.ndim < 2 or "norm" in pn or pn.endswith(".bias") else decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), eps=1e-8)
    warmup = max(1, min(50, args.steps // 10))

    def lr_at(step):
        if step < warmup:
            return args.lr * (step + 1) / warmup
        t = (step - warmup) / max(1, args.steps - warmup)
        return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))

    data_t = torch.from_numpy(data).to(dev)
    g = torch.Generator(device="cpu")
    g.manual_seed(args.seed + 1)
    seq = args.seq + 1
    losses = []
    t0 = time.time()
    for step in range(args.steps):
        starts = torch.randint(0, len(data) - seq, (args.batch,), generator=g)
        idx = starts[:, None] + torch.arange(seq)[None, :]
        batch = data_t[idx.to(dev)]
        for grp in opt.param_groups:
            grp["lr"] = lr_at(step)
        out = model(input_ids=batch[:, :-1])
        logits = out.logits.float()
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.detach()))
        if step == 0 or (step + 1) % max(1, args.steps // 5) == 0:
            log("  %s step %4d/%d loss %.4f lr %.2e" % (name, step + 1, args.steps, losses[-1], lr_at(step)))
    final = sum(losses[-10:]) / len(losses[-10:])
    model.eval()
    return model, cfg, n_params, final, time.time() - t0


def eval_loss(model, data, args, torch, dev, bf16=False):
    g = torch.Generator(device="cpu")
    g.manual_seed(12345)
    seq = args.seq + 1
    starts = torch.randint(0, len(data) - seq, (16,), generator=g)
    idx = starts[:, None] + torch.arange(seq)[None, :]
    batch = torch.from_numpy(data)[idx].to(dev)
    with torch.no_grad():
        logits = model(input_ids=batch[:, :-1]).logits.float()
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))
        p = torch.softmax(logits, dim=-1).max(dim=-1).values.mean()
    return float(loss), float(p)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--corpus-bytes", type=int, default=8_000_000)
    ap.add_argument("--models", default=os.environ.get("MODELS", ""), help="subset, e.g. 'llama qwen3'")
    args = ap.parse_args()

    import numpy as np  # noqa: F401
    import torch
    import transformers
    log("torch %s (cuda %s, %s), transformers %s" % (
        torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU",
        transformers.__version__))
    if not torch.cuda.is_available():
        log("WARNING: no CUDA device; training on the CPU will be slow")
    torch.backends.cuda.matmul.allow_tf32 = True   # training only; the references run with TF32 off
    torch.backends.cudnn.allow_tf32 = True

    only = common.parse_only(args.models)
    names = [n for n in common.MODEL_NAMES if (n in only if only else n in common.DEFAULT_MODELS)]
    if not names:
        raise SystemExit("no models selected (--models %r)" % args.models)

    t0 = time.time()
    train = common.corpus(held_out=False, max_bytes=args.corpus_bytes)
    held = common.corpus(held_out=True, max_bytes=1_000_000)
    texts = [t for _, t in train]
    log("corpus: %d training files, %.1f MB; %d held-out files for eval (%.1f s)" % (
        len(texts), sum(len(t.encode()) for t in texts) / 1e6, len(held), time.time() - t0))

    toks = {}   # vocab -> (tok, ids, train data, held data)
    for vocab in sorted({SPECS[n]["vocab"] for n in names}):
        t1 = time.time()
        tok, ids = train_tokenizer(texts, vocab)
        data = encode_corpus(tok, texts, ids)
        hdata = encode_corpus(tok, [t for _, t in held], ids)
        toks[vocab] = (tok, ids, data, hdata)
        log("tokenizer vocab %d (trained %d): specials %s, %d training tokens (%.2f bytes/token), %.1f s" % (
            vocab, tok.get_vocab_size(with_added_tokens=True), ids, len(data),
            sum(len(t.encode()) for t in texts) / max(1, len(data)), time.time() - t1))

    os.makedirs(args.out, exist_ok=True)
    summary = []
    for name in names:
        spec = SPECS[name]
        tok, ids, data, hdata = toks[spec["vocab"]]
        out_dir = os.path.join(args.out, name)
        t1 = time.time()
        model, cfg, n_params, final, train_s = train_model(name, spec, ids, data, args, transformers, torch)
        dev = next(model.parameters()).device
        h32, p32 = eval_loss(model, hdata, args, torch, dev)
        # parameters only: .to(bfloat16) would also round the rotary inv_freq buffers, which a reload keeps in fp32
        for p in model.parameters():
            p.data = p.data.to(torch.bfloat16)
            p.grad = None
        h16, p16 = eval_loss(model, hdata, args, torch, dev)
        try:
            model.generation_config = transformers.GenerationConfig(
                bos_token_id=ids[BOS], eos_token_id=ids[EOS], pad_token_id=ids[PAD])
        except Exception as e:  # noqa: BLE001
            log("  generation_config not set: %s" % e)
        model.save_pretrained(out_dir)
        save_tokenizer(tok, ids, out_dir)
        # sanity: the saved checkpoint reloads and gives the same bf16 logits
        try:
            re = getattr(transformers, spec["cls"]).from_pretrained(out_dir, dtype=torch.bfloat16).to(dev)
            eager_experts(re)
            x = torch.from_numpy(hdata[:64]).to(dev)[None, :]
            with torch.no_grad():
                d = (re(input_ids=x).logits.float() - model(input_ids=x).logits.float()).abs().max().item()
            log("  reload check: max |logit diff| %.3g" % d)
            del re
        except Exception as e:  # noqa: BLE001
            log("  reload check FAILED: %s: %s" % (type(e).__name__, e))
        check_auto_tokenizer(out_dir, tok)
        files = sorted(os.listdir(out_dir))
        secs = time.time() - t1
        log("MODEL %-8s params %9d  final train loss %.4f  held-out loss fp32 %.4f bf16 %.4f  "
            "mean max-prob %.3f  %.1f s  files %s" % (name, n_params, final, h32, h16, p16, secs, files))
        summary.append(dict(model=name, params=n_params, final_loss=round(final, 4), heldout_loss_fp32=round(h32, 4),
                            heldout_loss_bf16=round(h16, 4), mean_max_prob=round(p16, 4), seconds=round(secs, 1)))
        with open(os.path.join(out_dir, "config.json")) as f:
            c = json.load(f)
        log("  config: %s dtype %s vocab %s hidden %s heads %s/%s head_dim %s tie %s rope %s" % (
            c.get("architectures"), c.get("dtype", c.get("torch_dtype")), c.get("vocab_size"), c.get("hidden_size"), c.get("num_attention_heads"), c.get("num_key_value_heads"),
            c.get("head_dim"), c.get("tie_word_embeddings"),
            c.get("rope_parameters", {"rope_theta": c.get("rope_theta"), "rope_scaling": c.get("rope_scaling")})))
        moe_keys = {k: v for k, v in c.items() if "expert" in k or k in ("moe_intermediate_size", "norm_topk_prob",
                                                                         "decoder_sparse_step", "mlp_only_layers")}
        if moe_keys:
            log("  config (MoE): %s" % json.dumps(moe_keys, sort_keys=True))
        del model
        torch.cuda.empty_cache()
    with open(os.path.join(args.out, "models.json"), "w") as f:
        json.dump(summary, f, indent=2)
    log("make_models: %d models in %.1f s" % (len(summary), time.time() - t0))


if __name__ == "__main__":
    main()
