#!/usr/bin/env python3
"""The draft-model speculation benchmark's table (device-spec-draft.sh; needs the standard library only).

  --bench DIR     DIR/{base,ngram,draft}.jsonl: `generate --json --max-seqs 1` on the same held-out prompts, greedy, EOS
                  ignored, all through the scheduler (base with --scheduler); DIR/bench-{target,draft}.json:
                  `bench-model --batches 1 --json` of each model (the wall time of one decode step at batch 1)
  --pair FILE     make_spec_pair.py's pair.json (parameters, losses, held-out agreement), reported
  --k K           the draft's guesses per step
  --verify-8b R   a verify step of k guesses / a decode step on the Llama-3.1-8B geometry at batch 1 (measured 1.144 at
                  k = 4 on 2026-12-03, results/h200-2026-12-03-spec-bench), for the projection
  --out FILE      the numbers as JSON

Rows: per run the steady batch-1 tokens/s (generate's steady_tokens_per_s: the requests after the first to finish,
prefill included), the speed-up over base, target steps, drafts, acceptance (accepted / proposed guesses), accepted
guesses per verify step and per position, and the greedy tokens' exact-match rate against base (informational: the
runs are greedy, so they agree but for near-ties flipped by the verify steps' other numerics).
Then the cost of a decode step of each model (bench-model, wall median at batch 1) and their ratio, and, labelled as a
projection, the speed-up the measured acceptance would give on the 8B geometry: tokens per verify step over
(verify cost + k x draft step cost), for the pair's measured draft/target cost and for a draft a tenth of the target's.

Judged (exit 1 when one fails): the draft's speed-up >= --min-speedup (1.5), the draft >= --min-cost-ratio (4) times
cheaper per step than the target, the draft run verified guesses and accepted some. n-gram's figures are reported only.
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402


def finite(x):
    return isinstance(x, (int, float)) and not (isinstance(x, float) and (math.isnan(x) or math.isinf(x)))


def run_row(path, base_ids):
    rows, s = compare.read_generate(path)
    s = s or {}
    rate = s.get("steady_tokens_per_s")
    if not finite(rate) or rate <= 0:
        rate = s.get("decode_tokens_per_s")
    drafts, dt, acc = s.get("spec_drafts", 0) or 0, s.get("spec_draft_tokens", 0) or 0, s.get("spec_accepted_tokens", 0) or 0
    ids = {i: r["generated_ids"] for i, r in rows.items()}
    exact = None
    if base_ids is not None:
        exact = sum(1 for i in base_ids if ids.get(i) == base_ids[i]) / max(1, len(base_ids))
    return dict(tokens_per_s=rate, tokens=s.get("decode_tokens"), steps=s.get("decode_steps"), drafts=drafts,
                draft_tokens=dt, accepted=acc, acceptance=(acc / dt) if dt else None,
                accepted_per_verify=(acc / drafts) if drafts else None,
                per_position=s.get("spec_accepted_per_position"), exact_vs_base=exact,
                verify_graph_replays=s.get("verify_graph_replays"), draft_graph_replays=s.get("draft_graph_replays"),
                draft_weight_bytes=s.get("draft_weight_bytes"), draft_kv_tokens=s.get("draft_kv_tokens"),
                draft_steps=s.get("draft_steps"), draft_seconds=s.get("draft_seconds"),
                run_seconds=s.get("decode_seconds")), ids


def step_ms(path):
    with open(path) as f:
        d = json.load(f)
    for r in d.get("decode", []):
        if r.get("batch") == 1:
            return r["wall_ms"]["median"]
    raise compare.Missing("%s: no batch-1 decode row" % path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--pair")
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--verify-8b", type=float, default=1.144)
    ap.add_argument("--min-speedup", type=float, default=1.5)
    ap.add_argument("--min-cost-ratio", type=float, default=4.0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    problems, out = [], {}
    runs, base_ids = {}, None
    for name in ("base", "ngram", "draft"):
        try:
            runs[name], ids = run_row(os.path.join(args.bench, name + ".jsonl"), base_ids)
            if name == "base":
                base_ids = ids
        except (compare.Missing, OSError, ValueError, KeyError) as e:
            problems.append("%s run: %s" % (name, e))
    base = runs.get("base", {}).get("tokens_per_s")
    for name, r in runs.items():
        r["speedup"] = (r["tokens_per_s"] / base) if finite(base) and base > 0 and finite(r["tokens_per_s"]) else None
    out["runs"] = runs

    costs = {}
    for m in ("target", "draft"):
        try:
            costs[m] = step_ms(os.path.join(args.bench, "bench-%s.json" % m))
        except (compare.Missing, OSError, ValueError, KeyError) as e:
            problems.append("bench-model %s: %s" % (m, e))
    ratio = costs["target"] / costs["draft"] if "target" in costs and "draft" in costs and costs["draft"] > 0 else None
    out["decode_step_ms_b1"] = costs
    out["target_over_draft_step_cost"] = ratio
    if args.pair and os.path.isfile(args.pair):
        with open(args.pair) as f:
            out["pair"] = json.load(f)

    d = runs.get("draft")
    proj = {}
    if d and d.get("drafts") and d.get("per_position"):
        tokens_per_verify = 1 + d["accepted"] / d["drafts"]
        for label, c in (("measured pair", (1 / ratio) if ratio else None), ("draft a tenth of the target", 0.1)):
            if c is not None:
                proj[label] = dict(draft_over_target=round(c, 4),
                                   speedup=round(tokens_per_verify / (args.verify_8b + args.k * c), 3))
        out["projection_8b"] = dict(verify_over_decode=args.verify_8b, k=args.k,
                                    tokens_per_verify=round(tokens_per_verify, 3), cases=proj)

    # judgement
    if d is None:
        problems.append("no draft run")
    else:
        if not d.get("drafts"):
            problems.append("the draft run verified no guesses")
        elif not d.get("accepted"):
            problems.append("the draft run accepted no guess")
        sp = d.get("speedup")
        if sp is None or sp < args.min_speedup:
            problems.append("draft speed-up %s < %.2f" % ("n/a" if sp is None else "%.3f" % sp, args.min_speedup))
    if ratio is None or ratio < args.min_cost_ratio:
        problems.append("the draft is %s x cheaper per step than the target, < %.1f" % (
            "n/a" if ratio is None else "%.2f" % ratio, args.min_cost_ratio))
    out["problems"] = problems
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)

    def fmt(x, p="%.3f"):
        return "-" if x is None else (p % x if isinstance(x, float) else str(x))

    print("batch-1 end to end, greedy, the same held-out prompts (steady tokens/s: prefill included, the first request "
          "left out)")
    print("%-6s %10s %8s %7s %7s %8s %10s %9s %8s  %s" % ("run", "tokens/s", "speedup", "steps", "drafts", "accept",
                                                         "acc/verify", "exact", "vgraphs", "accepted per position"))
    for name in ("base", "ngram", "draft"):
        r = runs.get(name)
        if r is None:
            print("%-6s (missing)" % name)
            continue
        print("%-6s %10s %8s %7s %7s %8s %10s %9s %8s  %s" % (
            name, fmt(r["tokens_per_s"], "%.1f"), fmt(r["speedup"]), fmt(r["steps"]), fmt(r["drafts"]),
            fmt(r["acceptance"]), fmt(r["accepted_per_verify"]), fmt(r["exact_vs_base"]),
            fmt(r["verify_graph_replays"]), r.get("per_position")))
    dr = runs.get("draft") or {}
    if dr.get("draft_steps"):
        print("draft run: %d draft steps in %.3f s (%.1f us each, %.0f%% of the run's %.3f s), %s target steps" % (
            dr["draft_steps"], dr["draft_seconds"], 1e6 * dr["draft_seconds"] / dr["draft_steps"],
            100 * dr["draft_seconds"] / max(1e-9, dr["run_seconds"] or 0), dr["run_seconds"] or 0, dr["steps"]))
        print("decode step at batch 1 (bench-model wall median): target %s ms, draft %s ms: the draft %s x cheaper" % (
        fmt(costs.get("target")), fmt(costs.get("draft")), fmt(ratio, "%.2f")))
    if "pair" in out:
        p = out["pair"]
        print("pair: target %s params %s layers held-out loss %s; draft %s params %s layers held-out loss %s; "
              "held-out top-1 agreement %s" % (p["target"]["params"], p["target"]["layers"],
                                               p["target"]["heldout_loss_bf16"], p["draft"]["params"],
                                               p["draft"]["layers"], p["draft"]["heldout_loss_bf16"],
                                               p["heldout_top1_agreement"]))
    if proj:
        print("PROJECTION (not a measurement): the draft run's %.3f tokens per verify step on the 8B geometry (verify "
              "k=%d costs %.3fx a decode step): %s" % (
                  out["projection_8b"]["tokens_per_verify"], args.k, args.verify_8b,
                  "; ".join("%s (draft/target %.3f): %.2fx" % (k, v["draft_over_target"], v["speedup"])
                            for k, v in proj.items())))
    for pr in problems:
        print("FAIL: " + pr)
    print("spec draft table: %s" % ("PASS" if not problems else "FAIL"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
