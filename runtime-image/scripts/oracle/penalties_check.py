#!/usr/bin/env python3
"""Sampling penalties of `serve` against Hugging Face transformers (issue #30 item 4; runs on the GPU machine).

The server runs the checkpoint MODEL_DIR at URL. Prompts are held-out stdlib snippets tokenized by the checkpoint's own
tokenizer (BOS first) and sent as token ids, so both sides start from the same ids. Every greedy check decodes N tokens
with EOS held back on both sides (serve: min_tokens = max_tokens = N; transformers: min_new_tokens = N) and compares
the tokens one by one (serve's logprobs tokens against transformers' tokens decoded one by one). At the first difference
the server's token must be a near tie in transformers' processed scores (within MARGIN of the best, the vLLM-style
allowance for bf16 numerics), and the comparison of that prompt stops there. Checks:
  repetition   repetition_penalty 1.3 vs generate(repetition_penalty=1.3); the reference must differ from plain greedy
               on at least one prompt (else the check proves nothing and fails)
  bias-ban     logit_bias {first greedy token: -100} vs a transformers LogitsProcessor adding -100 to that id
  bias-force   logit_bias {id of "x": 100}: every token is that id
  frequency    frequency_penalty 1.0 + presence_penalty 0.5 vs a LogitsProcessor doing OpenAI's arithmetic over the
               generated tokens; and fewer repeated tokens than plain greedy, summed over the prompts
  bad-words    bad_words [a greedy token's text, the first that is one token either way] vs generate(bad_words_ids=...) (one-token words only)
  min-tokens   stop_token_ids [the second greedy token]: without min_tokens the answer stops at its first place (2,
               or 1 when the first token is the same), with min_tokens 6 it has at least 6
  seeded       temperature 1, seed 5, all penalties on: the same answer twice
Prints one line per check ("penalties <check>: PASS|FAIL ...") and exits 1 when one fails.

usage: penalties_check.py URL MODEL_NAME MODEL_DIR [--tokens 32] [--prompts 6]"""
import argparse
import json
import os
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

MARGIN = 0.25


def post(url, path, body):
    req = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.load(r)


def serve_greedy(url, model, ids, n, **extra):
    body = {"model": model, "prompt": ids, "max_tokens": n, "min_tokens": n, "temperature": 0, "logprobs": 1}
    body.update(extra)
    c = post(url, "/v1/completions", body)["choices"][0]
    return c["logprobs"]["tokens"], c


class Bias:
    def __init__(self, torch, bias):
        self.bias = bias

    def __call__(self, input_ids, scores):
        for i, b in self.bias.items():
            scores[:, i] = scores[:, i] + b
        return scores


class OpenAiPenalties:
    """OpenAI's frequency/presence penalties over the generated tokens (vLLM's arithmetic)."""

    def __init__(self, torch, prompt_len, frequency, presence):
        self.torch, self.plen, self.f, self.p = torch, prompt_len, frequency, presence

    def __call__(self, input_ids, scores):
        gen = input_ids[:, self.plen:]
        counts = self.torch.zeros_like(scores)
        if gen.shape[1] > 0:
            counts.scatter_add_(1, gen, self.torch.ones_like(gen, dtype=scores.dtype))
        return scores - self.f * counts - self.p * (counts > 0).to(scores.dtype)


def hf_greedy(torch, model, ids, n, processors=(), **kw):
    import transformers
    inp = torch.tensor([ids], device=model.device)
    out = model.generate(inp, attention_mask=torch.ones_like(inp), do_sample=False, max_new_tokens=n,
                         min_new_tokens=n, output_scores=True, return_dict_in_generate=True,
                         logits_processor=transformers.LogitsProcessorList(list(processors)), **kw)
    gen = out.sequences[0, len(ids):].tolist()
    return gen, [s[0].float() for s in out.scores]


def compare(strs, serve_tokens, ref_ids, scores):
    """(ok, positions compared, note): token by token; the first difference must be a near tie. strs: each id's text
    as serve writes a logprobs token (the id decoded alone, special tokens kept, no clean-up)."""
    ref = [strs[i] for i in ref_ids]
    for k, (a, b) in enumerate(zip(serve_tokens, ref)):
        if a == b:
            continue
        s = scores[k]
        best = float(s.max())
        cands = [i for i in range(min(s.shape[0], len(strs))) if strs[i] == a]
        gap = min((best - float(s[i]) for i in cands), default=float("inf"))
        return gap <= MARGIN, k, "position %d: serve %r, transformers %r, gap %.3f" % (k, a, b, gap)
    if len(serve_tokens) != len(ref):
        return False, min(len(serve_tokens), len(ref)), "lengths %d (serve) vs %d" % (len(serve_tokens), len(ref))
    return True, len(ref), "equal"


def repeats(tok_ids):
    return len(tok_ids) - len(set(tok_ids))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("model")
    ap.add_argument("model_dir")
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--prompts", type=int, default=6)
    a = ap.parse_args()
    import torch
    import transformers
    tok = transformers.AutoTokenizer.from_pretrained(a.model_dir)
    model = transformers.AutoModelForCausalLM.from_pretrained(a.model_dir, dtype=torch.bfloat16).to("cuda").eval()
    strs = [tok.decode([i], skip_special_tokens=False, clean_up_tokenization_spaces=False) for i in range(len(tok))]
    prompts = []
    for snip in common.prompt_texts(a.prompts):
        prompts.append(tok(snip["text"], add_special_tokens=True)["input_ids"][:48])
    n = a.tokens
    results = []

    def check(name, ok, note):
        results.append(ok)
        print("penalties %-12s %s  %s" % (name + ":", "PASS" if ok else "FAIL", note), flush=True)

    with torch.no_grad():
        # repetition penalty against generate(repetition_penalty=1.3)
        oks, notes, changed = [], [], 0
        for ids in prompts:
            plain, _ = hf_greedy(torch, model, ids, n)
            ref, sc = hf_greedy(torch, model, ids, n, repetition_penalty=1.3)
            changed += plain != ref
            got, _ = serve_greedy(a.url, a.model, ids, n, repetition_penalty=1.3)
            ok, k, note = compare(strs, got, ref, sc)
            oks.append(ok)
            notes.append(note)
        check("repetition", all(oks) and changed > 0,
              "%d/%d prompts match; the penalty changed %d reference answers; %s" % (
                  sum(oks), len(oks), changed, "; ".join(x for x in notes if x != "equal") or "all equal"))

        # logit_bias: ban the first greedy token, force "x"
        oks, notes = [], []
        for ids in prompts:
            plain, _ = hf_greedy(torch, model, ids, n)
            ban = {plain[0]: -100.0}
            ref, sc = hf_greedy(torch, model, ids, n, processors=[Bias(torch, ban)])
            got, _ = serve_greedy(a.url, a.model, ids, n, logit_bias={str(plain[0]): -100})
            ok, k, note = compare(strs, got, ref, sc)
            oks.append(ok and ref[0] != plain[0])
            notes.append(note)
        check("bias-ban", all(oks), "%d/%d prompts match; %s" % (
            sum(oks), len(oks), "; ".join(x for x in notes if x != "equal") or "all equal"))
        # bad_words: a greedy token's text, tokenized as vLLM does (as is, and with a leading space when that
        # gives as many tokens and another first one) vs generate(bad_words_ids=...); one-token words ban everywhere
        oks, notes, tried = [], [], 0
        for ids in prompts:
            plain, _ = hf_greedy(torch, model, ids, n)
            word, seqs = None, None
            for t in plain:  # the first generated token that is a printable word of one token (either spelling)
                w = strs[t].strip()
                if not w or not w.isprintable():
                    continue
                qs = [tok.encode(w, add_special_tokens=False)]
                sp = tok.encode(" " + w, add_special_tokens=False)
                if len(sp) == len(qs[0]) and sp[0] != qs[0][0]:
                    qs.append(sp)
                if all(len(q) == 1 for q in qs):  # transformers matches longer words over the prompt too
                    word, seqs = w, qs
                    break
            if word is None:
                continue
            tried += 1
            ref, sc = hf_greedy(torch, model, ids, n, bad_words_ids=seqs)
            got, _ = serve_greedy(a.url, a.model, ids, n, bad_words=[word])
            ok, k, note = compare(strs, got, ref, sc)
            oks.append(ok and ref != plain)
            notes.append(note)
        check("bad-words", tried > 0 and all(oks), "%d/%d prompts match; %s" % (
            sum(oks), tried, "; ".join(x for x in notes if x != "equal") or "all equal"))
        x = tok.convert_tokens_to_ids("x")
        got, c = serve_greedy(a.url, a.model, prompts[0], 8, logit_bias={str(x): 100})
        check("bias-force", got == ["x"] * 8, "8 tokens %r (want 'x' x 8)" % ("".join(got),))

        # frequency + presence against a LogitsProcessor with OpenAI's arithmetic; and fewer repeats
        oks, notes, rep_plain, rep_pen = [], [], 0, 0
        for ids in prompts:
            plain, _ = hf_greedy(torch, model, ids, n)
            ref, sc = hf_greedy(torch, model, ids, n, processors=[OpenAiPenalties(torch, len(ids), 1.0, 0.5)])
            got, _ = serve_greedy(a.url, a.model, ids, n, frequency_penalty=1.0, presence_penalty=0.5)
            ok, k, note = compare(strs, got, ref, sc)
            oks.append(ok)
            notes.append(note)
            plain_serve, _ = serve_greedy(a.url, a.model, ids, n)
            rep_plain += repeats(plain_serve)
            rep_pen += repeats(got)
        check("frequency", all(oks) and rep_pen < rep_plain,
              "%d/%d prompts match; repeated tokens %d with the penalties, %d without; %s" % (
                  sum(oks), len(oks), rep_pen, rep_plain, "; ".join(x for x in notes if x != "equal") or "all equal"))

        # min_tokens holds a stop token back
        plain, _ = hf_greedy(torch, model, prompts[1], n)
        stop = plain[1]
        first = plain.index(stop) + 1  # the stop token's first place in the greedy answer
        base = {"model": a.model, "prompt": prompts[1], "max_tokens": 16, "temperature": 0, "stop_token_ids": [stop]}
        early = post(a.url, "/v1/completions", base)
        held = post(a.url, "/v1/completions", dict(base, min_tokens=6))
        e, h = early["usage"]["completion_tokens"], held["usage"]["completion_tokens"]
        check("min-tokens", e == first and h >= 6, "stop token %d: %d tokens without min_tokens (want %d), %d with 6" % (
            stop, e, first, h))

        # seeded sampling with every penalty: reproducible
        body = {"model": a.model, "prompt": prompts[2], "max_tokens": n, "temperature": 1.0, "seed": 5,
                "presence_penalty": 0.3, "frequency_penalty": 0.4, "repetition_penalty": 1.2,
                "logit_bias": {str(x): 2}, "min_tokens": 4}
        t1 = post(a.url, "/v1/completions", body)["choices"][0]["text"]
        t2 = post(a.url, "/v1/completions", body)["choices"][0]["text"]
        check("seeded", t1 == t2 and len(t1) > 0, "same seed twice: %s" % ("equal" if t1 == t2 else "DIFFERENT"))
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
