#!/usr/bin/env python3
"""The transformers baseline of bench-model, and the machine's disk and device read rates.

Parts (--parts, comma-separated; default all but evict, in this order):
  evict    drop the checkpoint files from the page cache (sync; `echo 3 > /proc/sys/vm/drop_caches` when root;
           posix_fadvise(DONTNEED) on every file in any case), nothing else: run it before a cold load
  disk     evict, then read the *.safetensors files sequentially with 64 MiB reads (GB/s, cold), then up to 4 GiB
           again (page cache GB/s); the filesystem type is reported (tmpfs means no disk)
  bw       device read bandwidth: a 4 GiB (--bw-gib) bf16 tensor reduced (sum, and amax of its fp32 view) and copied;
           CUDA events, median of --bw-reps; read_gbps = the faster reduction (bytes read / time)
  eager    transformers bf16, attn sdpa, default dynamic cache: decode step per batch size at --context (the cache
           prefilled with --context random ids, then --warmup + --iters steps at growing positions, each step
           = forward of one token per sequence + greedy argmax, synchronized), and prefill of --prefill tokens
           (one sequence, a fresh cache, logits of the last token only)
  compile  static cache + torch.compile(mode="reduce-overhead") of the forward for the decode steps (prefill of the
           cache eager); failures are caught and reported per batch size; a batch size is skipped when less than
           --compile-min-seconds of --budget are left (a compile can take minutes)
Timings: wall ms (perf_counter around the step, synchronized) and gpu ms (CUDA events around the same calls); the
JSON has median/p10/p90 of both. Numbers are written to --out after every measurement (a run stopped by a timeout
keeps what it had). Bytes are 1e9 per GB.

usage: bench_transformers.py --model DIR --out FILE.json [--parts disk,bw,eager,compile] [--batches 1,8,32,128]
       [--context 512] [--prefill 2048] [--warmup 5] [--iters 30] [--budget 300] [--quick]
"""
import argparse
import datetime
import glob
import inspect
import json
import os
import sys
import time
import traceback

T_START = time.time()


def log(*a):
    print("[%6.1f s]" % (time.time() - T_START), *a, flush=True)


def stats(xs):
    s = sorted(xs)
    n = len(s)

    def pct(p):
        i = p / 100.0 * (n - 1)
        lo = int(i)
        hi = min(lo + 1, n - 1)
        return s[lo] + (s[hi] - s[lo]) * (i - lo)
    return {"n": n, "median": pct(50), "p10": pct(10), "p90": pct(90), "min": s[0], "max": s[-1], "mean": sum(s) / n}


class Results:
    def __init__(self, path, args):
        self.path = path
        self.d = {"kind": "tensorlane-bench-transformers", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                  "model": os.path.abspath(args.model), "args": vars(args), "errors": []}

    def save(self):
        self.d["elapsed_seconds"] = time.time() - T_START
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.d, f, indent=1, default=str)
        os.replace(tmp, self.path)

    def error(self, where, e):
        msg = "%s: %s: %s" % (where, type(e).__name__, str(e)[:2000])
        log("ERROR", msg)
        self.d["errors"].append(msg)
        self.save()


def checkpoint_files(model):
    files = sorted(glob.glob(os.path.join(model, "*.safetensors")))
    if not files:
        raise SystemExit("no *.safetensors in %s" % model)
    return files


def filesystem_of(path):
    path = os.path.realpath(path)
    best = ("?", "?", "?")
    try:
        with open("/proc/mounts") as f:
            for line in f:
                dev, mnt, fs = line.split()[:3]
                mnt = mnt.replace("\\040", " ")
                if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best[1]):
                    best = (dev, mnt, fs)
    except OSError:
        pass
    return {"device": best[0], "mount": best[1], "type": best[2]}


def evict(files):
    """Drops the files' pages from the page cache; returns what was done."""
    out = {"sync": False, "drop_caches": False, "fadvise": 0}
    try:
        os.sync()
        out["sync"] = True
    except OSError:
        pass
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        out["drop_caches"] = True
    except OSError as e:
        out["drop_caches_error"] = str(e)
    for p in files:
        try:
            fd = os.open(p, os.O_RDONLY)
            try:
                os.fdatasync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                out["fadvise"] += 1
            finally:
                os.close(fd)
        except (OSError, AttributeError) as e:
            out["fadvise_error"] = str(e)
    return out


def read_files(files, limit_bytes=None, max_seconds=120, block=64 << 20):
    buf = bytearray(block)
    mv = memoryview(buf)
    total = 0
    t0 = time.perf_counter()
    stopped = None
    for p in files:
        with open(p, "rb", buffering=0) as f:
            while True:
                n = f.readinto(mv)
                if not n:
                    break
                total += n
                if limit_bytes and total >= limit_bytes:
                    break
                if time.perf_counter() - t0 > max_seconds:
                    stopped = "time limit %.0f s" % max_seconds
                    break
        if stopped or (limit_bytes and total >= limit_bytes):
            break
    secs = time.perf_counter() - t0
    return {"bytes": total, "seconds": secs, "gbps": total / 1e9 / max(secs, 1e-9), "stopped": stopped}


def part_disk(res, args):
    files = checkpoint_files(args.model)
    size = sum(os.path.getsize(p) for p in files)
    d = {"files": len(files), "checkpoint_bytes": size, "filesystem": filesystem_of(args.model)}
    d["evict"] = evict(files)
    log("disk: evicted (%s); reading %.2f GB cold" % (d["evict"], size / 1e9))
    d["cold"] = read_files(files, max_seconds=args.disk_max_seconds)
    log("disk: cold sequential read %.3f GB in %.2f s = %.3f GB/s%s" % (d["cold"]["bytes"] / 1e9, d["cold"]["seconds"], d["cold"]["gbps"],
                                                                       " (%s)" % d["cold"]["stopped"] if d["cold"]["stopped"] else ""))
    d["page_cache"] = read_files(files, limit_bytes=min(size, 4 << 30), max_seconds=30)
    log("disk: page-cache read %.3f GB at %.3f GB/s" % (d["page_cache"]["bytes"] / 1e9, d["page_cache"]["gbps"]))
    d["read_gbps"] = d["cold"]["gbps"]
    res.d["disk"] = d
    res.save()


def cuda_time(torch, fn, reps, warm=2):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ms = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ms.append(a.elapsed_time(b))
    return stats(ms)


def part_bw(res, args, torch):
    n = int(args.bw_gib * (1 << 30)) // 2
    nbytes = n * 2
    x = torch.empty(n, dtype=torch.bfloat16, device="cuda")
    x.uniform_(-1, 1)
    y = torch.empty_like(x)
    d = {"bytes": nbytes, "reps": args.bw_reps}
    s = cuda_time(torch, lambda: torch.sum(x, dtype=torch.float32), args.bw_reps)
    d["sum_bf16"] = {"ms": s, "gbps": nbytes / 1e9 / (s["median"] / 1e3)}
    s = cuda_time(torch, lambda: torch.amax(x.view(torch.float32)), args.bw_reps)
    d["amax_f32view"] = {"ms": s, "gbps": nbytes / 1e9 / (s["median"] / 1e3)}
    s = cuda_time(torch, lambda: y.copy_(x), args.bw_reps)
    d["copy"] = {"ms": s, "gbps_read_plus_write": 2 * nbytes / 1e9 / (s["median"] / 1e3)}
    d["read_gbps"] = max(d["sum_bf16"]["gbps"], d["amax_f32view"]["gbps"])
    del x, y
    torch.cuda.empty_cache()
    log("bw: read %.1f GB/s (sum %.1f, amax %.1f), copy %.1f GB/s read+write, over %.2f GiB" % (
        d["read_gbps"], d["sum_bf16"]["gbps"], d["amax_f32view"]["gbps"], d["copy"]["gbps_read_plus_write"], nbytes / (1 << 30)))
    res.d["device_bw"] = d
    res.save()


def load_model(res, args, torch, transformers):
    t0 = time.time()
    kw = dict(attn_implementation="sdpa", device_map="cuda")
    try:
        model = transformers.AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16, **kw)
    except TypeError:
        model = transformers.AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.bfloat16, **kw)
    model.eval()
    torch.cuda.synchronize()
    secs = time.time() - t0
    wb = sum(p.numel() * p.element_size() for p in model.parameters())
    res.d["load"] = {"seconds": secs, "weight_bytes": wb, "attn_implementation": getattr(model.config, "_attn_implementation", None)}
    log("load: %.3f GB of weights in %.1f s (page cache warm or cold: see the caller)" % (wb / 1e9, secs))
    res.save()
    return model


class Caller:
    """Calls the model's forward with the keyword arguments this transformers version takes."""

    def __init__(self, model):
        params = set()
        for fn in (model.forward, model.model.forward):
            try:
                params |= set(inspect.signature(fn).parameters)
            except (TypeError, ValueError):
                pass
        self.cache_position = "cache_position" in params
        self.keep = "logits_to_keep" if "logits_to_keep" in params else ("num_logits_to_keep" if "num_logits_to_keep" in params else None)

    def kwargs(self, torch, batch, start, length, cache):
        kw = {"use_cache": True, "past_key_values": cache}
        pos = torch.arange(start, start + length, device="cuda")
        kw["position_ids"] = pos.unsqueeze(0).expand(batch, length)
        if self.cache_position:
            kw["cache_position"] = pos
        if self.keep:
            kw[self.keep] = 1
        return kw


def make_static_cache(transformers, model, batch, max_len, torch):
    cls = getattr(transformers, "StaticCache", None)
    if cls is None:
        from transformers.cache_utils import StaticCache as cls  # noqa: N813
    sig = inspect.signature(cls.__init__).parameters
    cand = {"config": model.config, "max_batch_size": batch, "batch_size": batch, "max_cache_len": max_len, "device": "cuda",
            "dtype": torch.bfloat16}
    kw = {k: v for k, v in cand.items() if k in sig}
    return cls(**kw)


def decode_run(torch, model, step_fn, caller, batch, args, cache, vocab, label):
    """Prefills `cache` with args.context random ids (eager), then times decode steps; returns the record."""
    ctx = args.context
    ids = torch.randint(0, vocab, (batch, ctx), device="cuda")
    with torch.no_grad():
        out = model(input_ids=ids, **caller.kwargs(torch, batch, 0, ctx, cache))
        cache = out.past_key_values if out.past_key_values is not None else cache
        nxt = out.logits[:, -1].argmax(-1, keepdim=True)
        del out
        torch.cuda.synchronize()
        wall, gpu = [], []
        t_first = None
        for k in range(args.warmup + args.iters):
            pos = ctx + k
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            t0 = time.perf_counter()
            a.record()
            o = step_fn(input_ids=nxt, **caller.kwargs(torch, batch, pos, 1, cache))
            nxt = o.logits[:, -1].argmax(-1, keepdim=True)
            b.record()
            torch.cuda.synchronize()
            w = (time.perf_counter() - t0) * 1e3
            if k == 0:
                t_first = w
            if k >= args.warmup:
                wall.append(w)
                gpu.append(a.elapsed_time(b))
            del o
    rec = {"batch": batch, "context": ctx, "first_position": ctx, "last_position": ctx + args.warmup + args.iters - 1,
           "first_step_ms": t_first, "wall_ms": stats(wall), "gpu_ms": stats(gpu)}
    rec["tokens_per_s"] = batch * 1e3 / rec["wall_ms"]["median"]
    log("%s batch %4d: wall median %.3f ms (p10 %.3f, p90 %.3f), gpu %.3f ms, %.1f tokens/s; first step %.1f ms" % (
        label, batch, rec["wall_ms"]["median"], rec["wall_ms"]["p10"], rec["wall_ms"]["p90"], rec["gpu_ms"]["median"],
        rec["tokens_per_s"], t_first))
    return rec


def prefill_run(torch, transformers, model, caller, args, vocab):
    n = args.prefill
    ids = torch.randint(0, vocab, (1, n), device="cuda")
    wall, gpu = [], []
    with torch.no_grad():
        for k in range(args.prefill_warmup + args.prefill_iters):
            cache = None   # use_cache=True: the model makes its default (dynamic) cache
            torch.cuda.synchronize()
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            t0 = time.perf_counter()
            a.record()
            o = model(input_ids=ids, **caller.kwargs(torch, 1, 0, n, cache))
            o.logits[:, -1].argmax(-1)
            b.record()
            torch.cuda.synchronize()
            if k >= args.prefill_warmup:
                wall.append((time.perf_counter() - t0) * 1e3)
                gpu.append(a.elapsed_time(b))
            del o, cache
    rec = {"tokens": n, "wall_ms": stats(wall), "gpu_ms": stats(gpu)}
    rec["tokens_per_s"] = n * 1e3 / rec["wall_ms"]["median"]
    rec["tokens_per_s_gpu"] = n * 1e3 / rec["gpu_ms"]["median"]
    log("eager prefill %d tokens: wall median %.2f ms = %.0f tokens/s (gpu %.0f tokens/s)" % (n, rec["wall_ms"]["median"], rec["tokens_per_s"],
                                                                                          rec["tokens_per_s_gpu"]))
    return rec


def left(args):
    return args.budget - (time.time() - T_START)


def part_eager(res, args, torch, transformers, model, caller, vocab):
    d = res.d.setdefault("eager_sdpa", {"cache": "DynamicCache (default)", "decode": []})
    for batch in args.batches:
        if left(args) < 15:
            d.setdefault("skipped", []).append("batch %d (budget)" % batch)
            continue
        try:
            cache = None   # the model makes its default (dynamic) cache in the prefill
            d["decode"].append(decode_run(torch, model, model, caller, batch, args, cache, vocab, "eager"))
        except Exception as e:  # noqa: BLE001 - reported, next batch size
            res.error("eager batch %d" % batch, e)
        torch.cuda.empty_cache()
        res.save()
    if args.prefill > 0:
        try:
            d["prefill"] = prefill_run(torch, transformers, model, caller, args, vocab)
        except Exception as e:  # noqa: BLE001
            res.error("eager prefill", e)
        res.save()


def part_compile(res, args, torch, transformers, model, caller, vocab):
    d = res.d.setdefault("static_compile", {"mode": "reduce-overhead", "fullgraph": args.fullgraph, "cache": "StaticCache", "decode": []})
    try:
        import torch._dynamo
        torch._dynamo.config.cache_size_limit = max(64, torch._dynamo.config.cache_size_limit)
        step = torch.compile(model.forward, mode="reduce-overhead", fullgraph=args.fullgraph)
    except Exception as e:  # noqa: BLE001
        res.error("torch.compile", e)
        return
    max_len = args.context + args.warmup + args.iters + 16
    for batch in args.batches:
        if left(args) < args.compile_min_seconds:
            d.setdefault("skipped", []).append("batch %d (%.0f s of the budget left < --compile-min-seconds %d)" % (
                batch, left(args), args.compile_min_seconds))
            log("compile batch %d skipped: %.0f s left" % (batch, left(args)))
            continue
        try:
            cache = make_static_cache(transformers, model, batch, max_len, torch)
            t0 = time.time()
            rec = decode_run(torch, model, step, caller, batch, args, cache, vocab, "static+compile")
            rec["seconds_with_compile"] = time.time() - t0
            d["decode"].append(rec)
            del cache
        except Exception as e:  # noqa: BLE001 - reported, next batch size
            res.error("static+compile batch %d" % batch, e)
            traceback.print_exc()
        torch.cuda.empty_cache()
        res.save()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--parts", default="disk,bw,eager,compile")
    ap.add_argument("--batches", default="1,8,32,128")
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--prefill", type=int, default=2048)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--prefill-warmup", type=int, default=3)
    ap.add_argument("--prefill-iters", type=int, default=10)
    ap.add_argument("--bw-gib", type=float, default=4.0)
    ap.add_argument("--bw-reps", type=int, default=20)
    ap.add_argument("--disk-max-seconds", type=float, default=90)
    ap.add_argument("--budget", type=float, default=400, help="seconds for this script; measurements that would start later are skipped")
    ap.add_argument("--compile-min-seconds", type=int, default=60, help="budget a compiled batch size needs to be started")
    ap.add_argument("--fullgraph", action="store_true", help="torch.compile(fullgraph=True)")
    ap.add_argument("--quick", action="store_true", help="fewer iterations everywhere (a trial run)")
    args = ap.parse_args()
    args.batches = [int(b) for b in args.batches.split(",") if b.strip()]
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = set(parts) - {"evict", "disk", "bw", "eager", "compile"}
    if unknown or not parts:
        ap.error("unknown --parts %s" % sorted(unknown))
    if not args.batches or min(args.batches) < 1 or args.context < 1 or args.iters < 1 or args.warmup < 1:
        ap.error("batches, context, iters and warmup must be >= 1")
    if args.quick:
        args.iters = min(args.iters, 10)
        args.warmup = min(args.warmup, 3)
        args.prefill_iters = min(args.prefill_iters, 3)
        args.prefill_warmup = min(args.prefill_warmup, 1)
        args.bw_reps = min(args.bw_reps, 5)
        args.disk_max_seconds = min(args.disk_max_seconds, 20)
    if parts == ["evict"]:
        files = checkpoint_files(args.model)
        e = evict(files)
        log("evict: %d files, %s" % (len(files), e))
        res = Results(args.out, args)
        res.d["evict"] = e
        res.d["filesystem"] = filesystem_of(args.model)
        res.save()
        return 0
    res = Results(args.out, args)
    res.save()
    if "disk" in parts:
        try:
            part_disk(res, args)
        except Exception as e:  # noqa: BLE001
            res.error("disk", e)
    if not ({"bw", "eager", "compile"} & set(parts)):
        res.save()
        log("done; %d error(s); %s" % (len(res.d["errors"]), args.out))
        return 0
    try:
        import torch
    except ImportError as e:
        res.error("import torch", e)
        return 2
    res.d["torch"] = torch.__version__
    if not torch.cuda.is_available():
        res.error("cuda", RuntimeError("no CUDA device"))
        return 2
    res.d["gpu"] = torch.cuda.get_device_name(0)
    if "bw" in parts:
        try:
            part_bw(res, args, torch)
        except Exception as e:  # noqa: BLE001
            res.error("bw", e)
    if "eager" in parts or "compile" in parts:
        import transformers
        res.d["transformers"] = transformers.__version__
        try:
            model = load_model(res, args, torch, transformers)
        except Exception as e:  # noqa: BLE001
            res.error("load", e)
            traceback.print_exc()
            return 2
        caller = Caller(model)
        res.d["forward_kwargs"] = {"cache_position": caller.cache_position, "logits_to_keep": caller.keep}
        vocab = model.config.vocab_size
        if "eager" in parts:
            part_eager(res, args, torch, transformers, model, caller, vocab)
        if "compile" in parts:
            part_compile(res, args, torch, transformers, model, caller, vocab)
    res.save()
    log("done; %d error(s); %s" % (len(res.d["errors"]), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
