#!/usr/bin/env bash
# FP8 weights: the engine's runs of FP8 checkpoints against references made from the same FP8 weights dequantized, on
# the GPU machine (device tool, kind nvidia-h200, carry [".device"]; virtual ranks on GPU 0). Needs .device/ (the
# jlinked JRE and jars of runtime-image/scripts/device-prepare.sh) and the machine's python3 (torch, transformers,
# tokenizers, safetensors, numpy). No internet is needed. One call, BUDGET 570 s.
#   1. train    oracle/make_models.py: llama128, llamaodd, qwen3 (bf16; skipped with SKIP_TRAIN=1 when present)
#   2. fp8      oracle/make_fp8.py --selfcheck, then <base>-fp8b / -fp8c / -fp8t, each with its <variant>-deq reference
#               checkpoint (the same fp8 weights dequantized, fp32), and llama128-fp8b-badscale (the negative control);
#               every tensor's FP8-vs-bf16 relative norm error goes to fp8-report.json
#   3. ref      oracle/reference.py on the -deq directories (fp32 prefill logits, bf16 greedy; SKIP_REF=1 skips); with
#               ACT_QUANT=1 (default) a second one with --act-quant (prefill activations e4m3 per token and 128 columns)
#   4. tok      the engine's `tokenize` on each FP8 directory
#   5. gen      the engine's `generate` on each FP8 directory, the flags of device-models.sh, per TP of FP8_RUNS:
#               llama128-fp8b/-fp8c/-fp8t, qwen3-fp8c/-fp8t at TPS (1 2 4 8); qwen3-fp8b at TPS without 8 (its
#               intermediate 1536 / 8 = 192 is no multiple of 128); llamaodd-* at 1. Then qwen3-fp8b at TP 8 once more,
#               which the engine must REFUSE (exit 2, a message that mentions 128): the expected-refusal row; and the
#               control llama128-fp8b-badscale at TP 1
#   6. compare  oracle/compare.py --ref-of: the runs of <variant> against the reference of <variant>-deq (compare's
#               default thresholds: cosine >= 0.999 per position, top-1 >= 98%, the greedy top-5 walk, TP N vs TP 1);
#               the control against llama128-fp8b-deq, which must FAIL (counted as the control's PASS)
# Environment: STEPS ("train fp8 ref tok gen compare"), TPS, FP8_RUNS ("name:tp,tp ..."), REFUSE ("qwen3-fp8b:8"; ''
# for none), CONTROL ("llama128-fp8b-badscale"; '' for none), BASES, VARIANTS, TRAIN_STEPS (300), GEN_TIMEOUT (240 s),
# GEN_ARGS / TOK_ARGS, MODELDIR/REFDIR/RUNS (/tmp/tl-models, /tmp/tl-ref, /tmp/tl-fp8-runs), BUDGET (570 s).
# Results under $OUT: fp8.txt (the table), results.json (compare's rows), control.json, fp8-report.json (distances),
# fp8.log (the combined log, capped). The table is printed last; exit code 0 only when every expected row PASSes
# (compare, control, refusal, selfcheck), 1 when one FAILs, 2 when a preparation step failed.
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
PY="env LD_LIBRARY_PATH=$PY_LD_LIBRARY_PATH ${PY:-python3}"
ORACLE=runtime-image/scripts/oracle
MODELDIR=${MODELDIR:-/tmp/tl-models}
REFDIR=${REFDIR:-/tmp/tl-ref}
RUNS=${RUNS:-/tmp/tl-fp8-runs}
LOGS=/tmp/tl-fp8-logs
STEPS=${STEPS:-train fp8 ref tok gen compare}
TPS=${TPS:-1 2 4 8}
BASES=${BASES:-llama128 llamaodd qwen3}
VARIANTS=${VARIANTS:-fp8b fp8c fp8t}
GEN_TIMEOUT=${GEN_TIMEOUT:-240}
# 1 (default): the gating reference quantizes the decoder linears' inputs in prefill as the engine's FP8 tensor-core path
# does (the checkpoints' dynamic activation scheme; $REFDIR-a8), the weights-only reference ($REFDIR) is compared too and
# reported; 0: the weights-only reference gates (for TENSORLANE_FP8_GEMM=off runs, W8A16 throughout)
ACT_QUANT=${ACT_QUANT:-1}
GATE_REF=$REFDIR; [ "$ACT_QUANT" = 1 ] && GATE_REF=$REFDIR-a8
GEN_ARGS=${GEN_ARGS:-}
TOK_ARGS=${TOK_ARGS:-}
csv() { local IFS=,; echo "$*"; }
TPS_NO8=""; for tp in $TPS; do [ "$tp" != 8 ] && TPS_NO8="$TPS_NO8 $tp"; done
if [ -z "${FP8_RUNS:-}" ]; then
  FP8_RUNS="llama128-fp8b:$(csv $TPS) llama128-fp8c:$(csv $TPS) llama128-fp8t:$(csv $TPS)"
  [ -n "$TPS_NO8" ] && FP8_RUNS="$FP8_RUNS qwen3-fp8b:$(csv $TPS_NO8)"
  FP8_RUNS="$FP8_RUNS qwen3-fp8c:$(csv $TPS) qwen3-fp8t:$(csv $TPS)"
  FP8_RUNS="$FP8_RUNS llamaodd-fp8b:1 llamaodd-fp8c:1 llamaodd-fp8t:1"
fi
REFUSE=${REFUSE-qwen3-fp8b:8}
CONTROL=${CONTROL-llama128-fp8b-badscale}
CONTROL_REF=""; [ -n "$CONTROL" ] && CONTROL_REF="${CONTROL%-badscale}-deq"
mkdir -p "$LOGS"
LOG="$OUT/fp8.log"   # written as it goes: a command stopped at the device limit still brings it back
. "$(dirname "$0")/device-lib.sh"
: > "$LOG"

NCCL=$($PY -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || true)
[ -n "$NCCL" ] && export LD_LIBRARY_PATH="$(dirname "$NCCL"):$LD_LIBRARY_PATH"

# the names: runs (name -> TPs), the references they need (<name>-deq), the control's
RUN_NAMES=""; DEQS=""; REF_OF=""
for spec in $FP8_RUNS; do
  m=${spec%%:*}
  RUN_NAMES="$RUN_NAMES $m"; REF_OF="$REF_OF $m=$m-deq"
  [[ " $DEQS " == *" $m-deq "* ]] || DEQS="$DEQS $m-deq"
done
[ -n "$CONTROL_REF" ] && { [[ " $DEQS " == *" $CONTROL_REF "* ]] || DEQS="$DEQS $CONTROL_REF"; }
BADSCALE_BASES=""; [ -n "$CONTROL" ] && BADSCALE_BASES="${CONTROL%-fp8b-badscale}"

{
  echo "== date: $(date -u +%FT%TZ)  steps: $STEPS  bases: $BASES  variants: $VARIANTS"
  echo "== runs: $FP8_RUNS  refuse: ${REFUSE:-none}  control: ${CONTROL:-none} vs ${CONTROL_REF:-none}"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  $PY -c 'import torch, transformers, tokenizers, safetensors, numpy; print("python", __import__("sys").version.split()[0], "torch", torch.__version__, "transformers", transformers.__version__, "tokenizers", tokenizers.__version__, "safetensors", safetensors.__version__, "numpy", numpy.__version__)' 2>&1
  $JAVA -jar "$APP" version 2>&1 | head -5
} | tee -a "$LOG"
prep_rc=0
selfcheck="not run"

# ---- 1. train
have_models=1
for m in $BASES; do [ -f "$MODELDIR/$m/config.json" ] || have_models=0; done
if has_step train; then
  if [ "${SKIP_TRAIN:-0}" = 1 ] && [ $have_models = 1 ]; then
    say "== train: skipped (SKIP_TRAIN=1, $MODELDIR has $BASES)"
  else
    step train "$LOGS/train.log" timeout "$(tmo 300 60)" $PY $ORACLE/make_models.py --out "$MODELDIR" \
      --steps "${TRAIN_STEPS:-300}" --models "$BASES" || prep_rc=2
    grep -E "^(MODEL|tokenizer|corpus|  reload|  config)" "$LOGS/train.log" | tee -a "$LOG"
  fi
fi

# ---- 2. fp8 checkpoints (and the self-check of the quantization code)
if has_step fp8; then
  if step selfcheck "$LOGS/selfcheck.log" timeout 120 $PY $ORACLE/make_fp8.py --selfcheck; then selfcheck=PASS
  else selfcheck=FAIL; fi
  sed 's/^/   /' "$LOGS/selfcheck.log" | tee -a "$LOG"
  step fp8 "$LOGS/fp8.log" timeout "$(tmo 180 40)" $PY $ORACLE/make_fp8.py --models "$MODELDIR" --only "$BASES" \
    --variants "$VARIANTS" --badscale "$BADSCALE_BASES" || prep_rc=2
  grep -E "^(FP8|make_fp8|  .*-badscale)" "$LOGS/fp8.log" | tee -a "$LOG"
  cp "$MODELDIR/fp8-report.json" "$OUT/fp8-report.json" 2>/dev/null
fi

# ---- 3. references of the dequantized checkpoints
have_ref=1
for m in $DEQS; do [ -f "$REFDIR/$m/tok-expected.jsonl" ] || have_ref=0; done
if has_step ref; then
  if [ "${SKIP_REF:-0}" = 1 ] && [ $have_ref = 1 ]; then
    say "== ref: skipped (SKIP_REF=1, $REFDIR has the references)"
  else
    step ref "$LOGS/ref.log" timeout "$(tmo 240 40)" $PY $ORACLE/reference.py --models "$MODELDIR" --out "$REFDIR" \
      --only "$DEQS" || prep_rc=2
    grep -E "^(REF|reference)" "$LOGS/ref.log" | tee -a "$LOG"
    if [ "$ACT_QUANT" = 1 ]; then
      step "ref (activations e4m3)" "$LOGS/ref-a8.log" timeout "$(tmo 240 40)" $PY $ORACLE/reference.py \
        --models "$MODELDIR" --out "$REFDIR-a8" --only "$DEQS" --act-quant \
        $([ "${TENSORLANE_MOE_FP8_GEMM:-on}" = on ] && echo --expert-act-quant) || prep_rc=2
      grep -E "^(REF|reference|  .*linears)" "$LOGS/ref-a8.log" | tee -a "$LOG"
    fi
  fi
fi

# ---- 4./5. tokenize and generate
# tok NAME REF: the engine's tokenizer on MODELDIR/NAME, into RUNS/NAME/tokenize.jsonl
tok() {
  local m=$1 ref=$2
  rm -f "$RUNS/$m/tokenize.jsonl"
  step "tokenize $m" "$LOGS/$m-tokenize.log" timeout "$(tmo 120 20)" $JAVA -jar "$APP" tokenize --model "$MODELDIR/$m" \
    --input "$REFDIR/$ref/tok-input.jsonl" --output "$RUNS/$m/tokenize.jsonl" $TOK_ARGS
}
# gen NAME REF TP DIR LOGFILE: the engine's generate (stdout = DIR/generate.jsonl, stderr = LOGFILE); returns its rc
gen() {
  local m=$1 ref=$2 tp=$3 d=$4 logf=$5 rc
  rm -rf "$d"; mkdir -p "$d/logits"
  local gt t0=$SECONDS; gt=$(tmo "$GEN_TIMEOUT" 20)
  step "generate $m tp$tp" "$logf" bash -c 'out=$1; shift; timeout -s QUIT -k 5 '"$gt"' "$@" > "$out"' _ \
    "$d/generate.jsonl" $JAVA -jar "$APP" generate --model "$MODELDIR/$m" --tp "$tp" --virtual-ranks \
    --prompts-file "$REFDIR/$ref/prompts.jsonl" --max-tokens 64 --ignore-eos --json --logprobs 5 \
    --dump-logits "$d/logits" $GEN_ARGS
  rc=$?
  [ $((SECONDS - t0)) -gt "$gen_max" ] && gen_max=$((SECONDS - t0))
  local n; n=$(grep -c '"generated_ids"' "$d/generate.jsonl" 2>/dev/null); n=${n:-0}
  say "   $n result lines, $(ls "$d/logits" 2>/dev/null | wc -l) logit dumps; $(grep '"summary"' "$d/generate.jsonl" 2>/dev/null | tail -1 | cut -c1-300)"
  grep -E '^engine: (loading|weights on)' "$logf" 2>/dev/null | head -2 | sed 's/^/   /' | tee -a "$LOG"
  grep -A12 '"tensorlane-rank\|"main"' "$d/generate.jsonl" 2>/dev/null | grep -E '^"|at io.tensorlane|at jcuda|at com.sun.jna' | head -80 >> "$LOG"
  return $rc
}
# the seconds a generate needs left before it starts: 45 until one has run, then 20 (its timeout's margin) + three
# times the longest so far (at least 10), at most 45: a call's small models take ~2 s a run, so a short budget still
# reaches every variant (2026-12-07 18:18 UTC: fp8c's runs were skipped with 43 s left after fp8b's took 2.4 s each)
gen_max=-1
gen_need() { local n=45; [ "$gen_max" -ge 0 ] && n=$(( 20 + (3 * gen_max > 10 ? 3 * gen_max : 10) )); [ "$n" -gt 45 ] && n=45; echo "$n"; }
ready() {   # ready NAME REF: the model directory and the reference exist
  [ -f "$MODELDIR/$1/config.json" ] || { say "== $1: no $MODELDIR/$1; its runs skipped"; return 1; }
  [ -f "$REFDIR/$2/prompts.jsonl" ] || { say "== $1: no reference $REFDIR/$2; its runs skipped"; return 1; }
}

refusal="not run"; refusal_detail=""
for spec in $FP8_RUNS; do
  m=${spec%%:*}; tps=${spec#*:}; tps=${tps//,/ }
  ready "$m" "$m-deq" || continue
  mkdir -p "$RUNS/$m"
  has_step tok && tok "$m" "$m-deq"
  if has_step gen; then
    rm -rf "$RUNS/$m"/tp*   # no stale run directory reaches compare
    for tp in $tps; do
      if [ "$(left)" -lt "$(gen_need)" ]; then say "== generate $m tp$tp: skipped, $(left) s left of BUDGET=$BUDGET"; continue; fi
      gen "$m" "$m-deq" "$tp" "$RUNS/$m/tp$tp" "$LOGS/$m-tp$tp.log"
    done
  fi
done

# the expected refusal: kept out of RUNS (compare must not see it)
if [ -n "$REFUSE" ] && has_step gen; then
  m=${REFUSE%%:*}; tp=${REFUSE#*:}
  if ! ready "$m" "$m-deq"; then refusal=FAIL; refusal_detail="no model or reference"
  elif [ "$(left)" -lt 30 ]; then refusal=FAIL; refusal_detail="skipped, $(left) s left"
  else
    gen "$m" "$m-deq" "$tp" "$LOGS/refuse-$m-tp$tp" "$LOGS/refuse-$m-tp$tp.log"; rc=$?
    # a line that says why: mentions 128 (and what: block, multiple, TP ...), not a progress or timestamp line
    msg=$(cat "$LOGS/refuse-$m-tp$tp.log" "$LOGS/refuse-$m-tp$tp/generate.jsonl" 2>/dev/null | grep -E '128' \
      | grep -iE 'block|multiple|divis|align|fp8|tp|shard|split|rank' \
      | grep -vE '^engine: (loading|loaded|weights)|^INFO|^[A-Z][a-z]{2} [0-9]{1,2}, [0-9]{4} |"generated_ids"' \
      | head -1 | cut -c1-220)
    if [ "$rc" = 2 ] && [ -n "$msg" ]; then refusal=PASS; refusal_detail="exit 2: $msg"
    else refusal=FAIL; refusal_detail="exit $rc (expected 2), message with 128: ${msg:-none}"; fi
  fi
  say "== refusal $m tp$tp: $refusal ($refusal_detail)"
fi

# the negative control
if [ -n "$CONTROL" ] && ready "$CONTROL" "$CONTROL_REF"; then
  mkdir -p "$RUNS/$CONTROL"
  has_step tok && tok "$CONTROL" "$CONTROL_REF"
  if has_step gen; then
    rm -rf "$RUNS/$CONTROL"/tp*
    if [ "$(left)" -lt 30 ]; then say "== generate $CONTROL tp1: skipped, $(left) s left"
    else gen "$CONTROL" "$CONTROL_REF" 1 "$RUNS/$CONTROL/tp1" "$LOGS/$CONTROL-tp1.log"; fi
  fi
fi

# ---- 6. compare
compare_rc=0; control="not run"; control_detail=""
if has_step compare; then
  t0=$(now)
  $PY $ORACLE/compare.py --ref "$GATE_REF" --runs "$RUNS" --out "$OUT/results.json" --ref-of "$REF_OF" \
    > "$LOGS/compare.log" 2>&1
  compare_rc=$?
  if [ "$ACT_QUANT" = 1 ]; then   # the distance to the weights-only reference: reported, not gating
    $PY $ORACLE/compare.py --ref "$REFDIR" --runs "$RUNS" --out "$OUT/results-w8a16.json" --ref-of "$REF_OF" \
      > "$LOGS/compare-w8a16.log" 2>&1
    { echo "---- compare against the weights-only reference (not gating)"; cat "$LOGS/compare-w8a16.log"; } >> "$LOG"
  fi
  say "== compare: exit $compare_rc, $(since "$t0") s"
  { echo "---- compare"; cat "$LOGS/compare.log"; } >> "$LOG"
  if [ -n "$CONTROL" ]; then
    $PY $ORACLE/compare.py --ref "$GATE_REF" --runs "$RUNS" --out "$OUT/control.json" \
      --ref-of "$CONTROL=$CONTROL_REF" > "$LOGS/control.log" 2>&1
    crc=$?
    { echo "---- compare (control, must FAIL)"; cat "$LOGS/control.log"; } >> "$LOG"
    control_detail=$($PY $ORACLE/make_fp8.py --control-verdict "$OUT/control.json" --run "$CONTROL" 2>&1)
    vrc=$?
    if [ $crc = 1 ] && [ $vrc = 0 ]; then control=PASS; else control=FAIL; fi
    say "== control: $control (compare exit $crc) $control_detail"
  fi
fi
say "== total: $(( $(date +%s) - T_ALL )) s"

# ---- the table
{
  echo "FP8 vs bf16: relative norm error ||dequant(fp8) - w_bf16|| / ||w_bf16|| over the quantized tensors"
  $PY $ORACLE/make_fp8.py --print-report "$MODELDIR" --only "$RUN_NAMES $CONTROL" 2>&1 | sed 's/^/  /'
  echo
  echo "engine FP8 runs vs the references of the dequantized weights$([ "$ACT_QUANT" = 1 ] && echo ", prefill \
activations quantized as the engine's tensor-core path does (reference.py --act-quant)") (compare.py --ref-of, default thresholds)"
  cat "$LOGS/compare.log" 2>/dev/null || echo "(no compare)"
  if [ "$ACT_QUANT" = 1 ]; then
    echo
    echo "the same runs vs the weights-only references (activations not quantized; reported, not gating)"
    grep -E "logits/ref|rows" "$LOGS/compare-w8a16.log" 2>/dev/null || echo "(no compare)"
  fi
  echo
  [ -n "$CONTROL" ] && echo "${control_detail:-control $CONTROL: $control} (reference $CONTROL_REF)"
  [ -n "$REFUSE" ] && echo "refusal   ${REFUSE%%:*} tp${REFUSE#*:}: $refusal  ($refusal_detail)"
  echo "selfcheck make_fp8.py --selfcheck: $selfcheck"
} > "$OUT/fp8.txt"
# a check counts in the call whose STEPS ran it (a later call with STEPS="compare" keeps the refusal's "not run")
verdict=PASS
[ $compare_rc -ne 0 ] && verdict=FAIL
has_step compare && [ -n "$CONTROL" ] && [ "$control" != PASS ] && verdict=FAIL
has_step gen && [ -n "$REFUSE" ] && [ "$refusal" != PASS ] && verdict=FAIL
[ "$selfcheck" = FAIL ] && verdict=FAIL
echo "fp8: $verdict (compare exit $compare_rc, control $control, refusal $refusal, selfcheck $selfcheck)" >> "$OUT/fp8.txt"

# the combined log, capped at 4 MB (head and tail kept)
if [ "$(stat -c %s "$LOG")" -gt 4000000 ]; then
  { head -c 1000000 "$LOG"; echo; echo "[... cut ...]"; tail -c 2900000 "$LOG"; } > "$LOGS/fp8.cut"
  mv "$LOGS/fp8.cut" "$LOG"
fi

echo "================ fp8: table ================"
cat "$OUT/fp8.txt"
[ $prep_rc -ne 0 ] && { echo "a preparation step failed (see fp8.log)"; exit $prep_rc; }
[ $verdict = PASS ] && exit 0
exit 1
