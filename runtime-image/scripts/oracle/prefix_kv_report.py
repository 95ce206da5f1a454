#!/usr/bin/env python3
"""The verdicts of device-prefix-kv.sh (issue #33 item 4), from the files its runs leave. Standard library only.

  table DIR MODELS TPS
      DIR/<model>-tp<N>.json from `prefixcheck --json` (one per model and TP degree). One line per model and TP: PASS,
      FAIL (with the failed rows), SKIP (the geometry refuses that TP degree: the reason), or MISSING (no file: the run
      did not finish). Exit 1 when a run FAILed or is MISSING, or when a model has no TP degree that ran.

  pressure METRICS_FILE NUM_LOADGEN_DIRS LOADGEN_DIR... [--server-log FILE]
      METRICS_FILE: the cache-on server's /metrics scraped once it was idle after the load; each LOADGEN_DIR a loadgen
      --out-dir. Rows (each PASS or FAIL):
        requests     every loadgen request succeeded (failed == 0, completed > 0 in every level)
        idle         the free-block gauge is back at num_gpu_blocks, no block in use, nothing running or waiting
        pressure     the cache was under pressure: prefix-cache evictions > 0 (preemptions reported)
        audit        the block audit ran (kv_cache_audits_total > 0), no request ended in error, and the server log has
                     no "KV block audit failed"
      Exit 1 when a row FAILs.
"""
import json
import os
import re
import sys

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)$')


def metrics(text):
    """{name: [(labels dict, value)]} of a Prometheus text exposition."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line.strip())
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        try:
            out.setdefault(m.group(1), []).append((labels, float(m.group(3))))
        except ValueError:
            pass
    return out


def one(ms, name, **want):
    for labels, v in ms.get(name, []):
        if all(labels.get(k) == w for k, w in want.items()):
            return v
    return None


def table(args):
    d, models, tps = args[0], args[1].split(), args[2].split()
    bad = 0
    for m in models:
        ran = 0
        for tp in tps:
            p = os.path.join(d, f"{m}-tp{tp}.json")
            if not os.path.exists(p):
                print(f"{m:9s} tp{tp}  MISSING (no {os.path.basename(p)}: the run did not finish)")
                bad += 1
                continue
            j = json.load(open(p))
            r = j.get("result")
            if r == "SKIP":
                print(f"{m:9s} tp{tp}  SKIP (the geometry refuses TP {tp}: {j.get('reason')})")
                continue
            ran += 1
            rows = j.get("rows", [])
            failed = [x for x in rows if x.get("result") == "FAIL"]
            gated = [x for x in rows if x.get("gated") and x.get("expect_match")]
            worst = max((x["worst_rel_l2"] for x in gated), default=float("nan"))
            ctl = [x for x in rows if x.get("gated") and not x.get("expect_match")]
            ctl_rel = min((x["worst_rel_l2"] for x in ctl), default=float("nan"))
            info = [x for x in rows if not x.get("gated") and x.get("expect_match")]
            info_rel = max((x["worst_rel_l2"] for x in info), default=None)
            print(f"{m:9s} tp{tp}  {r}: {len(gated)} gated rows, worst rel L2 {worst:.2e} (tolerance "
                  f"{j.get('tolerance'):.2e}); control mismatch {ctl_rel:.2e}"
                  + (f"; after MoE routing (info) {info_rel:.2e}" if info_rel is not None else ""))
            for x in failed:
                print(f"      FAIL {x['check']} [{x['positions']}]: rel L2 {x['worst_rel_l2']:.3e} at {x['worst_group']}")
            if r != "PASS":
                bad += 1
        if ran == 0:
            print(f"{m:9s} no TP degree ran")
            bad += 1
    print(f"prefixcheck: {'PASS' if bad == 0 else 'FAIL'} ({bad} runs failed or missing)")
    return 1 if bad else 0


def pressure(args):
    log = None
    if "--server-log" in args:
        i = args.index("--server-log")
        log = args[i + 1]
        args = args[:i] + args[i + 2:]
    ms = metrics(open(args[0]).read())
    n = int(args[1])
    dirs = args[2:2 + n]
    rows = []

    def row(name, ok, text):
        rows.append(ok)
        print(f"{name:9s} {'PASS' if ok else 'FAIL'}  {text}")

    total, failed, problems = 0, 0, []
    for d in dirs:
        p = os.path.join(d, "loadgen.json")
        if not os.path.exists(p):
            problems.append(f"no {p}")
            continue
        for lv in json.load(open(p))["levels"]:
            total += lv["completed"]
            failed += lv["failed"]
            if lv["completed"] == 0:
                problems.append(f"{d}: level {lv['level']} completed nothing")
    row("requests", not problems and failed == 0 and total > 0,
        f"{total} loadgen requests ok, {failed} failed over {len(dirs)} workloads" + "".join("; " + x for x in problems))
    blocks = None
    for labels, _ in ms.get("tensorlane:cache_config_info", []):
        blocks = int(labels.get("num_gpu_blocks", "0"))
    free = one(ms, "tensorlane:kv_cache_free_blocks")
    used = one(ms, "tensorlane:kv_cache_in_use_blocks")
    cached = one(ms, "tensorlane:kv_cache_cached_blocks")
    running = one(ms, "tensorlane:num_requests_running")
    waiting = one(ms, "tensorlane:num_requests_waiting")
    row("idle", blocks is not None and free == blocks and used == 0 and running == 0 and waiting == 0,
        f"free blocks {free} of {blocks}, in use {used}, cached {cached}, running {running}, waiting {waiting}")
    ev = one(ms, "tensorlane:prefix_cache_evictions_total")
    pre = one(ms, "tensorlane:num_preemptions_total")
    hits = one(ms, "tensorlane:prefix_cache_hits_total")
    queries = one(ms, "tensorlane:prefix_cache_queries_total")
    rate = f"{100 * hits / queries:.1f}%" if hits is not None and queries else "n/a"
    row("pressure", ev is not None and ev > 0,
        f"evictions {ev}, preemptions {pre}, prefix-cache hit rate {rate} ({hits} of {queries} prompt tokens)")
    audits = one(ms, "tensorlane:kv_cache_audits_total")
    errors = one(ms, "tensorlane:request_success_total", finished_reason="error")
    aborts = one(ms, "tensorlane:request_success_total", finished_reason="abort")
    audit_failed = False
    if log and os.path.exists(log):
        audit_failed = "KV block audit failed" in open(log, errors="replace").read()
    row("audit", audits is not None and audits > 0 and errors == 0 and not audit_failed,
        f"{audits} audits (after every step and when idle), requests ended in error {errors}, aborted {aborts}, "
        f"'KV block audit failed' in the log: {'yes' if audit_failed else 'no'}")
    ok = all(rows)
    print(f"pressure: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("table", "pressure"):
        print(__doc__)
        return 2
    return table(sys.argv[2:]) if sys.argv[1] == "table" else pressure(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
