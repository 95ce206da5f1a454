#!/usr/bin/env python3
"""Speculative decoding on the GPU machine: the engine's runs with --speculative against those without and against
transformers (needs numpy only; device-spec.sh makes the runs).

  --ref  REFDIR   reference.py's REFDIR/<model>/{prompts.jsonl, greedy.jsonl}
  --runs RUNSDIR  RUNSDIR/<model>/tp<N>/{base.jsonl, spec.jsonl[, spec-eager.jsonl]}: `generate` greedy (64 tokens, --logprobs 5) without
                  and with --speculative; RUNSDIR/sampled/{base.jsonl, spec.jsonl, spec-same.jsonl}: many copies of one
                  prompt sampled with per-prompt seeds (base and spec-same with the same seeds, spec with others)
  --out  RESULT.json

Rows (PASS/FAIL):
  greedy/ref  base|spec   each token the bf16 reference's, or at the first difference ours in its top-5 and its in
                          ours (compare.py's walk; then the prompt stops being compared)
  greedy/base spec        the same walk of the speculative run against the plain run (their own top-5); the exact-match
                          rate (prompts whose 64 tokens are all equal) is reported
  greedy/eager spec       (when spec-eager.jsonl is there: the same speculation with TENSORLANE_SPEC_GRAPHS=off) the
                          walk of the spec run (verify steps from CUDA graphs) against it; exact-match rate reported
  drafts      spec        the speculative run verified drafts (its summary's spec_drafts > 0), acceptance reported
  graphs      spec        (--verify-graphs on) the speculative run's verify steps replayed CUDA graphs (its summary's
                          verify_graph_replays > 0); greedy runs and the sampled spec run
  sampled/chi2 step S     two-sample chi-square (homogeneity) of the token at generated step S (1..), spec vs base,
                          ids expected fewer than 5 times pooled; PASS at p = 1e-4 (Wilson-Hilferty critical value);
                          total variation reported. Step 0 comes from the prefill in both and is left out.
  sampled/same-seed       informational: sequences of spec-same equal to base's (same seeds: the engine draws each
                          token with the counter of its position, so they agree unless the numerics of a verify step
                          flip a draw)
Exit code 1 when any row FAILs.
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import compare  # noqa: E402


def critical(df, z=3.719):
    a = 2.0 / (9 * df)
    return df * (1 - a + z * math.sqrt(a)) ** 3


def homogeneity(a, b):
    """Two-sample chi-square over dict counts a, b: (stat, df, critical, total variation)."""
    na, nb = sum(a.values()), sum(b.values())
    if na == 0 or nb == 0:
        return float("nan"), 0, float("nan"), float("nan")
    keys = sorted(set(a) | set(b))
    cells, pool_a, pool_b = [], 0, 0
    for k in keys:
        tot = a.get(k, 0) + b.get(k, 0)
        ea, eb = tot * na / (na + nb), tot * nb / (na + nb)
        if ea < 5 or eb < 5:
            pool_a += a.get(k, 0)
            pool_b += b.get(k, 0)
        else:
            cells.append((a.get(k, 0), b.get(k, 0)))
    if pool_a + pool_b > 0:
        cells.append((pool_a, pool_b))
    stat = 0.0
    for x, y in cells:
        tot = x + y
        ea, eb = tot * na / (na + nb), tot * nb / (na + nb)
        stat += (x - ea) ** 2 / ea + (y - eb) ** 2 / eb
    df = max(1, len(cells) - 1)
    tv = 0.5 * sum(abs(a.get(k, 0) / na - b.get(k, 0) / nb) for k in keys)
    return stat, df, critical(df), tv


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref", required=True)
    ap.add_argument("--runs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="llama qwen3")
    ap.add_argument("--tps", default="1 2")
    ap.add_argument("--max-new", type=int, default=64)
    ap.add_argument("--steps", type=int, default=4, help="sampled steps compared (1..)")
    ap.add_argument("--verify-graphs", choices=("on", "off"), default="on",
                    help="on: the spec runs' verify steps must have replayed CUDA graphs (TENSORLANE_SPEC_GRAPHS)")
    args = ap.parse_args()
    rows = []

    def add(model, run, check, status_ok, reason, metrics):
        rows.append({"model": model, "run": run, "check": check, "status": "PASS" if status_ok else "FAIL",
                     "reason": reason, "metrics": metrics})

    def agreement(base, spec, n):
        """(problems, metrics): compare.py's top-5 walk of run `spec` against run `base` over n prompts."""
        bad, exact, counts = [], 0, {"match": 0, "close": 0, "fail": 0, "short": 0}
        for i in range(n):
            if i not in base or i not in spec:
                bad.append("prompt %d missing" % i)
                continue
            b_ids, b_top = compare.our_greedy(base[i])
            s_ids, s_top = compare.our_greedy(spec[i])
            kind, m, detail = compare.walk(b_ids, b_top, s_ids, s_top, args.max_new)
            counts[kind] += 1
            exact += 1 if b_ids == s_ids else 0
            if kind in ("fail", "short") and len(bad) < 4:
                bad.append("prompt %d %s: %s" % (i, kind, detail))
        return bad, dict(counts, exact=exact, prompts=n, exact_rate=round(exact / max(1, n), 3))

    def graphs(model, run, summary, info=""):
        """With --verify-graphs on, a spec run's verify steps must have replayed CUDA graphs (its summary's count);
        `info`: reported only, for this reason."""
        vg = summary.get("verify_graph_replays")
        met = {"graph_replays": summary.get("graph_replays"), "verify_graph_replays": vg}
        if args.verify_graphs == "off" or info:
            rows.append({"model": model, "run": run, "check": "graphs spec", "status": "INFO", "reason": info,
                         "metrics": met})
            return
        add(model, run, "graphs spec", bool(vg),
            "" if vg else "no verify step replayed a CUDA graph (verify_graph_replays: %s)" % vg, met)

    for model in args.models.split():
        rdir = os.path.join(args.ref, model)
        try:
            prompts = common.read_jsonl(os.path.join(rdir, "prompts.jsonl"))
            greedy_ref = common.read_jsonl(os.path.join(rdir, "greedy.jsonl"))
        except (OSError, ValueError) as e:
            add(model, "-", "reference", False, "unreadable reference: %s" % e, {})
            continue
        refs = [(g.get("ids", []), g.get("top5", [])) for g in greedy_ref]
        while len(refs) < len(prompts):
            refs.append(([], []))
        for tp in args.tps.split():
            run = "tp%s" % tp
            d = os.path.join(args.runs, model, run)
            got = {}
            for kind in ("base", "spec"):
                try:
                    ours, summary = compare.read_generate(os.path.join(d, kind + ".jsonl"))
                    met, reasons = compare.greedy_metrics(refs, ours, prompts, args.max_new)
                    got[kind] = (ours, summary)
                except compare.Missing as e:
                    met, reasons = {}, [str(e)]
                met.pop("per_prompt", None)
                add(model, run, "greedy/ref " + kind, not reasons, "; ".join(reasons), met)
            if "base" not in got or "spec" not in got:
                add(model, run, "greedy/base spec", False, "a run is missing", {})
                continue
            bad, met = agreement(got["base"][0], got["spec"][0], len(prompts))
            add(model, run, "greedy/base spec", not bad, "; ".join(bad), met)
            eager = os.path.join(d, "spec-eager.jsonl")
            if os.path.exists(eager):  # the same speculation with verify steps eager (TENSORLANE_SPEC_GRAPHS=off)
                try:
                    bad, met = agreement(compare.read_generate(eager)[0], got["spec"][0], len(prompts))
                except compare.Missing as e:
                    bad, met = [str(e)], {}
                add(model, run, "greedy/eager spec", not bad, "; ".join(bad), met)
            s = got["spec"][1] or {}
            drafts, dt, acc = s.get("spec_drafts", 0), s.get("spec_draft_tokens", 0), s.get("spec_accepted_tokens", 0)
            add(model, run, "drafts spec", drafts > 0, "" if drafts > 0 else "no draft was verified",
                {"drafts": drafts, "draft_tokens": dt, "accepted": acc,
                 "acceptance": round(acc / dt, 3) if dt else None,
                 "per_position": s.get("spec_accepted_per_position"),
                 "decode_steps": s.get("decode_steps"), "tokens": s.get("decode_tokens")})
            graphs(model, run, s)

    sdir = os.path.join(args.runs, "sampled")
    if os.path.isdir(sdir):
        seqs = {}
        for kind in ("base", "spec", "spec-same"):
            try:
                ours, summary = compare.read_generate(os.path.join(sdir, kind + ".jsonl"))
                seqs[kind] = ([ours[i]["generated_ids"] for i in sorted(ours)], summary or {})
            except compare.Missing as e:
                add("sampled", kind, "sampled/run", False, str(e), {})
        if "base" in seqs and "spec" in seqs:
            for step in range(1, args.steps + 1):
                a, b = {}, {}
                for ids in seqs["base"][0]:
                    if len(ids) > step:
                        a[ids[step]] = a.get(ids[step], 0) + 1
                for ids in seqs["spec"][0]:
                    if len(ids) > step:
                        b[ids[step]] = b.get(ids[step], 0) + 1
                stat, df, crit, tv = homogeneity(a, b)
                ok = stat == stat and stat <= crit
                add("sampled", "spec vs base", "sampled/chi2 step %d" % step, ok,
                    "" if ok else "chi-square %.1f > %.1f (df %d)" % (stat, crit, df),
                    {"chi2": round(stat, 2), "df": df, "critical": round(crit, 2), "tv": round(tv, 4),
                     "samples": [sum(a.values()), sum(b.values())]})
            s = seqs["spec"][1]
            add("sampled", "spec", "sampled/drafts", s.get("spec_drafts", 0) > 0,
                "" if s.get("spec_drafts", 0) > 0 else "no draft was verified",
                {"drafts": s.get("spec_drafts"), "draft_tokens": s.get("spec_draft_tokens"),
                 "accepted": s.get("spec_accepted_tokens")})
            # thousands of copies of one prompt: steps of up to --max-seqs rows x (k + 1) tokens, over the verify
            # graphs' token cap (GraphBuckets), run eagerly by design (H200, 2026-12-04: 0 replays at 2,000 copies)
            graphs("sampled", "spec", s, info="rows x (k + 1) over the verify graphs' token cap: eager by design")
        if "base" in seqs and "spec-same" in seqs:
            same = sum(1 for x, y in zip(seqs["base"][0], seqs["spec-same"][0]) if x == y)
            n = min(len(seqs["base"][0]), len(seqs["spec-same"][0]))
            rows.append({"model": "sampled", "run": "spec-same", "check": "sampled/same-seed", "status": "INFO",
                         "reason": "", "metrics": {"equal": same, "of": n, "rate": round(same / max(1, n), 4)}})

    with open(args.out, "w") as f:
        json.dump(rows, f, indent=1)
    failed = 0
    print("%-8s %-13s %-22s %-6s %s" % ("model", "run", "check", "result", "metrics / reason"))
    for r in rows:
        m = {k: v for k, v in r["metrics"].items() if not isinstance(v, (list, dict)) or k == "per_position"}
        print("%-8s %-13s %-22s %-6s %s%s" % (r["model"], r["run"], r["check"], r["status"], json.dumps(m),
                                              (" -- " + r["reason"]) if r["reason"] else ""))
        failed += r["status"] == "FAIL"
    print("spec compare: %d rows, %d failed" % (len(rows), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
