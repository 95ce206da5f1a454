#!/usr/bin/env bash
# Sampling penalties on the GPU machine (device tool, kind nvidia-h200; issue #30 item 4). Needs .device/ from
# scripts/device-prepare.sh (carried with carry: [".device"]) and the machine's python3 (torch, transformers,
# tokenizers). Builds nothing there; about 4 minutes on a fresh machine, less when /tmp still has the checkpoints.
#   1. in the background: the trained llama and qwen3 oracle checkpoints (oracle/make_models.py, 150 steps), each
#      skipped when already there
#   2. kernelcheck (every model kernel; the table is kept) and its penalty cases: tl_sample_f32 over batches mixing
#      penalised, plain, masked and penalised+masked rows, greedy and seeded; penalised logits bit-exact against the host
#      reference (sched.PenaltyReference), every other row's logits untouched and its draw unchanged
#   3. per model: serve, then oracle/penalties_check.py against transformers on the same checkpoint: repetition_penalty
#      1.3 greedy vs generate(repetition_penalty=1.3), a logit_bias ban vs a transformers processor, a logit_bias
#      forcing "x", frequency + presence penalties vs a processor with OpenAI's arithmetic (and fewer repeats than plain
#      greedy), bad_words vs generate(bad_words_ids=...), min_tokens holding a stop token back, a seeded request with
#      every penalty reproducible
# Results under $OUT: penalties.txt (the table, printed last), penalties.log, kernelcheck.txt. Last line
# `penalties: PASS` or `penalties: FAIL`; exit 1 on FAIL.
set -uo pipefail
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
PY="env LD_LIBRARY_PATH=/usr/local/nvidia/lib64 python3"
LOG="$OUT/penalties.log"; : > "$LOG"
TABLE="$OUT/penalties.txt"; : > "$TABLE"
BUDGET=${BUDGET:-570}
# kernelcheck gets what is left above 300 s (the serve checks need that much): below ~400 s it is cut (2026-12-03,
# BUDGET=290: exit 124)
[ "$BUDGET" -ge 400 ] || { echo "device-penalties: BUDGET=$BUDGET s is too small (>= 400 s; 570 by default)" >&2; exit 2; }
source runtime-image/scripts/device-lib.sh
bash runtime-image/scripts/device-unpack.sh || exit 2
JAVA=".device/jre/bin/java -Xmx4g"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
MODELDIR=${MODELDIR:-/tmp/tl-models}
FAILS=0
row() { printf '%-10s %-40s %s\n' "$1" "$2" "$3" | tee -a "$TABLE"; case "$3" in PASS*) ;; *) FAILS=$((FAILS + 1)) ;; esac; }
say "== date: $(date -u +%FT%TZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"

# 1. checkpoints, in the background while kernelcheck runs
if [ ! -f "$MODELDIR/llama/config.json" ] || [ ! -f "$MODELDIR/qwen3/config.json" ]; then
  timeout "$(tmo 240 250)" $PY runtime-image/scripts/oracle/make_models.py --out "$MODELDIR" --steps "${TRAIN_STEPS:-150}" \
    --models "llama qwen3" > /tmp/penalties-train.log 2>&1 &
  train=$!
fi

# 2. kernelcheck: the penalty cases must pass; the rest of the table is reported, and counted
timeout "$(tmo 180 300)" $JAVA -jar "$APP" kernelcheck > "$OUT/kernelcheck.txt" 2>&1
kc=$?
pen_lines=$(grep -c "penalties,mixed batch" "$OUT/kernelcheck.txt")
pen_fail=$(grep "penalties,mixed batch" "$OUT/kernelcheck.txt" | grep -vc " PASS$")
say "== kernelcheck: exit $kc, $pen_lines penalty cases, $pen_fail failing"
grep -E "^  sample|penalties" "$OUT/kernelcheck.txt" >> "$LOG"
if [ "$pen_lines" -ge 5 ] && [ "$pen_fail" -eq 0 ]; then
  row kernels "tl_sample_f32 penalty cases ($pen_lines)" PASS
else
  row kernels "tl_sample_f32 penalty cases ($pen_lines)" "FAIL ($pen_fail failing; see kernelcheck.txt)"
fi
others=$(grep -E " (PASS|FAIL)$" "$OUT/kernelcheck.txt" | grep -v "penalties,mixed batch" | grep -c " FAIL$")
if [ "$kc" -eq 0 ]; then row kernels "kernelcheck, every case" PASS
else row kernels "kernelcheck, every case" "FAIL (exit $kc, $others other cases failing)"; fi

[ -n "${train:-}" ] && { wait "$train"; say "== train llama, qwen3: exit $?"; tail -3 /tmp/penalties-train.log >> "$LOG"; }

start() { # start PORT LOGFILE ARGS...: serve in the background, its pid in $spid
  local port=$1 logf=$2; shift 2
  $JAVA -jar "$APP" serve --port "$port" "$@" > "$logf" 2>&1 &
  spid=$!
}
ready() { # ready PORT PID SECONDS
  for i in $(seq 1 "$3"); do curl -sf "http://127.0.0.1:$1/health" > /dev/null && return 0; kill -0 "$2" 2>/dev/null || return 1; sleep 1; done
  return 1
}

# 3. end to end against transformers
for m in ${MODELS:-llama qwen3}; do
  [ -f "$MODELDIR/$m/config.json" ] || { row "$m" "serve vs transformers" "FAIL (no checkpoint)"; continue; }
  start 18341 "$OUT/serve-$m.log" --model "$MODELDIR/$m" --served-model-name "$m" --memory-fraction 0.3 \
    --kv-cache-tokens 16384 --max-model-len 1024
  sp=$spid
  if ready 18341 "$sp" 90; then
    timeout "$(tmo 150 20)" $PY runtime-image/scripts/oracle/penalties_check.py http://127.0.0.1:18341 "$m" "$MODELDIR/$m" \
      > "$OUT/check-$m.txt" 2>>"$LOG"
    rc=$?
    cat "$OUT/check-$m.txt" >> "$LOG"
    while read -r _ name verdict rest; do
      row "$m" "${name%:}" "$verdict $rest"
    done < <(grep "^penalties " "$OUT/check-$m.txt")
    [ "$rc" -eq 0 ] || grep -q FAIL "$OUT/check-$m.txt" || row "$m" "penalties_check.py" "FAIL (exit $rc; see penalties.log)"
  else
    row "$m" "serve" "FAIL (not ready; see serve-$m.log)"
    tail -20 "$OUT/serve-$m.log" >> "$LOG"
  fi
  kill -TERM "$sp" 2>/dev/null; wait "$sp" 2>/dev/null
done

echo "================ penalties ================"
cat "$TABLE"
if [ "$FAILS" -eq 0 ]; then echo "penalties: PASS"; exit 0; fi
echo "penalties: FAIL"
exit 1
