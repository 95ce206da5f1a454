#!/usr/bin/env bash
# The 8B model benchmark on the GPU machine (device tool). Kind nvidia-h200 for TP=1 (everything but the TP=2 part),
# or nvidia-h200-x2 with REAL_TP=2 for all of it in one call (TP=1 runs on GPU 0 there). Needs .device/ (jlinked JRE
# and jars from runtime-image/scripts/device-prepare.sh, carried with carry: [".device"]) and the machine's python3
# (torch, transformers 5.x, safetensors, tokenizers). No internet. Run from the repository root:
#     bash runtime-image/scripts/device-model-bench.sh            # nvidia-h200
#     REAL_TP=2 bash runtime-image/scripts/device-model-bench.sh  # nvidia-h200-x2
# Steps (STEPS picks some; default all, in this order; each bounded by `timeout`, the whole script by BUDGET=570 s):
#   make     oracle/bench_make_8b.py: Llama-3.1-8B geometry, random bf16 weights, save_pretrained (sharded safetensors,
#            ~16 GB) in $CKPT (default /tmp/tl-8b; skipped when $CKPT/.complete exists)
#   disk     oracle/bench_transformers.py --parts disk,bw: page cache dropped, cold sequential read of the checkpoint
#            (GB/s), device read bandwidth (4 GiB reduction, GB/s)
#   ours     evict the checkpoint from the page cache, then `bench-model --tp 1` (cold load; decode per batch in
#            $BATCHES at context $CONTEXT, prefill $PREFILL tokens)
#   base     (page cache warm) `bench-model --tp 1 --baseline-kernels`: the same engine with the split-key attention
#            kernel for prefill tokens too and cuBLAS for every linear - the same-run baseline of the tensor-core
#            prefill kernel (prefill row) and of the one-token GEMV kernel (batch-1 row)
#   tf       oracle/bench_transformers.py --parts eager,compile: transformers bf16 sdpa (dynamic cache) and static cache
#            + torch.compile(reduce-overhead); compiled batch sizes are skipped when the budget runs short
#   tp2      (two GPUs and REAL_TP=2) bench-model --tp 2 with the custom allreduce, then with OneStage's push variant
#            (TENSORLANE_ALLREDUCE_PUSH=on), then with --nccl, then custom with the allreduce and norm apart
#            (TENSORLANE_FUSED_NORM=off; TP2_MODES picks, default "custom push nccl apart")
#   summary  oracle/bench_summary.py: roofline, ratios, each target PASS/FAIL
# Results under $OUT (8 files): bench.json (targets + every raw number + date/GPU/driver: the file to commit as
# runtime-image/results/bench-8b-<machine>-<date>.json), bench.txt (the table), bench.log (combined log, capped),
# ours-tp1.json, transformers.json, ours-tp2-custom.json, ours-tp2-nccl.json, ours-tp2-apart.json (raw, also inside
# bench.json, which alone has ours-tp1-baseline and ours-tp2-push).
# Environment: BATCHES (1,8,32,128), CONTEXT (512), PREFILL (2048), ITERS (50 ours / TF_ITERS 30 transformers),
# WARMUP (300: the JVM compiles the step's host code; our timed steps still start at CONTEXT), TF_WARMUP (5), TF_PARTS (eager,compile), TF_ARGS / BENCH_ARGS (extra arguments), QUICK=1 (fewer iterations), CKPT, BUDGET (570).
# Exit code: the summary's (0: no FAIL, 1: a FAIL), 2 when the checkpoint could not be made.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
PY_LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
PY="env LD_LIBRARY_PATH=$PY_LD_LIBRARY_PATH ${PY:-python3}"
bash "$(dirname "$0")/device-unpack.sh" || exit 2   # .device/bundle.tar.xz -> .device/jre, .device/app
JAVA=".device/jre/bin/java -Xmx4g"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
ORACLE=runtime-image/scripts/oracle
CKPT=${CKPT:-/tmp/tl-8b}
W=${W:-/tmp/tl-bench}
STEPS=${STEPS:-make disk ours base tf tp2 summary}
TF_PARTS=${TF_PARTS:-eager,compile}
BATCHES=${BATCHES:-1,8,32,128}
CONTEXT=${CONTEXT:-512}
PREFILL=${PREFILL:-2048}
WARMUP=${WARMUP:-300}
TF_WARMUP=${TF_WARMUP:-5}
ITERS=${ITERS:-50}
TF_ITERS=${TF_ITERS:-30}
TF_ARGS=${TF_ARGS:-}
BENCH_ARGS=${BENCH_ARGS:-}
Q=""; [ "${QUICK:-0}" = 1 ] && { Q="--quick"; ITERS=10; WARMUP=3; TF_WARMUP=3; }
mkdir -p "$W"
LOG="$OUT/bench.log"
. "$(dirname "$0")/device-lib.sh"
: > "$LOG"
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
NCCL=$($PY -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || true)
[ -n "$NCCL" ] && export LD_LIBRARY_PATH="$(dirname "$NCCL"):$LD_LIBRARY_PATH"
BENCH="$JAVA -jar $APP bench-model"
{
  echo "== date: $(date -u +%FT%TZ)  steps: $STEPS  GPUs: $NGPU ($GPU, driver $DRIVER)  REAL_TP: ${REAL_TP:-}  ckpt: $CKPT"
  echo "== bench: $BENCH  nccl: ${NCCL:-not found}  batches $BATCHES context $CONTEXT prefill $PREFILL warmup $WARMUP/$TF_WARMUP iters $ITERS/$TF_ITERS"
  $PY -c 'import torch, transformers; print("python", __import__("sys").version.split()[0], "torch", torch.__version__, "transformers", transformers.__version__)' 2>&1
  df -h "$(dirname "$CKPT")" 2>&1 | tail -1; free -g 2>&1 | sed -n 2p
} | tee -a "$LOG"
$PY - "$W/meta.json" "$GPU" "$DRIVER" "$NGPU" "$STEPS" <<'EOF'
import json, sys, datetime
json.dump({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "gpu": sys.argv[2], "driver": sys.argv[3],
           "gpus": int(sys.argv[4] or 0), "steps": sys.argv[5]}, open(sys.argv[1], "w"))
EOF
rc_make=0
tp2=0; [ -n "${REAL_TP:-}" ] && [ "${NGPU:-0}" -ge 2 ] && tp2=1
# seconds kept back for the later steps: TP=2 runs (two loads from the page cache) and the summary
reserve_tp2=$(( tp2 == 1 ? 210 : 0 ))

# ---- make
if has_step make; then
  step make "$W/make.log" timeout "$(tmo 300 200)" $PY $ORACLE/bench_make_8b.py --out "$CKPT" || rc_make=2
  grep '^bench_make_8b' "$W/make.log" | tee -a "$LOG"
fi
if [ ! -f "$CKPT/.complete" ]; then
  say "== no complete checkpoint in $CKPT: nothing to measure"
  exit 2
fi
command -v fincore > /dev/null && fincore_ok=1 || fincore_ok=0
resident() { [ $fincore_ok = 1 ] && say "   page cache: $(fincore -b "$CKPT"/*.safetensors 2>/dev/null | awk 'NR>1 {r+=$1; s+=$3} END {printf "%.2f of %.2f GB resident", r/1e9, s/1e9}')"; }

# ---- disk and device bandwidth
if has_step disk; then
  rm -f "$W/disk.json"
  step disk "$W/disk.log" timeout "$(tmo 150 120)" $PY $ORACLE/bench_transformers.py --model "$CKPT" --parts disk,bw --out "$W/disk.json" $Q
  grep -E 'disk:|bw:' "$W/disk.log" | tee -a "$LOG"
fi

# ---- ours, TP=1 (cold load)
if has_step ours; then
  rm -f "$W/ours-tp1.json" "$W/evict.json"
  $PY $ORACLE/bench_transformers.py --model "$CKPT" --parts evict --out "$W/evict.json" 2>&1 | tee -a "$LOG"
  resident
  t=$(tmo 150 $(( 100 + reserve_tp2 )))
  step "bench-model tp1" "$W/ours-tp1.log" timeout -s QUIT -k 5 "$t" $BENCH --model "$CKPT" --tp 1 --batches "$BATCHES" \
    --context "$CONTEXT" --prefill-tokens "$PREFILL" --warmup "$WARMUP" --iters "$ITERS" --max-seconds $(( t - 15 )) \
    --label tp1 --json "$W/ours-tp1.json" $BENCH_ARGS
  grep -vE '^engine: loaded [0-9.]+ GB$' "$W/ours-tp1.log" | grep -E '^(bench-model|load|engine:| batch| +[0-9]+ |prefill| +ops| +host)' | tee -a "$LOG"
fi

# ---- ours with the baseline kernels (page cache warm)
if has_step base; then
  rm -f "$W/ours-tp1-baseline.json"
  t=$(tmo 100 $(( 100 + reserve_tp2 )))
  step "bench-model tp1 baseline kernels" "$W/ours-tp1-baseline.log" timeout -s QUIT -k 5 "$t" $BENCH --model "$CKPT" --tp 1 \
    --baseline-kernels --batches "$BATCHES" --context "$CONTEXT" --prefill-tokens "$PREFILL" --warmup "$WARMUP" --iters "$ITERS" \
    --max-seconds $(( t - 15 )) --label tp1-baseline --json "$W/ours-tp1-baseline.json" $BENCH_ARGS
  grep -E '^( batch| +[0-9]+ |prefill| +ops| +host)' "$W/ours-tp1-baseline.log" | tee -a "$LOG"
fi

# ---- transformers
if has_step tf; then
  rm -f "$W/transformers.json"
  t=$(tmo 400 $(( 15 + reserve_tp2 )))
  step transformers "$W/tf.log" timeout -k 10 "$t" $PY $ORACLE/bench_transformers.py --model "$CKPT" --parts "$TF_PARTS" \
    --batches "$BATCHES" --context "$CONTEXT" --prefill "$PREFILL" --warmup "$TF_WARMUP" --iters "$TF_ITERS" --budget $(( t - 10 )) \
    --out "$W/transformers.json" $Q $TF_ARGS
  grep -E '^\[.*(load|eager|static|compile|ERROR)' "$W/tf.log" | cut -c1-300 | tee -a "$LOG"
fi

# ---- TP=2: custom allreduce vs NCCL (page cache warm)
if has_step tp2; then
  if [ $tp2 = 1 ]; then
    for mode in ${TP2_MODES:-custom push nccl apart}; do
      rm -f "$W/ours-tp2-$mode.json"
      extra=""; [ $mode = nccl ] && extra="--nccl ${NCCL:+--nccl-lib $NCCL}"
      fused=on; [ $mode = apart ] && fused=off   # apart: the custom allreduce without the fused norm
      push=off; [ $mode = push ] && push=on      # push: OneStage's push variant (no barrier)
      # custom leaves time for the other three, push for NCCL and apart, NCCL for apart
      case $mode in custom) t=$(tmo 100 180) ;; push) t=$(tmo 100 125) ;; nccl) t=$(tmo 100 70) ;; *) t=$(tmo 100 15) ;; esac
      if [ "$t" -lt 40 ]; then say "== tp2 $mode: skipped, $(left) s left"; continue; fi
      step "bench-model tp2 $mode" "$W/ours-tp2-$mode.log" env TENSORLANE_FUSED_NORM=$fused TENSORLANE_ALLREDUCE_PUSH=$push \
        timeout -s QUIT -k 5 "$t" $BENCH --model "$CKPT" --tp 2 $extra \
        --batches "${TP2_BATCHES:-$BATCHES}" --context "$CONTEXT" --prefill-tokens "$PREFILL" --warmup "$WARMUP" --iters "$ITERS" \
        --max-seconds $(( t - 10 )) --label "tp2-$mode" --json "$W/ours-tp2-$mode.json" $BENCH_ARGS
      grep -E '^(load| batch| +[0-9]+ |prefill)' "$W/ours-tp2-$mode.log" | tee -a "$LOG"
    done
  else
    say "== tp2: skipped (REAL_TP=${REAL_TP:-unset}, $NGPU GPU(s))"
  fi
fi

# ---- summary
rc=0
if has_step summary; then
  $PY $ORACLE/bench_summary.py --dir "$W" --meta "$W/meta.json" --out "$OUT/bench.json" --txt "$OUT/bench.txt" > "$W/summary.log" 2>&1
  rc=$?
  { echo "---- summary"; cat "$W/summary.log"; } >> "$LOG"
fi
# the device tool brings back 8 files: the baseline-kernels run is only inside bench.json
for f in ours-tp1 transformers ours-tp2-custom ours-tp2-apart ours-tp2-nccl; do [ -f "$W/$f.json" ] && cp "$W/$f.json" "$OUT/"; done
say "== total: $(( $(date +%s) - T_ALL )) s"
if [ "$(stat -c %s "$LOG")" -gt 4000000 ]; then
  { head -c 1000000 "$LOG"; echo; echo "[... cut ...]"; tail -c 2900000 "$LOG"; } > "$W/bench.cut" && mv "$W/bench.cut" "$LOG"
fi
echo "================ 8B bench: summary ================"
cat "$W/summary.log" 2>/dev/null || echo "(no summary)"
[ $rc_make -ne 0 ] && exit 2
exit $rc
