#!/usr/bin/env bash
# serve with a real model on the GPU machine (device tool, nvidia-h200; nvidia-h200-x2 adds a TP 2 run over NVLink).
# Needs .device/ from runtime-image/scripts/device-prepare.sh (carried with carry: [".device"]) and the machine's python3
# (torch, transformers, tokenizers) to train the small checkpoints of scripts/oracle/make_models.py. Builds nothing there.
#   1. train the llama and qwen3 checkpoints (skipped when /tmp/tl-models has them)
#   2. per model and TP (1 virtual, 2 virtual, 2 real with two GPUs): start `serve`, wait for /health, then
#      - /v1/models; greedy completions on token-id prompts (ignore_eos) must equal `generate`'s text for the same ids
#      - a streamed completion (SSE: chunks, usage, [DONE]) and a chat completion through the model's template
#      - bad requests (400/404/413) and the server still answering afterwards
#      - loadgen at concurrency 1, 8, 32 (20 requests each), then SIGTERM: drained, exit code
# Results under $OUT: serve-model.txt (the table, printed last), serve-model.log, loadgen-*.csv.
set -uo pipefail
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
PY="env LD_LIBRARY_PATH=/usr/local/nvidia/lib64 python3"
NCCL=$($PY -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null || true)
[ -n "$NCCL" ] && export LD_LIBRARY_PATH="$NCCL:$LD_LIBRARY_PATH"
bash "$(dirname "$0")/device-unpack.sh" || exit 2   # .device/bundle.tar.xz -> .device/jre, .device/app
JAVA=".device/jre/bin/java -Xmx4g"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
MODELDIR=${MODELDIR:-/tmp/tl-models}
MODELS=${MODELS:-llama qwen3}
LOG="$OUT/serve-model.log"; : > "$LOG"
TABLE="$OUT/serve-model.txt"; : > "$TABLE"
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
say() { echo "$*" | tee -a "$LOG"; }
row() { printf '%-8s %-10s %-34s %s\n' "$1" "$2" "$3" "$4" | tee -a "$TABLE"; }
say "== date: $(date -u +%FT%TZ)  GPUs: $NGPU  models: $MODELS"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$LOG"

have=1; for m in $MODELS; do [ -f "$MODELDIR/$m/config.json" ] || have=0; done
if [ $have = 0 ]; then
  timeout 300 $PY runtime-image/scripts/oracle/make_models.py --out "$MODELDIR" --steps "${TRAIN_STEPS:-300}" --models "$MODELS" >> "$LOG" 2>&1
  say "== train: exit $?"
fi

PORT=18080
runs="tp1:1:--virtual-ranks tp2v:2:--virtual-ranks"
[ "${NGPU:-0}" -ge 2 ] && runs="$runs tp2real:2:"
for m in $MODELS; do
  for r in $runs; do
    IFS=: read -r name tp vr <<< "$r"
    PORT=$((PORT + 1))
    url="http://127.0.0.1:$PORT"
    TENSORLANE_WORLD_SIZE=$tp $JAVA -jar "$APP" serve --model "$MODELDIR/$m" --served-model-name "$m" --port $PORT \
      --memory-fraction 0.5 --kv-cache-tokens 16384 --max-model-len 1024 $vr > "/tmp/serve-$m-$name.log" 2>&1 &
    pid=$!
    ok=0
    for i in $(seq 1 120); do
      curl -sf "$url/health" > /dev/null && { ok=1; break; }
      kill -0 $pid 2>/dev/null || break
      sleep 1
    done
    if [ $ok = 0 ]; then
      row "$m" "$name" "ready" "FAIL (see log)"; tail -30 "/tmp/serve-$m-$name.log" | sed 's/^/   | /' >> "$LOG"
      kill $pid 2>/dev/null; wait $pid 2>/dev/null; continue
    fi
    row "$m" "$name" "ready" "PASS after ${i} s"
    curl -s "$url/v1/models" | grep -q "\"id\":\"$m\"" && row "$m" "$name" "/v1/models" PASS || row "$m" "$name" "/v1/models" FAIL
    # greedy completions on token ids vs generate on the same ids
    same=0; total=0
    for ids in "1,40,50,60,70" "1,300,301,302,303,304,305" "1,99,98,97"; do
      total=$((total + 1))
      body="{\"model\":\"$m\",\"prompt\":[$ids],\"max_tokens\":24,\"temperature\":0,\"ignore_eos\":true}"
      got=$(curl -s "$url/v1/completions" -H 'Content-Type: application/json' -d "$body" | $PY -c 'import sys,json; print(json.load(sys.stdin)["choices"][0]["text"])' 2>>"$LOG")
      echo "{\"ids\": [$ids]}" > /tmp/p.jsonl
      want=$($JAVA -jar "$APP" generate --model "$MODELDIR/$m" --tp 1 --virtual-ranks --prompts-file /tmp/p.jsonl --max-tokens 24 \
        --ignore-eos --json --kv-cache-tokens 4096 --max-model-len 1024 2>>"$LOG" | $PY -c 'import sys,json
for l in sys.stdin:
    d=json.loads(l)
    if "text" in d: print(d["text"])' 2>>"$LOG")
      [ "$got" = "$want" ] && same=$((same + 1)) || say "   mismatch for [$ids]: serve '$got' generate '$want'"
    done
    [ $same = $total ] && row "$m" "$name" "greedy = generate" "PASS $same/$total" || row "$m" "$name" "greedy = generate" "FAIL $same/$total"
    sse=$(curl -sN "$url/v1/completions" -H 'Content-Type: application/json' \
      -d "{\"model\":\"$m\",\"prompt\":\"def main(\",\"max_tokens\":16,\"stream\":true,\"stream_options\":{\"include_usage\":true}}")
    n=$(echo "$sse" | grep -c '^data: {')
    echo "$sse" | tail -1 | grep -q '^data: \[DONE\]' && echo "$sse" | grep -q '"completion_tokens":16' \
      && row "$m" "$name" "stream (SSE, usage, DONE)" "PASS $n events" || { row "$m" "$name" "stream (SSE, usage, DONE)" FAIL; echo "$sse" | tail -5 >> "$LOG"; }
    chat=$(curl -s "$url/v1/chat/completions" -H 'Content-Type: application/json' \
      -d "{\"model\":\"$m\",\"messages\":[{\"role\":\"user\",\"content\":\"import os\"}],\"max_tokens\":8}")
    echo "$chat" | grep -q '"role":"assistant"' && row "$m" "$name" "chat" PASS || { row "$m" "$name" "chat" "FAIL"; echo "$chat" >> "$LOG"; }
    codes=""
    for b in '{bad json' "{\"model\":\"nope\",\"prompt\":\"x\"}" "{\"model\":\"$m\",\"prompt\":\"x\",\"max_tokens\":100000}"; do
      codes="$codes $(curl -s -o /dev/null -w '%{http_code}' "$url/v1/completions" -H 'Content-Type: application/json' -d "$b")"
    done
    [ "$codes" = " 400 404 400" ] && row "$m" "$name" "bad requests" "PASS$codes" || row "$m" "$name" "bad requests" "FAIL$codes"
    timeout 240 $JAVA -jar "$APP" loadgen --url "$url" --model "$m" --concurrency 1,8,32 --num-requests 20 --input-len 64 \
      --output-len 32 --ignore-eos --out-dir "/tmp/loadgen-$m-$name" >> "$LOG" 2>&1
    lg=$?
    cp "/tmp/loadgen-$m-$name/loadgen.csv" "$OUT/loadgen-$m-$name.csv" 2>/dev/null
    row "$m" "$name" "loadgen c=1,8,32 x 20" "exit $lg"
    # the allreduce latency histogram (one step in 64 timed on rank 0's stream; TP 1 has no allreduce)
    curl -s "$url/metrics" > "$OUT/metrics-$m-$name.txt"
    ar=$($PY - "$OUT/metrics-$m-$name.txt" "$tp" <<'PYEOF' 2>>"$LOG"
import re, sys
calls, count, total = {}, {}, {}
for line in open(sys.argv[1]):
    m = re.match(r'(tensorlane_allreduce_(?:calls_total|latency_seconds_count|latency_seconds_sum))\{.*algorithm="(\w+)".*\} (\S+)', line)
    if m:
        {"tensorlane_allreduce_calls_total": calls, "tensorlane_allreduce_latency_seconds_count": count,
         "tensorlane_allreduce_latency_seconds_sum": total}[m.group(1)][m.group(2)] = float(m.group(3))
tp = int(sys.argv[2])
parts = [f"{a} {int(count.get(a, 0))}/{int(c)} timed, mean {total[a] / count[a] * 1e6:.1f} us" for a, c in calls.items() if c > 0 and count.get(a)]
ok = (tp == 1 and sum(calls.values()) == 0 and sum(count.values()) == 0) or (tp > 1 and sum(count.values()) > 0 and all(count.get(a, 0) <= c for a, c in calls.items()))
print(("PASS " if ok else "FAIL ") + ("; ".join(parts) or f"calls {sum(calls.values()):.0f}, timed {sum(count.values()):.0f}"))
PYEOF
)
    row "$m" "$name" "allreduce latency metric" "${ar:-FAIL (no output)}"
    kill -TERM $pid; wait $pid; rc=$?
    grep -q "serve: drained" "/tmp/serve-$m-$name.log" && row "$m" "$name" "SIGTERM drain" "PASS (exit $rc)" || row "$m" "$name" "SIGTERM drain" "FAIL (exit $rc)"
    tail -20 "/tmp/serve-$m-$name.log" | sed 's/^/   | /' >> "$LOG"
  done
done
echo "================ serve with a model ================"
cat "$TABLE"
