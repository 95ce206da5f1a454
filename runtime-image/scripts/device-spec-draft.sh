#!/usr/bin/env bash
# Draft-model speculation (issue 34, item 2b: --speculative draft:DIR,k=K) on the GPU machine (device tool, kind
# nvidia-h200). Needs .device/ (runtime-image/scripts/device-prepare.sh, carried with carry: [".device"]) and the
# machine's python3 (torch, transformers, tokenizers). No internet.
#   1. train    oracle/make_spec_pair.py: one tokenizer and a trained pair on the standard library's sources, in
#               $PAIRDIR/{target,draft}: a target of 16 layers (hidden 2048, ~0.74 B parameters) and a draft of 2
#               (hidden 512, ~8 M, distilled from the target); skipped when $PAIRDIR has both
#   2. ref      oracle/reference.py on the target: 16 held-out prompts (8..120 tokens), fp32 prefill logits, bf16 greedy
#               64 tokens with their top-5 (skipped when $REFDIR/target has them)
#   3. check    per TP in $TPS (virtual ranks on GPU 0 for TP > 1; the draft at TP 1 on GPU 0 beside them): `generate` on
#               the reference prompts, 64 tokens, --logprobs 5, EOS ignored: base, --speculative draft:$PAIRDIR/draft,
#               k=$DRAFT_K; at TP 1 also --speculative $NGRAM
#   3b. sampled one prompt x $SAMPLES copies, temperature $TEMP (alone: the draft's guesses are drawn from its q and
#               verified by the rejection rule), $SAMPLE_TOKENS tokens, per-prompt seeds: base (seeds 1000..), draft
#               (seeds 500000..), draft with base's seeds (informational: the rule's draws are not the plain run's)
#   4. compare  oracle/spec_compare.py on the draft runs and on the n-gram run: greedy vs transformers (the vLLM-style
#               top-5 walk of compare.py) for base and spec, spec vs base (exact-match rate), guesses verified, verify
#               steps replayed CUDA graphs; the sampled token distributions at steps 1..4 (two-sample chi-square at
#               p = 1e-4, total variation)
#   5. bench    batch 1 end to end (--max-seqs 1, every run through the scheduler: base with --scheduler), the same
#               held-out prompts, $BENCH_TOKENS tokens each, greedy, EOS ignored: base, n-gram, draft; bench-model
#               --batches 1 on each model (a decode step's cost); oracle/spec_draft_table.py: tokens/s, speed-up,
#               acceptance (per position), the draft's cost per step against the target's, the 8B projection
# Judged: every compare row PASS, the draft's speed-up >= $MIN_SPEEDUP (1.5), the draft >= $MIN_COST_RATIO (4) times
# cheaper per step. n-gram's speed-up is reported beside it.
# Environment: STEPS (default "train ref check sampled compare bench"; to stay inside one call's 600 s, run
# STEPS="train ref" first and STEPS="check sampled compare bench" second: /tmp stays while the machine is warm),
# TPS ("1 2"), DRAFT_K (4), SAMPLES (3000), TEMP (0.8), SAMPLE_TOKENS (6),
# NGRAM (ngram:k=4,n=3), BENCH_TOKENS (256), TARGET_SECONDS (150), DRAFT_SECONDS (60), MIN_SPEEDUP, MIN_COST_RATIO,
# BUDGET (570 s), PAIRDIR/REFDIR/RUNS (/tmp/tl-pair, /tmp/tl-pair-ref, /tmp/tl-pair-runs).
# Results under $OUT: spec-draft.txt (the tables), spec-draft-results.json, spec-draft-bench.json, pair.json,
# spec-draft.log (the combined log). Last line: device-spec-draft: PASS|FAIL; exit 0 on PASS, 1 on a FAIL, 2 when a
# preparation step failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
PY_LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=true HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
bash runtime-image/scripts/device-unpack.sh || { echo "device-spec-draft: FAIL (no .device bundle)"; exit 2; }
JAVA=".device/jre/bin/java -Xmx6g"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
PY="env LD_LIBRARY_PATH=$PY_LD_LIBRARY_PATH ${PY:-python3}"
ORACLE=runtime-image/scripts/oracle
PAIRDIR=${PAIRDIR:-/tmp/tl-pair}
REFDIR=${REFDIR:-/tmp/tl-pair-ref}
RUNS=${RUNS:-/tmp/tl-pair-runs}
STEPS=${STEPS:-train ref check sampled compare bench}
SAMPLES=${SAMPLES:-3000}
TEMP=${TEMP:-0.8}
SAMPLE_TOKENS=${SAMPLE_TOKENS:-6}
TPS=${TPS:-1 2}
DRAFT_K=${DRAFT_K:-4}
NGRAM=${NGRAM:-ngram:k=4,n=3}
BENCH_TOKENS=${BENCH_TOKENS:-256}
TARGET_SECONDS=${TARGET_SECONDS:-150}
DRAFT_SECONDS=${DRAFT_SECONDS:-60}
MIN_SPEEDUP=${MIN_SPEEDUP:-1.5}
MIN_COST_RATIO=${MIN_COST_RATIO:-4}
# batch=64: the draft guesses in steps of up to 64 decoding sequences (the checks run 16 and 64 at once; the default, 1,
# is for serving: B sequences cost B x k draft steps); the bench runs one sequence at a time anyway
DRAFT="draft:$PAIRDIR/draft,k=$DRAFT_K,batch=64"
LOGS=/tmp/tl-spec-draft-logs
mkdir -p "$LOGS" "$RUNS"
LOG="$OUT/spec-draft.log"
. runtime-image/scripts/device-lib.sh
: > "$LOG"
prep_rc=0
fail=0
judged=0
{
  echo "== date: $(date -u +%FT%TZ)  steps: $STEPS  tps: $TPS  draft: $DRAFT  ngram: $NGRAM  bench tokens: $BENCH_TOKENS"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  $JAVA -jar "$APP" version 2>&1 | head -3
} | tee -a "$LOG"

# ---- 1. the trained pair
if has_step train; then
  if [ -f "$PAIRDIR/target/config.json" ] && [ -f "$PAIRDIR/draft/config.json" ] && [ -f "$PAIRDIR/pair.json" ]; then
    say "== train: $PAIRDIR has the pair"
  else
    rm -rf "$PAIRDIR" "$REFDIR"   # a new pair: the old target's reference goes too
    step "train the pair (make_spec_pair.py)" "$LOGS/train.log" timeout "$(tmo 420 40)" $PY $ORACLE/make_spec_pair.py \
      --out "$PAIRDIR" --target-seconds "$TARGET_SECONDS" --draft-seconds "$DRAFT_SECONDS" || prep_rc=2
    grep -E "^(PAIR|corpus|target|draft|  (target|draft): )" "$LOGS/train.log" | tee -a "$LOG"
  fi
  cp "$PAIRDIR/pair.json" "$OUT/pair.json" 2>/dev/null
fi

# ---- 2. the target's transformers reference
if has_step ref; then
  if [ -f "$REFDIR/target/greedy.jsonl" ] && [ -f "$REFDIR/target/prompts.jsonl" ]; then
    say "== ref: $REFDIR/target has the reference"
  elif [ -f "$PAIRDIR/target/config.json" ]; then
    step "reference (reference.py, target)" "$LOGS/ref.log" timeout "$(tmo 300 40)" $PY $ORACLE/reference.py \
      --models "$PAIRDIR" --out "$REFDIR" --only target || prep_rc=2
    grep -E "^(REF|reference)" "$LOGS/ref.log" | tee -a "$LOG"
  else
    say "== ref: no target in $PAIRDIR (run STEPS=train first)"; prep_rc=2
  fi
fi

gen() {   # gen NAME LOG OUTFILE args...: the engine's generate, stdout to OUTFILE
  local name=$1 logf=$2 outf=$3; shift 3
  local t; t=$(tmo 200 30)
  step "$name" "$logf" bash -c 'o=$1; shift; timeout -s QUIT -k 5 '"$t"' "$@" > "$o"' _ "$outf" \
    $JAVA -jar "$APP" generate "$@"
  local rc=$?
  say "   $(grep -c '"generated_ids"' "$outf" 2>/dev/null) result lines; $(grep '"summary"' "$outf" 2>/dev/null | tail -1 | cut -c1-400)"
  grep -E "^draft: " "$logf" | sed 's/^/   | /' | tee -a "$LOG"
  return $rc
}

PROMPTS="$REFDIR/target/prompts.jsonl"
# ---- 3. greedy with and without speculation
if has_step check; then
  if [ ! -f "$PROMPTS" ]; then
    say "== check: no reference prompts in $REFDIR/target"; fail=1
  else
    for tp in $TPS; do
      d="$RUNS/draft/target/tp$tp"; rm -rf "$d"; mkdir -p "$d"
      vr=""; [ "$tp" != 1 ] && vr="--virtual-ranks"
      if [ "$(left)" -lt 60 ]; then say "== check tp$tp: skipped, $(left) s left"; fail=1; continue; fi
      common=(--model "$PAIRDIR/target" --tp "$tp" $vr --prompts-file "$PROMPTS" --max-tokens 64 --ignore-eos --json
              --logprobs 5)
      gen "check tp$tp base" "$LOGS/tp$tp-base.log" "$d/base.jsonl" "${common[@]}"
      gen "check tp$tp draft" "$LOGS/tp$tp-draft.log" "$d/spec.jsonl" "${common[@]}" --speculative "$DRAFT"
      if [ "$tp" = 1 ]; then
        n="$RUNS/ngram/target/tp1"; rm -rf "$n"; mkdir -p "$n"
        cp "$d/base.jsonl" "$n/base.jsonl" 2>/dev/null
        gen "check tp1 ngram" "$LOGS/tp1-ngram.log" "$n/spec.jsonl" "${common[@]}" --speculative "$NGRAM"
      fi
    done
  fi
fi

# ---- 3b. sampled distributions with the draft (guesses drawn from its q, the rejection rule)
if has_step sampled; then
  sd="$RUNS/draft/sampled"; rm -rf "$sd"; mkdir -p "$sd"
  if [ -f "$PROMPTS" ] && [ "$(left)" -gt 90 ]; then
    $PY - "$PROMPTS" "$SAMPLES" > "$sd/prompts.jsonl" <<'PYEOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
# a prompt of middling length: the one nearest 48 tokens
p = min(rows, key=lambda r: abs(len(r["ids"]) - 48))
for _ in range(int(sys.argv[2])):
    print(json.dumps({"ids": p["ids"]}))
PYEOF
    s=(--model "$PAIRDIR/target" --prompts-file "$sd/prompts.jsonl" --max-tokens "$SAMPLE_TOKENS" --ignore-eos --json
       --temperature "$TEMP" --seed-per-prompt)
    gen "sampled base" "$LOGS/sampled-base.log" "$sd/base.jsonl" "${s[@]}" --seed 1000
    gen "sampled draft" "$LOGS/sampled-spec.log" "$sd/spec.jsonl" "${s[@]}" --seed 500000 --speculative "$DRAFT"
    gen "sampled draft same seeds" "$LOGS/sampled-spec-same.log" "$sd/spec-same.jsonl" "${s[@]}" --seed 1000 \
      --speculative "$DRAFT"
  else
    say "== sampled: skipped (no $PROMPTS, or $(left) s left)"; fail=1
  fi
fi

# ---- 4. compare
if has_step compare; then
  judged=1
  : > "$OUT/spec-draft.txt"
  for kind in draft ngram; do
    tps="$TPS"; [ "$kind" = ngram ] && tps=1
    echo "---- $kind proposer" >> "$OUT/spec-draft.txt"
    $PY $ORACLE/spec_compare.py --ref "$REFDIR" --runs "$RUNS/$kind" --out "$OUT/spec-draft-$kind-results.json" \
      --models target --tps "$tps" --verify-graphs on >> "$OUT/spec-draft.txt" 2>&1 || fail=1
  done
  { echo "---- spec_compare"; cat "$OUT/spec-draft.txt"; } >> "$LOG"
fi

# ---- 5. batch-1 end-to-end tokens/s and each model's decode step
if has_step bench; then
  judged=1
  b="$RUNS/bench"; rm -rf "$b"; mkdir -p "$b"
  cp "$PAIRDIR/pair.json" "$OUT/pair.json" 2>/dev/null
  if [ ! -f "$PROMPTS" ]; then
    say "== bench: no prompts in $REFDIR/target"; fail=1
  else
    common=(--model "$PAIRDIR/target" --prompts-file "$PROMPTS" --max-tokens "$BENCH_TOKENS" --ignore-eos --json
            --max-seqs 1)
    gen "bench base" "$LOGS/bench-base.log" "$b/base.jsonl" "${common[@]}" --scheduler
    gen "bench ngram" "$LOGS/bench-ngram.log" "$b/ngram.jsonl" "${common[@]}" --speculative "$NGRAM"
    gen "bench draft" "$LOGS/bench-draft.log" "$b/draft.jsonl" "${common[@]}" --speculative "$DRAFT"
    for m in target draft; do
      if [ "$(left)" -lt 40 ]; then say "== bench-model $m: skipped, $(left) s left"; continue; fi
      step "bench-model $m" "$LOGS/bench-model-$m.log" timeout -s QUIT -k 5 "$(tmo 90 20)" $JAVA -jar "$APP" \
        bench-model --model "$PAIRDIR/$m" --batches 1 --context 384 --warmup 100 --iters 100 --prefill-tokens 0 \
        --json "$b/bench-$m.json"
    done
    $PY $ORACLE/spec_draft_table.py --bench "$b" --pair "$PAIRDIR/pair.json" --k "$DRAFT_K" \
      --min-speedup "$MIN_SPEEDUP" --min-cost-ratio "$MIN_COST_RATIO" --out "$OUT/spec-draft-bench.json" \
      > "$OUT/spec-draft-bench.txt" 2>&1 || fail=1
    { echo "---- spec_draft_table"; cat "$OUT/spec-draft-bench.txt"; } >> "$LOG"
  fi
fi

say "== total: $(( $(date +%s) - T_ALL )) s"
echo "================ device-spec-draft: tables ================"
cat "$OUT/pair.json" 2>/dev/null | tr -d '\n' | cut -c1-600; echo
cat "$OUT/spec-draft.txt" 2>/dev/null
cat "$OUT/spec-draft-bench.txt" 2>/dev/null
if [ $prep_rc -ne 0 ]; then echo "device-spec-draft: FAIL (a preparation step failed, see spec-draft.log)"; exit 2; fi
if [ $judged = 0 ]; then echo "device-spec-draft: not judged (steps: $STEPS; run STEPS=\"check sampled compare bench\" next)"; exit 0; fi
if [ $fail -ne 0 ]; then echo "device-spec-draft: FAIL"; exit 1; fi
echo "device-spec-draft: PASS"
