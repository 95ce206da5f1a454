#!/usr/bin/env python3
"""Makes a trained target / draft pair for draft-model speculation (issue 34, item 2b) on the GPU machine.

One byte-level BPE tokenizer (make_models.train_tokenizer, vocab 4096) over this Python's standard library (common.corpus,
the held-out files left out; up to 24 MB of text, the tokenizer trained on its first 8 MB), then two Llama checkpoints trained here on the same corpus with that tokenizer:

    OUT/target   16 layers, hidden 2048, intermediate 5632, 16 heads / 4 KV heads of 128 (~0.74 B parameters, ~1.5 GB
                 in bf16: a decode step reads enough weights, and runs enough layers, to cost several draft steps)
    OUT/draft    2 layers, hidden 512, intermediate 1408, 8 heads / 2 KV heads of 64, tied embeddings (~8 M parameters);
                 its loss: (1 - alpha) x the data's cross-entropy + alpha x KL(target || draft) of the next-token
                 distributions (distillation from the target being trained above: what makes a small draft agree with
                 its target, as EAGLE's and Medusa's heads are trained)

each with config.json, generation_config.json, model.safetensors (bf16) and the same tokenizer files, and OUT/pair.json:
parameters, losses, seconds, and the held-out top-1 agreement (how often the draft's greedy next token is the target's
over held-out positions, near the per-guess acceptance greedy speculation will see). Training is in fp32 master weights
with bf16 autocast, stopped at --*-steps or --*-seconds, whichever comes first (the cosine schedule follows the later of
the two progress fractions), with sequences of --seq tokens (longer than the prompts + generated tokens of the checks).

usage: make_spec_pair.py --out DIR [--target-seconds 150] [--draft-seconds 60] [--seq 512] [--batch 16]
"""
import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import make_models  # noqa: E402
from common import BOS, EOS, PAD, log  # noqa: E402

VOCAB = 4096
MAX_POS = 2048
ROPE = {"rope_type": "default", "rope_theta": 10000.0}
TARGET = dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=16, num_attention_heads=16,
              num_key_value_heads=4, head_dim=128, max_position_embeddings=MAX_POS, tie_word_embeddings=False,
              rms_norm_eps=1e-5, rope_parameters=ROPE)
DRAFT = dict(hidden_size=512, intermediate_size=1408, num_hidden_layers=2, num_attention_heads=8,
             num_key_value_heads=2, head_dim=64, max_position_embeddings=MAX_POS, tie_word_embeddings=True,
             rms_norm_eps=1e-5, rope_parameters=ROPE)


def batches(torch, data_t, n, batch, seq, gen):
    starts = torch.randint(0, n - seq - 1, (batch,), generator=gen)
    idx = starts[:, None] + torch.arange(seq + 1)[None, :]
    return data_t[idx.to(data_t.device)]


def train(torch, name, model, data_t, n, args, steps, seconds, lr, teacher=None, alpha=0.0):
    """Trains `model` (fp32, on the GPU) for `steps` steps or `seconds` seconds; returns (steps run, last losses)."""
    F = torch.nn.functional
    decay, no_decay = [], []
    for pn, p in model.named_parameters():
        (no_decay if p.ndim < 2 or "norm" in pn else decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=lr, betas=(0.9, 0.95), eps=1e-8, fused=True)
    gen = torch.Generator(device="cpu")
    gen.manual_seed(args.seed + (7 if teacher is not None else 1))
    warmup = max(1, min(50, steps // 10))
    t0 = time.time()
    losses = []
    step = 0
    model.train()
    while step < steps and time.time() - t0 < seconds:
        progress = max(step / steps, (time.time() - t0) / seconds)
        cur = lr * (step + 1) / warmup if step < warmup else lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))
        for g in opt.param_groups:
            g["lr"] = cur
        b = batches(torch, data_t, n, args.batch, args.seq, gen)
        x, y = b[:, :-1], b[:, 1:]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(input_ids=x, use_cache=False).logits
        logits = logits.float().reshape(-1, logits.shape[-1])
        loss = F.cross_entropy(logits, y.reshape(-1))
        if teacher is not None:
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                tl = teacher(input_ids=x, use_cache=False).logits
            tl = tl.float().reshape(-1, tl.shape[-1])
            kl = F.kl_div(F.log_softmax(logits, dim=-1), F.log_softmax(tl, dim=-1), log_target=True,
                          reduction="batchmean")
            loss = (1 - alpha) * loss + alpha * kl
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.detach()))
        step += 1
        if step == 1 or step % 100 == 0:
            log("  %s step %5d loss %.4f lr %.2e (%.1f s)" % (name, step, losses[-1], cur, time.time() - t0))
    model.eval()
    log("  %s: %d steps in %.1f s, final loss %.4f" % (name, step, time.time() - t0,
                                                     sum(losses[-20:]) / max(1, len(losses[-20:]))))
    return step, losses


def held_out(torch, target, draft, hdata, args, dev):
    """(target loss, draft loss, top-1 agreement) over 16 held-out windows of --seq tokens (bf16 weights)."""
    F = torch.nn.functional
    gen = torch.Generator(device="cpu")
    gen.manual_seed(12345)
    h = torch.from_numpy(hdata).to(dev)
    b = batches(torch, h, len(hdata), 16, args.seq, gen)
    x, y = b[:, :-1], b[:, 1:].reshape(-1)
    with torch.no_grad():
        tl = target(input_ids=x, use_cache=False).logits.float().reshape(-1, VOCAB)
        dl = draft(input_ids=x, use_cache=False).logits.float().reshape(-1, VOCAB)
    agree = (tl.argmax(-1) == dl.argmax(-1)).float().mean()
    return float(F.cross_entropy(tl, y)), float(F.cross_entropy(dl, y)), float(agree)


def save(transformers, torch, model, ids, tok, out_dir):
    for p in model.parameters():   # parameters only: the rotary inv_freq buffers stay fp32, as a reload keeps them
        p.data = p.data.to(torch.bfloat16)
        p.grad = None
    model.generation_config = transformers.GenerationConfig(
        bos_token_id=ids[BOS], eos_token_id=ids[EOS], pad_token_id=ids[PAD])
    model.save_pretrained(out_dir)
    make_models.save_tokenizer(tok, ids, out_dir)
    make_models.check_auto_tokenizer(out_dir, tok)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--target-steps", type=int, default=3000)
    ap.add_argument("--target-seconds", type=float, default=150)
    ap.add_argument("--draft-steps", type=int, default=3000)
    ap.add_argument("--draft-seconds", type=float, default=60)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--target-lr", type=float, default=6e-4)
    ap.add_argument("--draft-lr", type=float, default=3e-3)
    ap.add_argument("--alpha", type=float, default=0.7, help="the KL term's weight in the draft's loss")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--corpus-bytes", type=int, default=24_000_000,
                    help="training text (the stdlib's files in a seeded order, up to this many bytes)")
    ap.add_argument("--tokenizer-bytes", type=int, default=8_000_000,
                    help="the tokenizer is trained on the first this many bytes of it")
    args = ap.parse_args()

    import torch
    import transformers
    if not torch.cuda.is_available():
        raise SystemExit("make_spec_pair: needs a GPU")
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    log("torch %s, transformers %s, %s" % (torch.__version__, transformers.__version__, torch.cuda.get_device_name(0)))

    t_all = time.time()
    train_files = common.corpus(held_out=False, max_bytes=args.corpus_bytes)
    held = common.corpus(held_out=True, max_bytes=1_000_000)
    texts = [t for _, t in train_files]
    tok_texts, size = [], 0
    for t in texts:   # the BPE trainer on a prefix (its time grows with the text); the models on all of it
        if size >= args.tokenizer_bytes:
            break
        tok_texts.append(t)
        size += len(t.encode("utf-8"))
    tok, ids = make_models.train_tokenizer(tok_texts, VOCAB)
    data = make_models.encode_corpus(tok, texts, ids)
    hdata = make_models.encode_corpus(tok, [t for _, t in held], ids)
    log("corpus: %d files, %d training tokens, %d held-out tokens; tokenizer %d ids (%.1f s)" % (
        len(texts), len(data), len(hdata), tok.get_vocab_size(with_added_tokens=True), time.time() - t_all))
    data_t = torch.from_numpy(data).to(dev)

    def build(kw):
        cfg = transformers.LlamaConfig(vocab_size=VOCAB, bos_token_id=ids[BOS], eos_token_id=ids[EOS],
                                       pad_token_id=ids[PAD], **kw)
        torch.manual_seed(args.seed)
        return transformers.LlamaForCausalLM(cfg).to(dev, dtype=torch.float32)

    target = build(TARGET)
    n_t = sum(p.numel() for p in target.parameters())
    log("target: %d parameters" % n_t)
    t0 = time.time()
    t_steps, t_losses = train(torch, "target", target, data_t, len(data), args, args.target_steps,
                              args.target_seconds, args.target_lr)
    t_secs = time.time() - t0

    draft = build(DRAFT)
    n_d = sum(p.numel() for p in draft.parameters())
    log("draft: %d parameters, distilled from the target (alpha %.2f)" % (n_d, args.alpha))
    for p in target.parameters():
        p.requires_grad_(False)
    t0 = time.time()
    d_steps, d_losses = train(torch, "draft", draft, data_t, len(data), args, args.draft_steps, args.draft_seconds,
                              args.draft_lr, teacher=target, alpha=args.alpha)
    d_secs = time.time() - t0

    os.makedirs(args.out, exist_ok=True)
    save(transformers, torch, target, ids, tok, os.path.join(args.out, "target"))
    save(transformers, torch, draft, ids, tok, os.path.join(args.out, "draft"))
    lt, ld, agree = held_out(torch, target, draft, hdata, args, dev)
    summary = dict(target=dict(params=n_t, layers=TARGET["num_hidden_layers"], hidden=TARGET["hidden_size"],
                               steps=t_steps, seconds=round(t_secs, 1), final_loss=round(sum(t_losses[-20:]) / max(1, len(t_losses[-20:])), 4),
                               heldout_loss_bf16=round(lt, 4)),
                   draft=dict(params=n_d, layers=DRAFT["num_hidden_layers"], hidden=DRAFT["hidden_size"],
                              steps=d_steps, seconds=round(d_secs, 1), final_loss=round(sum(d_losses[-20:]) / max(1, len(d_losses[-20:])), 4),
                              heldout_loss_bf16=round(ld, 4), alpha=args.alpha),
                   heldout_top1_agreement=round(agree, 4), seq=args.seq, batch=args.batch,
                   seconds=round(time.time() - t_all, 1))
    with open(os.path.join(args.out, "pair.json"), "w") as f:
        json.dump(summary, f, indent=2)
    log("PAIR target %d params (%d layers) held-out loss %.4f | draft %d params (%d layers) held-out loss %.4f | "
        "held-out top-1 agreement %.3f | %.1f s" % (n_t, TARGET["num_hidden_layers"], lt, n_d,
                                                    DRAFT["num_hidden_layers"], ld, agree, time.time() - t_all))


if __name__ == "__main__":
    main()
