#!/usr/bin/env bash
# Per-kernel GPU time of one batch-1 decode step replayed from its CUDA graph (Nsight Compute on the GPU machine,
# `ncu --graph-profiling node`): which kernels a decode step spends its time in. Needs .device/ (device-prepare.sh,
# carried with carry: [".device"]) and the 8B checkpoint of device-model-bench.sh (STEPS="make" first, same call or a
# warm machine). Results under $OUT: ncu-decode.csv (ncu's rows), ncu-decode.txt (the table of the last whole step:
# time per kernel name, calls, share, DRAM bytes read and their rate), printed last.
# Environment: CKPT (/tmp/tl-8b), BATCH (1), CONTEXT (512), NCU (the first ncu found).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
bash "$(dirname "$0")/device-unpack.sh" || exit 2
CKPT=${CKPT:-/tmp/tl-8b}
NCU=${NCU:-$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)}
[ -x "$NCU" ] || { echo "device-ncu-decode: no ncu found" >&2; exit 2; }
[ -f "$CKPT/config.json" ] || { echo "device-ncu-decode: no checkpoint in $CKPT (device-model-bench.sh STEPS=make)" >&2; exit 2; }
# steps of bench-model: the context's prefill (eager), the first decode step (eager, then captured), then replays; the
# prefill measurement is 16 tokens. 4 steps' kernels cover two replays.
timeout 400 "$NCU" --graph-profiling node --metrics gpu__time_duration.sum,dram__bytes_read.sum --csv -c "${KERNELS:-1700}" \
  .device/jre/bin/java -Xmx4g -jar .device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar bench-model --model "$CKPT" --tp 1 \
  --batches "${BATCH:-1}" --context "${CONTEXT:-512}" --warmup 3 --iters 3 --prefill-tokens 16 > "$OUT/ncu-decode.csv" 2> "$OUT/ncu-decode.err"
echo "ncu exit: $?"
python3 - "$OUT/ncu-decode.csv" > "$OUT/ncu-decode.txt" <<'PY'
import csv, collections, sys
lines = open(sys.argv[1]).read().splitlines()
head = [i for i, l in enumerate(lines) if l.startswith('"ID"')]
if not head:
    sys.exit("no ncu rows")
byid = collections.OrderedDict()   # kernel ID -> name, us, DRAM bytes read
for r in csv.DictReader(lines[head[0]:]):
    k = byid.setdefault(r["ID"], {"name": r["Kernel Name"], "us": 0.0, "bytes": 0.0})
    v = float(r["Metric Value"].replace(",", ""))
    unit = r.get("Metric Unit", "")
    if r.get("Metric Name") == "gpu__time_duration.sum":
        k["us"] = v / 1000 if unit in ("", "nsecond", "ns") else v * {"usecond": 1, "msecond": 1000}.get(unit, 1)
    elif r.get("Metric Name") == "dram__bytes_read.sum":
        k["bytes"] = v * {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}.get(unit, 1)
rows = list(byid.values())
# a step starts with the embedding kernel; the last complete step is the one before the last start
starts = [i for i, r in enumerate(rows) if r["name"].startswith("tl_embed")]
if len(starts) < 2:
    sys.exit("fewer than two steps captured: %d embedding kernels" % len(starts))
step = rows[starts[-2]:starts[-1]]
agg = collections.defaultdict(lambda: [0, 0.0, 0.0])
for r in step:
    name = r["name"].split("(")[0].replace("void ", "")[:70]
    agg[name][0] += 1
    agg[name][1] += r["us"]
    agg[name][2] += r["bytes"]
total = sum(v[1] for v in agg.values())
total_b = sum(v[2] for v in agg.values())
print("decode step (steps captured: %d; this one: kernels %d..%d): %d kernels, %.1f us of kernel time, %.3f GB read "
      "from DRAM (%.0f GB/s over the kernel time; ncu: base clocks, caches flushed per kernel)" % (
    len(starts), starts[-2], starts[-1] - 1, len(step), total, total_b / 1e9, total_b / 1e3 / max(total, 1e-9)))
print("       time  share calls   per call   DRAM MB   GB/s  kernel")
for name, (n, us, b) in sorted(agg.items(), key=lambda x: -x[1][1]):
    print("%9.1f us %5.1f%% %4dx %8.2f us %9.1f %6.0f  %s" % (us, 100 * us / total, n, us / n, b / 1e6, b / 1e3 / max(us, 1e-9), name))
PY
cat "$OUT/ncu-decode.txt"
