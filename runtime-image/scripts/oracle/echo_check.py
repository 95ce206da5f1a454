#!/usr/bin/env python3
"""The prompt logprobs `serve` returned for echo + logprobs (agent_client.py's --out) against Hugging Face transformers
on the same checkpoint and the same token ids (GPU machine; torch, transformers): token i's logprob given tokens < i,
from an fp32 forward of the bf16 weights. PASS when the mean |difference| is at most 0.05 and the largest at most 0.5
(bf16 activations in the engine), and the first token is unscored (null). One line "agent echo-vs-transformers: ...";
exit 1 on FAIL.

usage: echo_check.py AGENT_JSON MODEL_DIR
"""
import json
import sys


def main():
    report, model_dir = json.load(open(sys.argv[1])), sys.argv[2]
    e = report.get("echo")
    if not e:
        print("agent echo-vs-transformers:  FAIL  no echo in %s" % sys.argv[1])
        sys.exit(1)
    import torch
    import transformers
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).to("cuda").eval()
    ids = e["ids"]
    with torch.no_grad():
        logits = model(torch.tensor([ids], device="cuda")).logits[0].double()
    lp = torch.log_softmax(logits, dim=-1)
    ref = [float(lp[i - 1, ids[i]]) for i in range(1, len(ids))]
    got = e["token_logprobs"]
    diffs = [abs(g - r) for g, r in zip(got[1:], ref) if g is not None]
    ok = got[0] is None and len(diffs) == len(ref) and diffs and sum(diffs) / len(diffs) <= 0.05 and max(diffs) <= 0.5
    print("agent echo-vs-transformers:  %s  %d prompt logprobs vs fp32 transformers: mean |diff| %.4f, max %.4f" % (
        "PASS" if ok else "FAIL", len(diffs), sum(diffs) / max(1, len(diffs)), max(diffs) if diffs else float("nan")))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
