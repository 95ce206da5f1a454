"""Greedy outputs of `serve` with the prefix cache on against the same server with it off (issue #33's correctness
check, as vLLM's `check_logprobs_close`): per choice, every token must be the other run's token; at the first
difference each run's token must be in the other's top-5 (a near tie) and the comparison of that choice stops there.
Requests share a long prefix of token ids and come in an order that makes the cache hit: a first request, another tail
after the same prefix, the first prompt with more ids after it, the first again, an n = 3 request and
a burst of 8 concurrent requests with one prefix. Prints one line per model and exits 1 on a mismatch or when the
cache-on run reports no cached tokens (or the cache-off run reports some).

usage: prefix_check.py ON_URL OFF_URL MODEL VOCAB [SEEDS]
SEEDS: comma-separated seeds of the requests' token ids (default 33); each seed is one round of the requests above with
its own prefix, the rounds one after another (device-prefix-kv.sh sends three while loadgen keeps the KV cache full)."""
import json
import random
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor


def complete(url, model, ids, n=1, max_tokens=24):
    body = {"model": model, "prompt": ids, "max_tokens": max_tokens, "temperature": 0, "ignore_eos": True,
            "logprobs": 5, "n": n}
    req = urllib.request.Request(url + "/v1/completions", json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)


def choices(resp):
    out = []
    for c in sorted(resp["choices"], key=lambda c: c["index"]):
        lp = c["logprobs"]
        out.append((lp["tokens"], lp["token_logprobs"], lp["top_logprobs"]))
    return out


def close(a, b):
    """vLLM's check on one choice: (ok, compared tokens, max |logprob diff| over equal tokens)."""
    (ta, la, topa), (tb, lb, topb) = a, b
    diff = 0.0
    for i, (x, y) in enumerate(zip(ta, tb)):
        if x == y:
            diff = max(diff, abs(la[i] - lb[i]))
            continue
        return (x in topb[i] and y in topa[i]), i, diff
    return len(ta) == len(tb), len(ta), diff


def requests(vocab, seed):
    rnd = random.Random(seed)
    ids = lambda n: [rnd.randrange(3, vocab) for _ in range(n)]
    prefix = ids(200)
    t1, t2, t3 = ids(5), ids(7), ids(4)
    return prefix, t1, t2, t3, ids


def run(url, model, vocab, seeds=(33,)):
    res = []
    for seed in seeds:
        res.extend((f"seed {seed} {name}", r) for name, r in run_seed(url, model, vocab, seed))
    return res


def run_seed(url, model, vocab, seed):
    prefix, t1, t2, t3, ids = requests(vocab, seed)
    res = []
    first = complete(url, model, prefix + t1)
    res.append(("first", first))
    res.append(("other tail", complete(url, model, prefix + t2)))
    res.append(("longer prompt", complete(url, model, prefix + t1 + t3)))  # the first's blocks and more
    res.append(("first again", complete(url, model, prefix + t1)))
    res.append(("n=3", complete(url, model, prefix + ids(3), n=3)))
    burst_tail = [ids(6) for _ in range(8)]
    with ThreadPoolExecutor(8) as ex:
        for i, r in enumerate(ex.map(lambda t: complete(url, model, prefix + t), burst_tail)):
            res.append((f"burst {i}", r))
    return res


def main():
    on_url, off_url, model, vocab = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    seeds = [int(x) for x in sys.argv[5].split(",")] if len(sys.argv) > 5 else [33]
    on, off = run(on_url, model, vocab, seeds), run(off_url, model, vocab, seeds)
    bad, compared, maxdiff, cached_on, cached_off = [], 0, 0.0, 0, 0
    for (name, a), (_, b) in zip(on, off):
        cached_on += a["usage"].get("prompt_tokens_details", {}).get("cached_tokens", 0)
        cached_off += b["usage"].get("prompt_tokens_details", {}).get("cached_tokens", 0)
        for ca, cb in zip(choices(a), choices(b)):
            ok, n, d = close(ca, cb)
            compared += n
            maxdiff = max(maxdiff, d)
            if not ok:
                bad.append(f"{name}: token {n}: on {ca[0][n]!r} off {cb[0][n]!r}")
    ok = not bad and cached_on > 0 and cached_off == 0
    print(f"{'PASS' if ok else 'FAIL'} {model}: {len(on)} requests, {compared} tokens compared, "
          f"max |logprob on - off| {maxdiff:.4f}, cached prompt tokens on {cached_on} / off {cached_off}"
          + ("".join("\n   " + b for b in bad)))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
