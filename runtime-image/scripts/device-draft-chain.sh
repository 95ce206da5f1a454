#!/usr/bin/env bash
# Chained draft steps (TENSORLANE_DRAFT_CHAIN, llm.ChainedSteps, kernels' tl_chain_advance_i32) on the GPU machine
# (device tool, kind nvidia-h200, carry [".device"]; ~120 s from a fresh machine):
#   1. kernel  kernelcheck --only chain_advance: the next one-token step's inputs against the host rule, bit for bit
#   2. models  oracle/make_models.py --steps $TRAIN_STEPS on $MODEL, unless $MODELDIR has it
#   3. pairs   `generate` greedy (64 tokens, --logprobs 5, EOS ignored, CUDA graphs) with --speculative draft:<the same
#              checkpoint>,k=$K,batch=8 (the model as its own draft: every guess should be the target's token; batch=8: the
#              four prompts decode together, and the draft's default guesses at batch 1 only), with
#              TENSORLANE_DRAFT_CHAIN=off and =on, at TP 1 (and each TP of $TPS): the generated ids and logprobs, and
#              the draft counters (drafts, draft tokens, accepted tokens), must be identical; the on run must log
#              that it chained; acceptance must be >= $MIN_ACCEPT (0.9: a wrongly fed chain guesses badly, which the
#              target then rejects)
# Reports decode tokens/s of both runs (informational: small model, short run). PASS: every line PASS.
# Environment: MODEL (llama), TPS ("1 2"), K (4), TRAIN_STEPS (30), MODELDIR (/tmp/tl-chain-models), BUDGET (200 s),
# MIN_ACCEPT (0.9). Results under $OUT: chain.txt (printed last), chain.log, runs/. Last line: chain: PASS|FAIL.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT/runs"
PY_LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=true HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
bash runtime-image/scripts/device-unpack.sh || { echo "chain: FAIL (no .device bundle)"; exit 2; }
JAVA=".device/jre/bin/java -Xmx4g"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
PY="env LD_LIBRARY_PATH=$PY_LD_LIBRARY_PATH ${PY:-python3}"
MODEL=${MODEL:-llama}
TPS=${TPS:-1 2}
K=${K:-4}
MODELDIR=${MODELDIR:-/tmp/tl-chain-models}
BUDGET=${BUDGET:-200}
MIN_ACCEPT=${MIN_ACCEPT:-0.9}
STEPS=${STEPS:-kernel models pairs}
LOG="$OUT/chain.log"
TXT="$OUT/chain.txt"
. runtime-image/scripts/device-lib.sh
: > "$LOG"
: > "$TXT"
fails=0
say "== date: $(date -u +%FT%TZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"

if has_step kernel; then
  timeout "$(tmo 60 20)" $JAVA -jar "$APP" kernelcheck --only "chain_advance" > "$OUT/kernelcheck.txt" 2>&1
  kc=$(grep -E "^kernelcheck: " "$OUT/kernelcheck.txt" | tail -1)
  case "$kc" in "kernelcheck: "[1-9]*" passed, 0 failed") echo "kernel: PASS ${kc#kernelcheck: }" | tee -a "$TXT" ;;
    *) echo "kernel: FAIL (${kc:-no summary; see kernelcheck.txt})" | tee -a "$TXT"; fails=$((fails + 1)) ;; esac
fi
if has_step models && [ ! -f "$MODELDIR/$MODEL/config.json" ]; then
  step "train $MODEL" "$OUT/train.log" timeout "$(tmo 120 60)" \
    $PY runtime-image/scripts/oracle/make_models.py --out "$MODELDIR" --steps "${TRAIN_STEPS:-30}" --models "$MODEL"
fi
printf '%s\n' '{"text": "def main():"}' '{"text": "import os\nimport sys\n\nclass Reader:\n    def __init__(self, path):"}' \
  '{"text": "for i in range(10):\n    print(i)\n"}' \
  '{"text": "\"\"\"Utilities for parsing configuration files and the command line.\n\nThe functions here"}' \
  > "$OUT/runs/prompts.jsonl"

run() {   # run DIR CHAIN TP: generate's JSON lines to DIR/CHAIN.jsonl, its log to DIR/CHAIN.log
  local d=$1 chain=$2 tp=$3
  local vr=""; [ "$tp" -gt 1 ] && vr="--virtual-ranks"
  TENSORLANE_DRAFT_CHAIN=$chain timeout -s QUIT -k 5 "$(tmo 60 10)" $JAVA -jar "$APP" generate \
    --model "$MODELDIR/$MODEL" --tp "$tp" $vr --speculative "draft:$MODELDIR/$MODEL,k=$K,batch=8" \
    --prompts-file "$OUT/runs/prompts.jsonl" --max-tokens 64 --ignore-eos --json --logprobs 5 \
    > "$d/$chain.jsonl" 2> "$d/$chain.log"
}
pairs=0
if has_step pairs; then
  if [ ! -f "$MODELDIR/$MODEL/config.json" ]; then echo "$MODEL: no checkpoint  FAIL" | tee -a "$TXT"; fails=$((fails + 1)); fi
  for tp in $TPS; do
    [ -f "$MODELDIR/$MODEL/config.json" ] || break
    if [ "$(left)" -lt 30 ]; then echo "$MODEL tp$tp: skipped ($(left) s left)" | tee -a "$TXT"; fails=$((fails + 1)); continue; fi
    d="$OUT/runs/$MODEL-tp$tp"; mkdir -p "$d"
    run "$d" off "$tp"; rc_off=$?
    run "$d" on "$tp"; rc_on=$?
    pairs=$((pairs + 1))
    verdict=$($PY - "$d/off.jsonl" "$d/on.jsonl" "$d/on.log" "$rc_off" "$rc_on" "$MIN_ACCEPT" <<'PY'
import json, sys
off, on, log, rc_off, rc_on, min_accept = sys.argv[1:7]
def rows(path):
    res, summary = [], None
    for line in open(path, errors="replace"):
        line = line.strip()
        if not line.startswith("{"):
            continue
        o = json.loads(line)
        if "summary" in o:
            summary = o["summary"]
        elif "generated_ids" in o:
            res.append((o["generated_ids"], o.get("logprobs")))
    return res, summary or {}
try:
    a, sa = rows(off)
    b, sb = rows(on)
except Exception as e:
    print(f"FAIL (unreadable output: {e})"); sys.exit()
problems = []
if rc_off != "0" or rc_on != "0": problems.append(f"exit {rc_off}/{rc_on}")
if not a or len(a) != len(b): problems.append(f"{len(a)} vs {len(b)} results")
same = sum(x == y for x, y in zip(a, b))
if same != len(a): problems.append(f"ids and logprobs equal for {same}/{len(a)}")
counters = ("spec_drafts", "spec_draft_tokens", "spec_accepted_tokens")
ca, cb = [sa.get(c) for c in counters], [sb.get(c) for c in counters]
if ca != cb or None in ca: problems.append(f"draft counters off {ca} / on {cb}")
acc = (sb.get("spec_accepted_tokens") or 0) / max(1, sb.get("spec_draft_tokens") or 0)
if acc < float(min_accept): problems.append(f"acceptance {acc:.3f} < {min_accept}")
if "greedy steps chained on the GPU" not in open(log, errors="replace").read(): problems.append("on: never chained")
info = (f"{len(a)} prompts, acceptance {acc:.3f}, decode tok/s off {sa.get('decode_tokens_per_s', 0):.0f} "
        f"on {sb.get('decode_tokens_per_s', 0):.0f}")
print(("PASS " if not problems else "FAIL ") + info + ("" if not problems else ": " + "; ".join(problems)))
PY
)
    echo "$MODEL tp$tp: $verdict" | tee -a "$TXT"
    case "$verdict" in PASS*) ;; *) fails=$((fails + 1)) ;; esac
    grep -h -E "chained|Exception|error" "$d/on.log" | head -5 >> "$LOG"
  done
fi
echo "================ chain ================"
cat "$TXT"
if [ "$fails" -eq 0 ] && { [ "$pairs" -gt 0 ] || ! has_step pairs; }; then echo "chain: PASS"; exit 0; fi
echo "chain: FAIL ($fails failed or skipped)"; exit 1
