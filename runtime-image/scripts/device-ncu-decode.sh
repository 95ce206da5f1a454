#!/usr/bin/env bash
# Per-kernel GPU time of one batch-1 decode step replayed from its CUDA graph (Nsight Compute on the GPU machine,
# `ncu --graph-profiling node`): which kernels a decode step spends its time in. Needs .device/ (device-prepare.sh,
# carried with carry: [".device"]) and the 8B checkpoint of device-model-bench.sh (STEPS="make" first, same call or a
# warm machine). Results under $OUT: ncu-decode.csv (ncu's rows), ncu-decode.txt (the table of the last whole step:
# time per kernel name, calls, share), printed last.
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
timeout 400 "$NCU" --graph-profiling node --metrics gpu__time_duration.sum --csv -c "${KERNELS:-1700}" \
  .device/jre/bin/java -Xmx4g -jar .device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar bench-model --model "$CKPT" --tp 1 \
  --batches "${BATCH:-1}" --context "${CONTEXT:-512}" --warmup 3 --iters 3 --prefill-tokens 16 > "$OUT/ncu-decode.csv" 2> "$OUT/ncu-decode.err"
echo "ncu exit: $?"
python3 - "$OUT/ncu-decode.csv" > "$OUT/ncu-decode.txt" <<'PY'
import csv, collections, sys
lines = open(sys.argv[1]).read().splitlines()
head = [i for i, l in enumerate(lines) if l.startswith('"ID"')]
if not head:
    sys.exit("no ncu rows")
rows = [r for r in csv.DictReader(lines[head[0]:]) if r.get("Metric Name") == "gpu__time_duration.sum"]
# a step starts with the embedding kernel; the last complete step is the one before the last start
starts = [i for i, r in enumerate(rows) if r["Kernel Name"].startswith("tl_embed")]
if len(starts) < 2:
    sys.exit("fewer than two steps captured: %d embedding kernels" % len(starts))
step = rows[starts[-2]:starts[-1]]
agg = collections.defaultdict(lambda: [0, 0.0])
for r in step:
    name = r["Kernel Name"].split("(")[0].replace("void ", "")[:70]
    agg[name][0] += 1
    agg[name][1] += float(r["Metric Value"].replace(",", "")) / 1000
total = sum(v[1] for v in agg.values())
print("decode step (steps captured: %d; this one: kernels %d..%d): %d kernels, %.1f us of kernel time" % (
    len(starts), starts[-2], starts[-1] - 1, len(step), total))
for name, (n, us) in sorted(agg.items(), key=lambda x: -x[1][1]):
    print("%9.1f us %5.1f%% %4dx %8.2f us  %s" % (us, 100 * us / total, n, us / n, name))
PY
cat "$OUT/ncu-decode.txt"
