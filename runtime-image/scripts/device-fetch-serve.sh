#!/usr/bin/env bash
# The pod's model path without Kubernetes, on the GPU machine (device tool, kind nvidia-h200; issue #16's GPU check):
# a small checkpoint trained by transformers (device-models.sh STEPS=train, MODELS=llama) is served by a loopback Hub
# (oracle/local_hub.py, token required), `fetch-model` downloads it as the init container does, `serve` starts on the
# fetched directory and answers a chat request and a completion. Needs .device/ from device-prepare.sh. Results under
# $OUT: fetch-serve.log. Exit 0 only when every step passed.
set -uo pipefail
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
LOG="$OUT/fetch-serve.log"
MODELDIR=${MODELDIR:-/tmp/tl-models}
J=".device/jre/bin/java -Xmx2g -jar .device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
say() { echo "$*" | tee -a "$LOG"; }
say "== date: $(date -u +%FT%TZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
if [ ! -f "$MODELDIR/llama/config.json" ]; then
  STEPS=train MODELS=llama BUDGET=200 bash runtime-image/scripts/device-models.sh >> "$LOG" 2>&1 || { say "== train failed"; exit 2; }
fi
python3 runtime-image/scripts/oracle/local_hub.py --dir "$MODELDIR/llama" --id local/llama --port 18091 --token hub-secret \
  2>> "$OUT/local-hub.log" &
hub=$!
sleep 1
rm -rf /tmp/tl-fetched
t0=$(date +%s.%N)
HF_TOKEN=hub-secret timeout 120 $J fetch-model --source hf://local/llama --dest /tmp/tl-fetched --endpoint http://127.0.0.1:18091 \
  >> "$LOG" 2>&1
rc=$?
say "== fetch-model: exit $rc in $(python3 -c "import time; print('%.1f' % (time.time() - $t0))") s; $(ls /tmp/tl-fetched | tr '\n' ' ')"
HF_TOKEN= timeout 60 $J fetch-model --source hf://local/llama --dest /tmp/tl-nofetch --endpoint http://127.0.0.1:18091 >> "$LOG" 2>&1
say "== fetch-model without the token: exit $? (expected non-zero)"
kill $hub
[ $rc -eq 0 ] || exit 1
$J serve --model /tmp/tl-fetched --served-model-name llama --port 18092 --memory-fraction 0.5 --max-model-len 512 > "$OUT/serve.log" 2>&1 &
pid=$!
for i in $(seq 1 90); do curl -sf http://127.0.0.1:18092/health > /dev/null && break; kill -0 $pid 2>/dev/null || break; sleep 1; done
ok=1
chat=$(curl -s -w ' HTTP %{http_code}' http://127.0.0.1:18092/v1/chat/completions -H 'Content-Type: application/json' \
  -d '{"model":"llama","messages":[{"role":"user","content":"def parse("}],"max_tokens":24,"temperature":0.7,"seed":3}')
say "== chat: $chat"
echo "$chat" | grep -q '"content"' && echo "$chat" | grep -q 'HTTP 200' || ok=0
comp=$(curl -s -w ' HTTP %{http_code}' http://127.0.0.1:18092/v1/completions -H 'Content-Type: application/json' \
  -d '{"model":"llama","prompt":"import os\n","max_tokens":24}')
say "== completion: $comp"
echo "$comp" | grep -q '"text"' && echo "$comp" | grep -q 'HTTP 200' || ok=0
kill -TERM $pid; wait $pid
say "== serve exit $? (143 = SIGTERM, drained)"
grep -E "^serve|^engine: (weights|memory)" "$OUT/serve.log" | head -5 | tee -a "$LOG"
[ $ok -eq 1 ] && say "== fetch + serve: PASS" || { say "== fetch + serve: FAIL"; exit 1; }
