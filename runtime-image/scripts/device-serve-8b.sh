#!/usr/bin/env bash
# serve under load on the 8B geometry (device tool, kind nvidia-h200): issue #15's throughput check. Needs .device/ from
# scripts/device-prepare.sh (carried with carry: [".device"]) and the machine's python3 with transformers (the random
# checkpoint of scripts/oracle/bench_make_8b.py). Starts `serve` on one GPU, waits for /health, runs `loadgen` closed
# loop (token-id prompts of 512, 64 output tokens, EOS ignored) at concurrency 1 (8 requests) and 8, 32, 128 (128 each),
# then at concurrency 32 with short prompts (32 tokens, 128 output tokens: the decode-bound case that issue #15's 70%
# target is about), then stops the server with SIGTERM. Results under $OUT: loadgen-c1/, loadgen-c8-128/,
# loadgen-c32-short/ (CSV, JSON, SVG), serve-8b.log. The bench checkpoint's tokenizer trains 512 ids and names every
# other id "<tN>" (token-id prompts over the tokenizer's vocabulary and ignore_eos keep the lengths exact).
set -uo pipefail
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
bash runtime-image/scripts/device-unpack.sh || exit 2
JAVA=".device/jre/bin/java -Xmx4g"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
CKPT=${CKPT:-/tmp/tl-8b}
LOG="$OUT/serve-8b.log"
echo "== date: $(date -u +%FT%TZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee "$LOG"
if [ ! -f "$CKPT/.complete" ]; then
  env LD_LIBRARY_PATH=/usr/local/nvidia/lib64 HF_HUB_OFFLINE=1 timeout 120 python3 runtime-image/scripts/oracle/bench_make_8b.py --out "$CKPT" >> "$LOG" 2>&1 \
    || { echo "no checkpoint" | tee -a "$LOG"; exit 2; }
fi
vocab=$(python3 -c "import json; print(len(json.load(open('$CKPT/tokenizer.json'))['model']['vocab']))" 2>/dev/null || echo 300)
PORT=18090
$JAVA -jar "$APP" serve --model "$CKPT" --served-model-name llama-8b --port $PORT --max-seqs 128 --kv-cache-tokens 80000 --memory-fraction 0.9 \
  --max-model-len 1024 --max-batch-tokens 2048 > /tmp/serve-8b.log 2>&1 &
pid=$!
for i in $(seq 1 150); do curl -sf "http://127.0.0.1:$PORT/health" > /dev/null && break; kill -0 $pid 2>/dev/null || break; sleep 1; done
if ! curl -sf "http://127.0.0.1:$PORT/health" > /dev/null; then
  echo "== serve did not become ready (${i} s)" | tee -a "$LOG"; kill -TERM $pid 2>/dev/null; tail -20 /tmp/serve-8b.log | tee -a "$LOG"; exit 1
fi
echo "== ready after ${i} s" | tee -a "$LOG"
LG="$JAVA -jar $APP loadgen --url http://127.0.0.1:$PORT --model llama-8b --token-ids --vocab-size $vocab --input-len 512 --output-len 64 --ignore-eos"
timeout 120 $LG --concurrency 1 --num-requests 8 --out-dir "$OUT/loadgen-c1" >> "$LOG" 2>&1; echo "== loadgen c=1: exit $?" | tee -a "$LOG"
timeout 200 $LG --concurrency 8,32,128 --num-requests 128 --out-dir "$OUT/loadgen-c8-128" >> "$LOG" 2>&1; echo "== loadgen c=8,32,128: exit $?" | tee -a "$LOG"
LGS="$JAVA -jar $APP loadgen --url http://127.0.0.1:$PORT --model llama-8b --token-ids --vocab-size $vocab --input-len 32 --output-len 128 --ignore-eos"
timeout 100 $LGS --concurrency 32 --num-requests 96 --out-dir "$OUT/loadgen-c32-short" >> "$LOG" 2>&1; echo "== loadgen c=32 short prompts: exit $?" | tee -a "$LOG"
kill -TERM $pid; wait $pid; echo "== serve exit $?" | tee -a "$LOG"
grep -E "^serve|engine: memory|warm" /tmp/serve-8b.log | head -10 >> "$LOG"
tail -5 /tmp/serve-8b.log >> "$LOG"
cat "$OUT"/loadgen-c1/loadgen.csv "$OUT"/loadgen-c8-128/loadgen.csv "$OUT"/loadgen-c32-short/loadgen.csv 2>/dev/null
