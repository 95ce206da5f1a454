#!/usr/bin/env python3
"""Compares the engine's runs with the Hugging Face references (needs numpy only).

  --ref  REFDIR   made by reference.py: REFDIR/<model>/{prompts.jsonl, ref-<i>.f32, greedy.jsonl, tok-*.jsonl}
  --runs RUNSDIR  RUNSDIR/<model>/tp<N>[-suffix]/{generate.jsonl, logits/prompt-<i>.f32}, and the tokenizer output
                  RUNSDIR/<model>/tokenize.jsonl (or tp*/tokenize.jsonl)
  --out  RESULT.json
  --ref-of "RUN=REF ..."  (optional) compare the runs RUNSDIR/RUN with the reference REFDIR/REF (e.g. an FP8
                  checkpoint's runs with the reference made from its dequantized weights: llama128-fp8b=llama128-fp8b-deq);
                  then only these RUNs are compared

Checks, one row each (PASS/FAIL), per model and run directory:
  logits/ref   prefill logits vs the fp32 reference: cosine per position (min >= 0.999), top-1 agreement >= 98%
  greedy/ref   64 greedy tokens vs the bf16 reference; at the first difference the step counts as "close" when our
               token is in the reference's top-5 and the reference's token is in our top-5 (then the prompt stops
               being compared), otherwise FAIL
  logits/tp1   prefill logits vs our own tp1 dump (tp != 1)
  greedy/tp1   greedy tokens vs our own tp1 run, the same walk (tp != 1)
  tokenizer    exact equality of ids, ids_plain, decoded, decoded_skip (once per model)
A missing or unreadable file makes that row FAIL with the reason. Exit code 1 when any row FAILs.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

TOK_KEYS = ("ids", "ids_plain", "decoded", "decoded_skip")


class Missing(Exception):
    pass


def load_f32(path, rows):
    import numpy as np
    if not os.path.isfile(path):
        raise Missing("missing %s" % path)
    a = np.fromfile(path, dtype="<f4")
    if rows <= 0 or a.size == 0 or a.size % rows:
        raise Missing("%s: %d floats, not a multiple of %d rows" % (path, a.size, rows))
    return a.reshape(rows, a.size // rows)


def logits_metrics(ref_path, our_dir, prompts, cos_min, top1_min):
    """Cosine and top-1 between reference logits (file ref_path(i)) and ours (our_dir/prompt-<i>.f32)."""
    import numpy as np
    cos_all, agree, total, per_prompt, problems = [], 0, 0, [], []
    nonfinite = 0
    for i, p in enumerate(prompts):
        n = len(p["ids"])
        try:
            ref = load_f32(ref_path(i), n)
            ours = load_f32(os.path.join(our_dir, "prompt-%d.f32" % i), n)
        except Missing as e:
            problems.append(str(e))
            continue
        if ref.shape != ours.shape:
            problems.append("prompt %d: shape %s vs reference %s" % (i, ours.shape, ref.shape))
            continue
        if not np.isfinite(ours).all():
            nonfinite += 1
            problems.append("prompt %d: non-finite logits" % i)
            continue
        r = ref.astype(np.float64)
        o = ours.astype(np.float64)
        num = (r * o).sum(axis=1)
        den = np.linalg.norm(r, axis=1) * np.linalg.norm(o, axis=1)
        cos = np.where(den > 0, num / np.maximum(den, 1e-300), 0.0)
        a = int((r.argmax(axis=1) == o.argmax(axis=1)).sum())
        cos_all.extend(cos.tolist())
        agree += a
        total += n
        per_prompt.append({"index": i, "len": n, "cos_min": round(float(cos.min()), 6),
                           "worst_pos": int(cos.argmin()), "top1_agree": a,
                           "below": [int(x) for x in np.nonzero(cos < cos_min)[0]],
                           "max_abs_diff": round(float(np.abs(r - o).max()), 5)})
    m = {"prompts": len(per_prompt), "positions": total}
    if cos_all:
        m.update(cos_min=round(min(cos_all), 6), cos_mean=round(sum(cos_all) / len(cos_all), 6),
                 top1_pct=round(100.0 * agree / max(1, total), 2))
    m["per_prompt"] = per_prompt
    reasons = list(problems[:5])
    if problems:
        reasons.insert(0, "%d prompt(s) not compared" % len(problems))
    if not cos_all:
        reasons.append("nothing compared")
    else:
        if m["cos_min"] < cos_min:
            reasons.append("cos_min %.6f < %.4f" % (m["cos_min"], cos_min))
        if m["top1_pct"] < top1_min:
            reasons.append("top1 %.2f%% < %.1f%%" % (m["top1_pct"], top1_min))
    return m, reasons


def read_generate(path):
    """index -> row of the engine's generate stdout; plus the summary object (or None)."""
    if not os.path.isfile(path):
        raise Missing("missing %s" % path)
    by_index, summary = {}, None
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        for k, line in enumerate(f):
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if not isinstance(obj, dict):
                continue
            if "summary" in obj and len(obj) == 1:
                summary = obj["summary"]
            elif "generated_ids" in obj:
                by_index[int(obj.get("index", len(by_index)))] = obj
    if not by_index:
        raise Missing("%s: no result lines" % path)
    return by_index, summary


def top_ids(entry):
    """Our logprobs entry -> list of top ids ([[id, lp], ...] or [{"token": id, ...}, ...])."""
    out = []
    for t in (entry or {}).get("top") or []:
        if isinstance(t, (list, tuple)) and t:
            out.append(int(t[0]))
        elif isinstance(t, dict):
            v = t.get("token", t.get("id"))
            if v is not None:
                out.append(int(v))
    return out


def our_greedy(row):
    ids = [int(x) for x in row.get("generated_ids") or []]
    lps = row.get("logprobs") or []
    tops = [top_ids(e) for e in lps]
    return ids, tops


def walk(ref_ids, ref_top, our_ids, our_top, n):
    """('match'|'close'|'fail'|'short', matched prefix length, detail)."""
    m = 0
    while m < n:
        if m >= len(our_ids):
            return "short", m, "only %d tokens" % len(our_ids)
        if m >= len(ref_ids):
            return "short", m, "reference has only %d tokens" % len(ref_ids)
        if our_ids[m] == ref_ids[m]:
            m += 1
            continue
        rt = ref_top[m] if m < len(ref_top) else []
        ot = our_top[m] if m < len(our_top) else []
        if our_ids[m] in rt and ref_ids[m] in ot:
            return "close", m, "step %d: ours %d, ref %d" % (m, our_ids[m], ref_ids[m])
        return "fail", m, "step %d: ours %d (in ref top5: %s), ref %d (in our top5: %s)" % (
            m, our_ids[m], our_ids[m] in rt, ref_ids[m], ref_ids[m] in ot)
    return "match", m, ""


def greedy_metrics(refs, ours_by_index, prompts, n, check_prompt_ids=True):
    """refs: list of (ids, top5) per prompt; ours_by_index: index -> generate row."""
    res, reasons, lens = [], [], []
    counts = {"match": 0, "close": 0, "fail": 0, "short": 0, "missing": 0}
    prompt_mismatch = 0
    for i, p in enumerate(prompts):
        row = ours_by_index.get(i)
        if row is None:
            counts["missing"] += 1
            continue
        if check_prompt_ids and [int(x) for x in row.get("prompt_ids") or []] != list(p["ids"]):
            prompt_mismatch += 1
        ids, tops = our_greedy(row)
        ref_ids, ref_top = refs[i]
        kind, m, detail = walk(ref_ids, ref_top, ids, tops, n)
        counts[kind] += 1
        lens.append(m)
        res.append({"index": i, "result": kind, "matched": m, "detail": detail,
                    "finish_reason": row.get("finish_reason")})
        if kind in ("fail", "short") and len(reasons) < 4:
            reasons.append("prompt %d %s: %s" % (i, kind, detail))
    met = dict(counts)
    met["prompts"] = len(prompts)
    if lens:
        met.update(matched_mean=round(sum(lens) / len(lens), 2), matched_min=min(lens))
    met["per_prompt"] = res
    if counts["missing"]:
        reasons.insert(0, "%d prompt(s) missing from the output" % counts["missing"])
    if prompt_mismatch:
        reasons.insert(0, "%d prompt(s) with prompt_ids != prompts.jsonl" % prompt_mismatch)
    return met, reasons


def tokenizer_row(ref_dir, run_model_dir):
    exp_path = os.path.join(ref_dir, "tok-expected.jsonl")
    cands = [os.path.join(run_model_dir, "tokenize.jsonl")]
    if os.path.isdir(run_model_dir):
        cands += [os.path.join(run_model_dir, d, "tokenize.jsonl") for d in sorted(os.listdir(run_model_dir))]
    ours_path = next((c for c in cands if os.path.isfile(c)), None)
    if ours_path is None:
        return {}, ["missing %s" % cands[0]]
    try:
        exp = common.read_jsonl(exp_path)
        inp = common.read_jsonl(os.path.join(ref_dir, "tok-input.jsonl"))
        ours = common.read_jsonl(ours_path, skip_bad=True)
    except (OSError, ValueError) as e:
        return {}, ["unreadable: %s" % e]
    met = {"cases": len(exp), "lines": len(ours), "file": ours_path}
    reasons, examples = [], []
    if len(ours) != len(exp):
        reasons.append("%d output lines for %d inputs" % (len(ours), len(exp)))
    for k in TOK_KEYS:
        eq = 0
        for j, e in enumerate(exp):
            o = ours[j] if j < len(ours) and isinstance(ours[j], dict) else {}
            if o.get(k) == e.get(k):
                eq += 1
            elif len(examples) < 6:
                examples.append({"case": j, "key": k, "text": inp[j].get("text") if j < len(inp) else None,
                                 "expected": e.get(k), "ours": o.get(k)})
        met[k + "_equal"] = eq
        if eq != len(exp):
            reasons.append("%s: %d/%d equal" % (k, eq, len(exp)))
    met["examples"] = examples
    return met, reasons


def run_dirs(run_model_dir):
    if not os.path.isdir(run_model_dir):
        return []
    ds = [d for d in os.listdir(run_model_dir) if re.match(r"^tp\d+", d) and os.path.isdir(os.path.join(run_model_dir, d))]

    def key(d):
        mm = re.match(r"^tp(\d+)(.*)$", d)
        return (int(mm.group(1)), mm.group(2))
    return sorted(ds, key=key)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref", required=True)
    ap.add_argument("--runs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-new", type=int, default=64)
    ap.add_argument("--cos-min", type=float, default=0.999)
    ap.add_argument("--top1-min", type=float, default=98.0)
    ap.add_argument("--tp-cos-min", type=float, default=0.999)
    ap.add_argument("--tp-top1-min", type=float, default=98.0)
    ap.add_argument("--only", default=os.environ.get("MODELS", ""))
    ap.add_argument("--ref-of", default="", help="'RUN=REF ...': runs RUNS/RUN against the reference REF/REF")
    args = ap.parse_args()
    ref_of = {}
    for item in args.ref_of.replace(",", " ").split():
        run_name, sep, ref_name = item.partition("=")
        if not sep or not run_name or not ref_name:
            raise SystemExit("--ref-of: %r is not RUN=REF" % item)
        ref_of[run_name] = ref_name

    only = common.parse_only(args.only)
    models = sorted(d for d in os.listdir(args.ref) if os.path.isfile(os.path.join(args.ref, d, "prompts.jsonl"))) \
        if os.path.isdir(args.ref) else []
    order = {n: k for k, n in enumerate(common.MODEL_NAMES)}
    models.sort(key=lambda n: (order.get(n, 99), n))
    if ref_of:
        models = list(ref_of)
    if only:
        models = [m for m in models if m in only]
    rows = []

    def add(model, run, check, metrics, reasons, extra=None):
        row = {"model": model, "run": run, "check": check, "status": "FAIL" if reasons else "PASS",
               "reason": "; ".join(reasons), "metrics": metrics}
        if extra:
            row.update(extra)
        rows.append(row)

    if not models:
        add("-", "-", "reference", {}, ["no reference models under %s" % args.ref])

    for model in models:
        rdir = os.path.join(args.ref, ref_of.get(model, model))
        if ref_of and not os.path.isfile(os.path.join(rdir, "prompts.jsonl")):
            add(model, "-", "reference", {}, ["no reference %s for %s" % (rdir, model)])
            continue
        mdir = os.path.join(args.runs, model)
        try:
            prompts = common.read_jsonl(os.path.join(rdir, "prompts.jsonl"))
            greedy_ref = common.read_jsonl(os.path.join(rdir, "greedy.jsonl"))
        except (OSError, ValueError) as e:
            add(model, "-", "reference", {}, ["unreadable reference: %s" % e])
            continue
        refs = [(g.get("ids", []), g.get("top5", [])) for g in greedy_ref]
        while len(refs) < len(prompts):
            refs.append(([], []))

        try:
            met, reasons = tokenizer_row(rdir, mdir)
        except Exception as e:  # noqa: BLE001
            met, reasons = {}, ["%s: %s" % (type(e).__name__, e)]
        add(model, "-", "tokenizer", met, reasons)

        runs = run_dirs(mdir)
        if not runs:
            add(model, "-", "runs", {}, ["no run directories under %s" % mdir])
            continue
        tp1 = None
        if "tp1" in runs:
            try:
                tp1 = read_generate(os.path.join(mdir, "tp1", "generate.jsonl"))[0]
            except Missing:
                tp1 = None
        for run in runs:
            d = os.path.join(mdir, run)
            # logits vs the fp32 reference
            try:
                met, reasons = logits_metrics(lambda i: os.path.join(rdir, "ref-%d.f32" % i), os.path.join(d, "logits"),
                                              prompts, args.cos_min, args.top1_min)
            except Exception as e:  # noqa: BLE001
                met, reasons = {}, ["%s: %s" % (type(e).__name__, e)]
            add(model, run, "logits/ref", met, reasons)
            # greedy vs the bf16 reference
            summary = None
            try:
                ours, summary = read_generate(os.path.join(d, "generate.jsonl"))
                met, reasons = greedy_metrics(refs, ours, prompts, args.max_new)
            except Missing as e:
                ours, met, reasons = None, {}, [str(e)]
            except Exception as e:  # noqa: BLE001
                ours, met, reasons = None, {}, ["%s: %s" % (type(e).__name__, e)]
            add(model, run, "greedy/ref", met, reasons, {"engine_summary": summary})
            if run == "tp1":
                continue
            # vs our own tp1
            if "tp1" not in runs:
                add(model, run, "logits/tp1", {}, ["no tp1 run to compare with"])
                add(model, run, "greedy/tp1", {}, ["no tp1 run to compare with"])
                continue
            try:
                met, reasons = logits_metrics(lambda i: os.path.join(mdir, "tp1", "logits", "prompt-%d.f32" % i),
                                              os.path.join(d, "logits"), prompts, args.tp_cos_min, args.tp_top1_min)
            except Exception as e:  # noqa: BLE001
                met, reasons = {}, ["%s: %s" % (type(e).__name__, e)]
            add(model, run, "logits/tp1", met, reasons)
            if tp1 is None or ours is None:
                add(model, run, "greedy/tp1", {}, ["tp1 output missing" if tp1 is None else "output missing"])
            else:
                tp1_refs = []
                for i in range(len(prompts)):
                    r = tp1.get(i)
                    tp1_refs.append(our_greedy(r) if r is not None else ([], []))
                try:
                    met, reasons = greedy_metrics(tp1_refs, ours, prompts, args.max_new)
                except Exception as e:  # noqa: BLE001
                    met, reasons = {}, ["%s: %s" % (type(e).__name__, e)]
                add(model, run, "greedy/tp1", met, reasons)

    n_fail = sum(r["status"] == "FAIL" for r in rows)
    result = {"thresholds": {"cos_min": args.cos_min, "top1_min_pct": args.top1_min, "tp_cos_min": args.tp_cos_min,
                             "tp_top1_min_pct": args.tp_top1_min, "greedy_tokens": args.max_new},
              "pass": n_fail == 0, "rows_total": len(rows), "rows_failed": n_fail, "rows": rows}
    if ref_of:
        result["ref_of"] = ref_of
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1, ensure_ascii=False)

    # compact table
    mw = max([8] + [len(r["model"]) for r in rows])
    print("%-*s %-9s %-11s %-4s  %s" % (mw, "model", "run", "check", "", "numbers"))
    for r in rows:
        m = r["metrics"] or {}
        if r["check"].startswith("logits") and "cos_min" in m:
            nums = "cos min %.6f mean %.6f  top1 %.2f%%  (%d prompts, %d positions)" % (
                m["cos_min"], m["cos_mean"], m["top1_pct"], m["prompts"], m["positions"])
        elif r["check"].startswith("greedy") and "prompts" in m:
            nums = "full %d/%d  close %d  fail %d  short %d  prefix mean %s min %s" % (
                m.get("match", 0), m["prompts"], m.get("close", 0), m.get("fail", 0), m.get("short", 0),
                m.get("matched_mean", "-"), m.get("matched_min", "-"))
        elif r["check"] == "tokenizer" and "cases" in m:
            nums = "  ".join("%s %d/%d" % (k, m.get(k + "_equal", 0), m["cases"]) for k in TOK_KEYS)
        else:
            nums = ""
        print("%-*s %-9s %-11s %-4s  %s%s" % (mw, r["model"], r["run"], r["check"], r["status"], nums,
                                               ("  <- " + r["reason"][:300]) if r["reason"] else ""))
    print("compare: %d rows, %d FAIL -> %s" % (len(rows), n_fail, "PASS" if n_fail == 0 else "FAIL"))
    sys.exit(0 if n_fail == 0 else 1)


if __name__ == "__main__":
    main()
