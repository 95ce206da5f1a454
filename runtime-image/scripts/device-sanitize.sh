#!/usr/bin/env bash
# The model kernels under NVIDIA compute-sanitizer on the GPU machine (device tool, kind nvidia-h200). Needs .device/ from
# runtime-image/scripts/device-prepare.sh (carried with carry: [".device"]) and the machine's python3 (torch,
# transformers, tokenizers) for the small checkpoints of scripts/oracle/make_models.py. Builds nothing there.
#   0. a positive control: a tiny CUDA program (nvcc there) that writes past its buffer must be reported by memcheck
#   1. kernelcheck (every model kernel against its fp64 host reference) under memcheck (out-of-bounds and misaligned
#      accesses)
#   2. train the small checkpoints (TRAIN_STEPS=30: only their shapes and architectures matter here)
#   3. per model: `generate` at TP 1 under memcheck, five prompts of different lengths (decode padded to bucket 8),
#      greedy with CUDA graphs; then per model the same sampled (temperature, top-k, top-p) with eager decode steps and
#      the baseline kernels (split-key attention for prefill, cuBLAS for every linear)
#   4. kernelcheck under the other tools: racecheck (shared-memory hazards), synccheck (barrier misuse)
# In that order of priority: a run that would start with under 30 s of BUDGET left is listed as skipped.
# Not here: the allreduce kernels. The sanitizer runs one kernel at a time, and virtual ranks need their kernels
# resident together (they would wait for each other until the watchdog); selftest checks them (poisoned outputs,
# bitwise references, bytes past each output untouched).
# Results under $OUT: sanitize.txt (one line per run: tool, what, errors, exit code; printed last), sanitize.log
# (every run's sanitizer report, capped). Exit code 0 only when every run reported 0 errors and exited 0.
# Environment: MODELS (llama mistral qwen2 qwen3), TOOLS (step 4's, default racecheck synccheck), BUDGET (560 s).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
T0=$(date +%s)
BUDGET=${BUDGET:-560}
PY_LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=true HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
bash "$(dirname "$0")/device-unpack.sh" || exit 2   # .device/bundle.tar.xz -> .device/jre, .device/app
JAVA=".device/jre/bin/java -Xmx4g"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
PY="env LD_LIBRARY_PATH=$PY_LD_LIBRARY_PATH ${PY:-python3}"
MODELS=${MODELS:-llama mistral qwen2 qwen3}
TOOLS=${TOOLS:-racecheck synccheck}
MODELDIR=${MODELDIR:-/tmp/tl-sanitize-models}
W=$(mktemp -d)
TXT="$OUT/sanitize.txt"
LOG="$OUT/sanitize.log"
: > "$TXT"
: > "$LOG"
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda-*/bin/compute-sanitizer 2>/dev/null | head -1)
if [ -z "$SAN" ]; then
  echo "compute-sanitizer not found" | tee -a "$TXT"
  exit 2
fi
{
  echo "== date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
  "$SAN" --version 2>&1 | tail -2
} | tee -a "$LOG"
fails=0

# Runs "$@" under tool $1 with label $2, time limit $3 s; one line in sanitize.txt.
sanitized() {
  local tool=$1 label=$2 limit=$3
  shift 3
  if [ "$(left)" -lt 30 ]; then
    printf '%-10s %-44s skipped (%s s left of BUDGET=%s)\n' "$tool" "$label" "$(left)" "$BUDGET" | tee -a "$TXT"
    return
  fi
  [ "$limit" -gt "$(left)" ] && limit=$(left)
  local rep="$W/$tool-${label//[^A-Za-z0-9]/_}.txt" s rc errors
  s=$(date +%s)
  timeout -k 10 "$limit" "$SAN" --tool "$tool" --target-processes all --print-limit 20 --log-file "$rep" "$@" > "$W/stdout.txt" 2>&1
  rc=$?
  # memcheck/synccheck: "ERROR SUMMARY: N errors"; racecheck: "RACECHECK SUMMARY: H hazards displayed (N errors, ...)"
  errors=$(grep -oE 'ERROR SUMMARY: [0-9]+|SUMMARY: [0-9]+ hazards displayed \([0-9]+ errors' "$rep" 2>/dev/null | tail -1 \
    | grep -oE '[0-9]+( errors)?$' | grep -oE '^[0-9]+')
  [ -z "$errors" ] && errors="?"
  local verdict=PASS
  if [ "${EXPECT_ERRORS:-0}" = 1 ]; then   # the positive control: the tool must report the planted error
    if [ "$errors" = "?" ] || [ "$errors" = 0 ]; then verdict=FAIL; fails=$((fails + 1)); fi
  elif [ "$rc" -ne 0 ] || [ "$errors" != 0 ]; then verdict=FAIL; fails=$((fails + 1)); fi
  printf '%-10s %-44s %s  errors %s  exit %s  %s s\n' "$tool" "$label" "$verdict" "$errors" "$rc" "$(( $(date +%s) - s ))" | tee -a "$TXT"
  {
    echo "==== $tool $label: exit $rc"
    tail -c 20000 "$rep" 2>/dev/null
    echo "---- stdout/stderr (last 40 lines)"
    tail -40 "$W/stdout.txt"
  } >> "$LOG"
}

# 0. positive control: a kernel that writes one element past its buffer must be reported (so a 0 below means
#    something): nvcc there, no Java
cat > "$W/oob.cu" <<'CU'
#include <cstdio>
__global__ void past_the_end(int* p, int n) { p[n] = 1; }
int main() {
  int* p;
  cudaMalloc(&p, 256 * sizeof(int));
  past_the_end<<<1, 1>>>(p, 256);
  printf("sync: %d\n", (int)cudaDeviceSynchronize());
  return 0;
}
CU
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if "$NVCC" -arch=sm_90 -o "$W/oob" "$W/oob.cu" > "$W/nvcc.log" 2>&1; then
  EXPECT_ERRORS=1 sanitized memcheck "positive control (planted write past the end)" 60 "$W/oob"
else
  echo "memcheck   positive control: nvcc failed ($(head -c 300 "$W/nvcc.log"))" | tee -a "$TXT"; fails=$((fails + 1))
fi

# 1. kernelcheck under memcheck
sanitized memcheck "kernelcheck" 150 $JAVA -jar "$APP" kernelcheck

# 2. small checkpoints
if [ "$(left)" -gt 120 ]; then
  s=$(date +%s)
  timeout 200 $PY runtime-image/scripts/oracle/make_models.py --out "$MODELDIR" --steps "${TRAIN_STEPS:-30}" --models "$MODELS" \
    > "$W/train.log" 2>&1
  echo "train: exit $? ($(( $(date +%s) - s )) s)" | tee -a "$LOG"
fi

# 3. generate under memcheck
printf '%s\n' '{"text": "def main():"}' '{"text": "import os\nimport sys\n\nclass Reader:\n    def __init__(self, path):"}' \
  '{"text": "# "}' '{"text": "for i in range(10):\n    print(i)\n"}' \
  '{"text": "\"\"\"Utilities for parsing configuration files and the command line.\n\nThe functions here"}' > "$W/prompts.jsonl"
for m in $MODELS; do
  [ -f "$MODELDIR/$m/config.json" ] || { echo "memcheck   generate $m: no checkpoint" | tee -a "$TXT"; fails=$((fails + 1)); continue; }
  sanitized memcheck "generate $m tp1 greedy graphs" 120 $JAVA -jar "$APP" generate --model "$MODELDIR/$m" --tp 1 \
    --prompts-file "$W/prompts.jsonl" --max-tokens 12 --ignore-eos --json
done
for m in $MODELS; do
  [ -f "$MODELDIR/$m/config.json" ] || continue
  sanitized memcheck "generate $m tp1 sampled eager baseline" 120 $JAVA -jar "$APP" generate --model "$MODELDIR/$m" --tp 1 \
    --prompts-file "$W/prompts.jsonl" --max-tokens 12 --ignore-eos --json --no-graphs --baseline-kernels \
    --temperature 0.8 --top-k 20 --top-p 0.9 --seed 7
done

# 4. kernelcheck under the other tools
for tool in $TOOLS; do
  sanitized "$tool" "kernelcheck" 240 $JAVA -jar "$APP" kernelcheck
done

[ "$(stat -c %s "$LOG")" -gt 3000000 ] && { tail -c 3000000 "$LOG" > "$W/cut" && mv "$W/cut" "$LOG"; }
echo "== total: $(( $(date +%s) - T0 )) s, $fails failed" | tee -a "$TXT"
echo "================ sanitize ================"
cat "$TXT"
rm -rf "$W"
[ "$fails" -eq 0 ]
