#!/usr/bin/env bash
# The engine's outputs against Hugging Face transformers, on the GPU machine (device tool, kind nvidia-h200 or
# nvidia-h200-x2). Needs .device/ (the jlinked JRE and jars from runtime-image/scripts/device-prepare.sh, carried with
# carry: [".device"]) and the machine's python3 (torch, transformers, tokenizers, numpy). No internet is needed.
#   1. train    oracle/make_models.py: four small trained checkpoints (llama, mistral, qwen2, qwen3), bf16 safetensors
#               with their byte-level BPE tokenizers, in $MODELDIR (skipped with SKIP_TRAIN=1 when they exist)
#   2. ref      oracle/reference.py: prompts, fp32 prefill logits, bf16 greedy tokens (64, EOS ignored), tokenizer cases
#               in $REFDIR (skipped with SKIP_REF=1 when they exist)
#   3. tok      the engine's `tokenize` once per model (TP-independent)
#   4. gen      the engine's `generate` per model and TP in ${TPS:-1 2 4 8} (virtual ranks on GPU 0); REAL_TP=2 also
#               runs tp 2 on two GPUs (no --virtual-ranks, directory tp2-real) when two GPUs are visible
#   5. compare  oracle/compare.py: logits vs fp32, greedy vs bf16 (vLLM-style top-5 check), TP=N vs TP=1, tokenizer
# Environment: MODELS="llama qwen3" restricts the models (the MoE ones: MODELS="qwen3moe mixtral" TPS_mixtral="1 2",
# a model's own TP list in TPS_<model>); STEPS="train ref tok gen compare" picks steps (e.g. a first
# call STEPS="train ref", a second STEPS="tok gen compare": /tmp stays while the machine is warm); TRAIN_STEPS (300);
# GEN_TIMEOUT (240 s a run); BUDGET (570 s for the whole script: later steps get what is left, a generate run is skipped
# under 45 s left); GEN_ARGS / TOK_ARGS: extra engine arguments; MODELDIR/REFDIR/RUNS (/tmp/tl-models, -ref, -runs).
# Results under $OUT: results.json (compare's numbers), models.txt (the table), models.log (the combined log, capped).
# The table is printed last; exit code: compare's (0 all PASS, 1 a FAIL), or 2 when a preparation step failed.
set -uo pipefail
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
PY_LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}   # python's (see PY below)
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
# NVLink multicast stays off on the multi-GPU machines (NCCL NVLS, symmetric memory, NVSHMEM).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=true HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
bash "$(dirname "$0")/device-unpack.sh" || exit 2   # .device/bundle.tar.xz -> .device/jre, .device/app
JAVA=".device/jre/bin/java -Xmx4g"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
# the Java engine gets the library path above; python gets the driver's directory and the original path only (a
# libpython under /usr/lib/x86_64-linux-gnu must not shadow the interpreter's own)
PY="env LD_LIBRARY_PATH=$PY_LD_LIBRARY_PATH ${PY:-python3}"
ORACLE=runtime-image/scripts/oracle
MODELDIR=${MODELDIR:-/tmp/tl-models}
REFDIR=${REFDIR:-/tmp/tl-ref}
RUNS=${RUNS:-/tmp/tl-runs}
LOGS=/tmp/tl-logs
STEPS=${STEPS:-train ref tok gen compare}
TPS=${TPS:-1 2 4 8}
MODELS=${MODELS:-llama mistral qwen2 qwen3}
GEN_TIMEOUT=${GEN_TIMEOUT:-240}
GEN_ARGS=${GEN_ARGS:-}
TOK_ARGS=${TOK_ARGS:-}
export MODELS
mkdir -p "$LOGS"
LOG="$OUT/models.log"   # written as it goes: a command stopped at the device limit still brings it back
. "$(dirname "$0")/device-lib.sh"
: > "$LOG"

NCCL=$($PY -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || true)
[ -n "$NCCL" ] && export LD_LIBRARY_PATH="$(dirname "$NCCL"):$LD_LIBRARY_PATH"
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)


{
  echo "== date: $(date -u +%FT%TZ)  steps: $STEPS  models: $MODELS  tps: $TPS  REAL_TP: ${REAL_TP:-}"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  echo "== GPUs: $NGPU  nccl: ${NCCL:-not found}"
  $PY -c 'import torch, transformers, tokenizers, numpy; print("python", __import__("sys").version.split()[0], "torch", torch.__version__, "transformers", transformers.__version__, "tokenizers", tokenizers.__version__, "numpy", numpy.__version__)' 2>&1
  $JAVA -jar "$APP" version 2>&1 | head -5
} | tee -a "$LOG"
prep_rc=0

# ---- 1. train
have_models=1
for m in $MODELS; do [ -f "$MODELDIR/$m/config.json" ] || have_models=0; done
if has_step train; then
  if [ "${SKIP_TRAIN:-0}" = 1 ] && [ $have_models = 1 ]; then
    say "== train: skipped (SKIP_TRAIN=1, $MODELDIR has the models)"
  else
    step train "$LOGS/train.log" timeout "$(tmo 420 60)" $PY $ORACLE/make_models.py --out "$MODELDIR" --steps "${TRAIN_STEPS:-300}" --models "$MODELS" || prep_rc=2
    grep -E "^(MODEL|tokenizer|corpus|  reload|  AutoTokenizer|  config)" "$LOGS/train.log" | tee -a "$LOG"
  fi
fi

# ---- 2. reference
have_ref=1
for m in $MODELS; do [ -f "$REFDIR/$m/tok-expected.jsonl" ] || have_ref=0; done
if has_step ref; then
  if [ "${SKIP_REF:-0}" = 1 ] && [ $have_ref = 1 ]; then
    say "== ref: skipped (SKIP_REF=1, $REFDIR has the references)"
  else
    step ref "$LOGS/ref.log" timeout "$(tmo 420 40)" $PY $ORACLE/reference.py --models "$MODELDIR" --out "$REFDIR" --only "$MODELS" || prep_rc=2
    grep -E "^(REF|reference)" "$LOGS/ref.log" | tee -a "$LOG"
  fi
fi

# ---- 3. tokenize (once per model) and 4. generate (per TP)
for m in $MODELS; do
  if [ ! -f "$REFDIR/$m/prompts.jsonl" ]; then
    say "== $m: no reference in $REFDIR/$m; engine runs skipped"
    continue
  fi
  mkdir -p "$RUNS/$m"
  if has_step tok; then
    rm -f "$RUNS/$m/tokenize.jsonl"
    step "tokenize $m" "$LOGS/$m-tokenize.log" timeout "$(tmo 120 20)" $JAVA -jar "$APP" tokenize --model "$MODELDIR/$m" \
      --input "$REFDIR/$m/tok-input.jsonl" --output "$RUNS/$m/tokenize.jsonl" $TOK_ARGS
  fi
  if has_step gen; then
    rm -rf "$RUNS/$m"/tp*   # no stale run directory reaches compare
    runs=""
    tps_var="TPS_$m"; model_tps=${!tps_var:-$TPS}   # TPS_mixtral="1 2": a model's own TP list
    for tp in $model_tps; do runs="$runs tp$tp:$tp:virtual"; done
    if [ -n "${REAL_TP:-}" ]; then
      if [ "${NGPU:-0}" -ge "$REAL_TP" ]; then runs="$runs tp${REAL_TP}-real:$REAL_TP:real"
      else say "== REAL_TP=$REAL_TP asked, $NGPU GPU(s) visible: real tp run skipped"; fi
    fi
    for r in $runs; do
      IFS=: read -r dir tp mode <<< "$r"
      d="$RUNS/$m/$dir"
      rm -rf "$d"; mkdir -p "$d/logits"
      vr="--virtual-ranks"; [ "$mode" = real ] && vr=""
      if [ "$(left)" -lt 45 ]; then say "== generate $m $dir: skipped, $(left) s left of BUDGET=$BUDGET"; continue; fi
      gt=$(tmo "$GEN_TIMEOUT" 20)
      # the engine's stdout is the result (generate.jsonl); its stderr goes to the log
      step "generate $m $dir" "$LOGS/$m-$dir.log" bash -c 'out=$1; shift; timeout -s QUIT -k 5 '"$gt"' "$@" > "$out"' _ "$d/generate.jsonl" \
        $JAVA -jar "$APP" generate --model "$MODELDIR/$m" --tp "$tp" $vr --prompts-file "$REFDIR/$m/prompts.jsonl" \
        --max-tokens 64 --ignore-eos --json --logprobs 5 --dump-logits "$d/logits" $GEN_ARGS
      n=$(grep -c '"generated_ids"' "$d/generate.jsonl" 2>/dev/null); n=${n:-0}
      say "   $n result lines, $(ls "$d/logits" 2>/dev/null | wc -l) logit dumps; $(grep '"summary"' "$d/generate.jsonl" 2>/dev/null | tail -1 | cut -c1-300)"
      # a run stopped by the timeout got SIGQUIT first: its thread dump (on stdout) says where the rank threads waited
      grep -A12 '"tensorlane-rank\|"main"' "$d/generate.jsonl" 2>/dev/null | grep -E '^"|at io.tensorlane|at jcuda|at com.sun.jna' | head -80 >> "$LOG"
    done
  fi
done

# ---- 5. compare
compare_rc=0
if has_step compare; then
  t0=$(now)
  $PY $ORACLE/compare.py --ref "$REFDIR" --runs "$RUNS" --out "$OUT/results.json" --only "$MODELS" > "$LOGS/compare.log" 2>&1
  compare_rc=$?
  say "== compare: exit $compare_rc, $(since "$t0") s"
  { echo "---- compare"; cat "$LOGS/compare.log"; } >> "$LOG"
  cp "$LOGS/compare.log" "$OUT/models.txt"
fi
say "== total: $(( $(date +%s) - T_ALL )) s"

# the combined log, capped at 4 MB (head and tail kept)
if [ "$(stat -c %s "$LOG")" -gt 4000000 ]; then
  { head -c 1000000 "$LOG"; echo; echo "[... cut ...]"; tail -c 2900000 "$LOG"; } > "$LOGS/models.cut"
  mv "$LOGS/models.cut" "$LOG"
fi

echo "================ models: table ================"
cat "$OUT/models.txt" 2>/dev/null || echo "(no compare table)"
[ $prep_rc -ne 0 ] && { echo "a preparation step failed (see models.log)"; exit $prep_rc; }
exit $compare_rc
