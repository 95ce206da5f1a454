#!/usr/bin/env bash
# The FP8 KV cache (issue #35) against the engine's own bf16-KV runs, on the GPU machine (device tool, kind
# nvidia-h200, carry [".device"]; virtual ranks on GPU 0). Needs .device/ (the jlinked JRE and jars of
# runtime-image/scripts/device-prepare.sh) and the machine's python3 (torch, transformers, tokenizers, numpy). No
# internet is needed.
#   1. train    oracle/make_models.py: the oracle's small trained checkpoints (llama mistral qwen2 qwen3; SKIP_TRAIN=1
#               skips when present)
#   2. ref      oracle/reference.py: prompts and the fp32 reference logits (SKIP_REF=1 skips when present)
#   3. gen      the engine's `generate` per model and TP in TPS (1 2 4 8), the flags of device-models.sh, twice: bf16 KV
#               (tp<N>/) and --kv-cache-dtype fp8 (tp<N>-kvfp8/); the KV cache sized by the memory fraction (MEM_FRACTION,
#               0.5) so both runs report the tokens the same memory holds
#   4. compare  oracle/compare_kv.py: fp8-KV vs bf16-KV prefill logits (top-1 >= 97%, cosine reported), greedy walk,
#               KV tokens fp8 / bf16 >= 1.99, both against the fp32 reference (reported)
#   5. bench    (BENCH=1, default) oracle/bench_make_8b.py --layers BENCH_LAYERS (4): the Llama-3.1-8B geometry (32 q /
#               8 kv heads of 128) with fewer layers, then `bench-model --context 4096 --op-breakdown` with bf16 and with
#               fp8 KV: the attention GPU ms per decode batch (BENCH_BATCHES 1,8,32) and of a 2048-token prefill; compare_kv
#               gates fp8 <= 1.05 x bf16
# Environment: STEPS ("train ref gen compare bench"), MODELS, TPS, BENCH, BENCH_LAYERS, BENCH_BATCHES, TRAIN_STEPS
# (300), GEN_TIMEOUT (240 s), GEN_ARGS, MEM_FRACTION, MODELDIR/REFDIR/RUNS (/tmp/tl-models, /tmp/tl-ref,
# /tmp/tl-kvfp8-runs), BUDGET (570 s; later steps get what is left, a run is skipped under 45 s left). /tmp stays
# while the machine is warm: a first call STEPS="train ref", then STEPS="gen compare", then STEPS="bench compare".
# Results under $OUT: kvfp8.txt (the table), results.json (compare_kv's rows), bench-*.json, kvfp8.log (the combined
# log, capped). The table is printed last; exit code 0 when every gated row PASSes, 1 when one FAILs, 2 when a
# preparation step failed.
set -uo pipefail
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
PY_LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}   # python's (see PY below)
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
# NVLink multicast stays off on the multi-GPU machines (NCCL NVLS, symmetric memory, NVSHMEM).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=true HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
unset TENSORLANE_KV_CACHE_DTYPE   # each run names its KV dtype
bash "$(dirname "$0")/device-unpack.sh" || exit 2   # .device/bundle.tar.xz -> .device/jre, .device/app
JAVA=".device/jre/bin/java -Xmx4g"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
PY="env LD_LIBRARY_PATH=$PY_LD_LIBRARY_PATH ${PY:-python3}"
ORACLE=runtime-image/scripts/oracle
MODELDIR=${MODELDIR:-/tmp/tl-models}
REFDIR=${REFDIR:-/tmp/tl-ref}
RUNS=${RUNS:-/tmp/tl-kvfp8-runs}
LOGS=/tmp/tl-kvfp8-logs
STEPS=${STEPS:-train ref gen compare bench}
TPS=${TPS:-1 2 4 8}
MODELS=${MODELS-llama mistral qwen2 qwen3}   # MODELS="" with STEPS="bench compare": the timing only
GEN_TIMEOUT=${GEN_TIMEOUT:-240}
GEN_ARGS=${GEN_ARGS:-}
MEM_FRACTION=${MEM_FRACTION:-0.5}
BENCH=${BENCH:-1}
BENCH_LAYERS=${BENCH_LAYERS:-4}
BENCH_BATCHES=${BENCH_BATCHES:-1,8,32}
BENCH_CKPT=/tmp/tl-bench-8b-l$BENCH_LAYERS
export MODELS
mkdir -p "$LOGS"
LOG="$OUT/kvfp8.log"   # written as it goes: a command stopped at the device limit still brings it back
. "$(dirname "$0")/device-lib.sh"
: > "$LOG"

NCCL=$($PY -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || true)
[ -n "$NCCL" ] && export LD_LIBRARY_PATH="$(dirname "$NCCL"):$LD_LIBRARY_PATH"

{
  echo "== date: $(date -u +%FT%TZ)  steps: $STEPS  models: $MODELS  tps: $TPS  memory fraction: $MEM_FRACTION"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  $JAVA -jar "$APP" version 2>&1 | head -5
} | tee -a "$LOG"
prep_rc=0

# ---- 1. train, 2. reference (the oracle's, as device-models.sh makes them)
have_models=1
for m in $MODELS; do [ -f "$MODELDIR/$m/config.json" ] || have_models=0; done
if has_step train; then
  if [ "${SKIP_TRAIN:-0}" = 1 ] && [ $have_models = 1 ]; then
    say "== train: skipped (SKIP_TRAIN=1, $MODELDIR has the models)"
  else
    step train "$LOGS/train.log" timeout "$(tmo 420 60)" $PY $ORACLE/make_models.py --out "$MODELDIR" --steps "${TRAIN_STEPS:-300}" --models "$MODELS" || prep_rc=2
  fi
fi
have_ref=1
for m in $MODELS; do [ -f "$REFDIR/$m/prompts.jsonl" ] || have_ref=0; done
if has_step ref; then
  if [ "${SKIP_REF:-0}" = 1 ] && [ $have_ref = 1 ]; then
    say "== ref: skipped (SKIP_REF=1, $REFDIR has the references)"
  else
    step ref "$LOGS/ref.log" timeout "$(tmo 420 40)" $PY $ORACLE/reference.py --models "$MODELDIR" --out "$REFDIR" --only "$MODELS" || prep_rc=2
  fi
fi

# ---- 3. generate: bf16 KV and fp8 KV per model and TP
if has_step gen; then
  for m in $MODELS; do
    if [ ! -f "$REFDIR/$m/prompts.jsonl" ]; then say "== $m: no reference in $REFDIR/$m; runs skipped"; continue; fi
    rm -rf "$RUNS/$m"; mkdir -p "$RUNS/$m"
    for tp in $TPS; do
      for kv in bf16 fp8; do
        dir=tp$tp; [ $kv = fp8 ] && dir=tp$tp-kvfp8
        d="$RUNS/$m/$dir"; mkdir -p "$d/logits"
        if [ "$(left)" -lt 45 ]; then say "== generate $m $dir: skipped, $(left) s left of BUDGET=$BUDGET"; continue; fi
        gt=$(tmo "$GEN_TIMEOUT" 20)
        kvarg="--kv-cache-dtype $kv"; [ $kv = bf16 ] && kvarg="--kv-cache-dtype auto"
        step "generate $m $dir" "$LOGS/$m-$dir.log" bash -c 'out=$1; shift; timeout -s QUIT -k 5 '"$gt"' "$@" > "$out"' _ "$d/generate.jsonl" \
          $JAVA -jar "$APP" generate --model "$MODELDIR/$m" --tp "$tp" --virtual-ranks --prompts-file "$REFDIR/$m/prompts.jsonl" \
          --max-tokens 64 --ignore-eos --json --logprobs 5 --dump-logits "$d/logits" --memory-fraction "$MEM_FRACTION" $kvarg $GEN_ARGS
        grep -E '^engine: (memory per rank|FP8 KV)' "$LOGS/$m-$dir.log" | sed 's/^/   /' | tee -a "$LOG"
        say "   $(grep -c '"generated_ids"' "$d/generate.jsonl" 2>/dev/null || echo 0) result lines; $(grep '"summary"' "$d/generate.jsonl" 2>/dev/null | tail -1 | cut -c1-300)"
      done
    done
  done
fi

# ---- 5. bench: attention at context 4096, bf16 vs fp8 KV (before compare, which reads its JSON)
bench_files=""
if has_step bench && [ "$BENCH" = 1 ]; then
  if [ -f "$BENCH_CKPT/.complete" ]; then say "== bench checkpoint: $BENCH_CKPT present"
  else step "make 8b geometry ($BENCH_LAYERS layers)" "$LOGS/make.log" timeout "$(tmo 300 120)" $PY $ORACLE/bench_make_8b.py --out "$BENCH_CKPT" --layers "$BENCH_LAYERS" || prep_rc=2
  fi
  for kv in bf16 fp8; do
    if [ "$(left)" -lt 60 ]; then say "== bench $kv: skipped, $(left) s left"; continue; fi
    t=$(tmo 200 30)
    kvarg="--kv-cache-dtype $kv"; [ $kv = bf16 ] && kvarg="--kv-cache-dtype auto"
    step "bench-model $kv KV" "$LOGS/bench-$kv.log" timeout -s QUIT -k 5 "$t" $JAVA -jar "$APP" bench-model --model "$BENCH_CKPT" --tp 1 \
      --batches "$BENCH_BATCHES" --context 4096 --warmup 50 --iters 30 --prefill-tokens 2048 --prefill-iters 5 --op-breakdown \
      --max-seconds $(( t - 20 )) --label "kv-$kv" --json "$OUT/bench-$kv.json" $kvarg
    grep -E '^(bench-model|engine: memory| batch| +[0-9]+ |prefill| +ops)' "$LOGS/bench-$kv.log" | tee -a "$LOG"
  done
  [ -f "$OUT/bench-bf16.json" ] && [ -f "$OUT/bench-fp8.json" ] && bench_files="$OUT/bench-bf16.json $OUT/bench-fp8.json"
fi

# ---- 4. compare
compare_rc=0
if has_step compare; then
  t0=$(now)
  $PY $ORACLE/compare_kv.py --ref "$REFDIR" --runs "$RUNS" --out "$OUT/results.json" --only "$MODELS" \
    ${bench_files:+--bench "$bench_files"} > "$LOGS/compare.log" 2>&1
  compare_rc=$?
  say "== compare: exit $compare_rc, $(since "$t0") s"
  cp "$LOGS/compare.log" "$OUT/kvfp8.txt"
fi
say "== total: $(( $(date +%s) - T_ALL )) s"

if [ "$(stat -c %s "$LOG")" -gt 4000000 ]; then
  { head -c 1000000 "$LOG"; echo; echo "[... cut ...]"; tail -c 2900000 "$LOG"; } > "$LOGS/kvfp8.cut"
  mv "$LOGS/kvfp8.cut" "$LOG"
fi

echo "================ kvfp8: table ================"
cat "$OUT/kvfp8.txt" 2>/dev/null || echo "(no compare table)"
[ $prep_rc -ne 0 ] && { echo "a preparation step failed (see kvfp8.log)"; exit $prep_rc; }
exit $compare_rc
