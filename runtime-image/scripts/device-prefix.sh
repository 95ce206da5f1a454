#!/usr/bin/env bash
# Prefix caching on the GPU machine (device tool, kind nvidia-h200; issue #33). Needs .device/ from
# scripts/device-prepare.sh (carried with carry: [".device"]) and the machine's python3 (torch, transformers,
# tokenizers). Builds nothing there; about 5 minutes on a fresh machine, less when /tmp still has the checkpoints.
#   1. in the background: the trained llama and qwen3 oracle checkpoints (oracle/make_models.py, 150 steps) and the
#      random-weight Llama-3.1-8B-geometry checkpoint (oracle/bench_make_8b.py), each skipped when already there
#   2. correctness on llama and qwen3: two servers each (prefix caching on, and --no-prefix-caching), the same greedy
#      requests with logprobs to both (oracle/prefix_check.py: vLLM's check, each token the other's or in its top-5,
#      stop at the first near tie), cached_tokens > 0 with the cache on and 0 with it off
#   3. the 8B geometry: a server with the cache on and one with it off, both on the GPU at once (each with its own
#      --kv-cache-tokens; only one is loaded by loadgen at a time), loadgen --workload multi-turn: a shared system prompt
#      of about 2,000 tokens (words calibrated with one request), 3 turns per conversation, 32 output tokens, at 8
#      concurrent conversations and 32 (32 conversations each), on and off alternately, after a warm-up of each server
#      with another seed (another system prompt)
#   4. the table: TTFT median on / off and the ratio (issue #33's target: off / on >= 3), output throughput, hit rate
# The bench tokenizer decodes a random model's ids as "<tN>" text that re-tokenizes into other ids, so a turn's cache
# hit covers the system prompt and the history up to the previous answer, not the answer itself.
# Results under $OUT: prefix.txt (the table, printed last), prefix.log, loadgen-{on,off}-c{8,32}/.
set -uo pipefail
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
PY="env LD_LIBRARY_PATH=/usr/local/nvidia/lib64 python3"
LOG="$OUT/prefix.log"; : > "$LOG"
TABLE="$OUT/prefix.txt"; : > "$TABLE"
BUDGET=${BUDGET:-570}
# the checkpoints get what is left above 300 s (the servers and loadgen need that much): below ~400 s they would get
# nothing and every row would read "no checkpoint" (2026-12-03, BUDGET=250)
[ "$BUDGET" -ge 400 ] || { echo "device-prefix: BUDGET=$BUDGET s is too small (>= 400 s; 570 by default)" >&2; exit 2; }
source runtime-image/scripts/device-lib.sh
bash runtime-image/scripts/device-unpack.sh || exit 2
JAVA=".device/jre/bin/java -Xmx4g"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
MODELDIR=${MODELDIR:-/tmp/tl-models}
CKPT=${CKPT:-/tmp/tl-8b}
row() { printf '%-10s %-34s %s\n' "$1" "$2" "$3" | tee -a "$TABLE"; }
say "== date: $(date -u +%FT%TZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"

# 1. checkpoints, in parallel
pids=""
if [ ! -f "$MODELDIR/llama/config.json" ] || [ ! -f "$MODELDIR/qwen3/config.json" ]; then
  timeout "$(tmo 200 300)" $PY runtime-image/scripts/oracle/make_models.py --out "$MODELDIR" --steps "${TRAIN_STEPS:-150}" \
    --models "llama qwen3" > /tmp/prefix-train.log 2>&1 &
  train=$!
fi
if [ ! -f "$CKPT/.complete" ]; then
  timeout "$(tmo 200 300)" $PY runtime-image/scripts/oracle/bench_make_8b.py --out "$CKPT" > /tmp/prefix-8b.log 2>&1 &
  make8b=$!
fi
[ -n "${train:-}" ] && { wait "$train"; say "== train llama, qwen3: exit $?"; tail -3 /tmp/prefix-train.log >> "$LOG"; }

start() { # start PORT LOGFILE ARGS...: serve in the background, its pid in $spid
  local port=$1 logf=$2; shift 2
  $JAVA -jar "$APP" serve --port "$port" "$@" > "$logf" 2>&1 &
  spid=$!
}
ready() { # ready PORT PID SECONDS
  for i in $(seq 1 "$3"); do curl -sf "http://127.0.0.1:$1/health" > /dev/null && return 0; kill -0 "$2" 2>/dev/null || return 1; sleep 1; done
  return 1
}

# 2. correctness: cache on vs off on the oracle checkpoints
for m in llama qwen3; do
  [ -f "$MODELDIR/$m/config.json" ] || { row "$m" "greedy on = off" "FAIL (no checkpoint)"; continue; }
  vocab=$($PY -c "import json; print(json.load(open('$MODELDIR/$m/config.json'))['vocab_size'])")
  common=(--model "$MODELDIR/$m" --served-model-name "$m" --memory-fraction 0.3 --kv-cache-tokens 16384 --max-model-len 1024)
  start 18301 "/tmp/prefix-$m-on.log" "${common[@]}"; on=$spid
  start 18302 "/tmp/prefix-$m-off.log" "${common[@]}" --no-prefix-caching; off=$spid
  if ready 18301 $on 90 && ready 18302 $off 60; then
    res=$(timeout "$(tmo 90 200)" $PY runtime-image/scripts/oracle/prefix_check.py http://127.0.0.1:18301 http://127.0.0.1:18302 "$m" "$vocab" 2>>"$LOG")
    rc=$?
    echo "$res" >> "$LOG"
    row "$m" "greedy on = off (vLLM check)" "$( [ $rc = 0 ] && echo PASS || echo FAIL ): $(echo "$res" | head -1 | cut -d' ' -f2-)"
    curl -s http://127.0.0.1:18301/metrics | grep -E '^tensorlane:prefix_cache_(queries|hits)_total' >> "$LOG"
  else
    row "$m" "greedy on = off" "FAIL (server not ready)"; tail -20 "/tmp/prefix-$m-on.log" "/tmp/prefix-$m-off.log" >> "$LOG"
  fi
  kill -TERM $on $off 2>/dev/null; wait $on $off 2>/dev/null
done

# 3. the 8B geometry, cache on and off
[ -n "${make8b:-}" ] && { wait "$make8b"; say "== 8B checkpoint: exit $?"; tail -3 /tmp/prefix-8b.log >> "$LOG"; }
[ -f "$CKPT/.complete" ] || { row 8b "checkpoint" FAIL; cat "$TABLE"; exit 1; }
common=(--model "$CKPT" --served-model-name llama-8b --memory-fraction 0.9 --kv-cache-tokens 160000 --max-model-len 4096
  --max-seqs 64 --max-batch-tokens 2048)
start 18311 /tmp/prefix-8b-on.log "${common[@]}"; on=$spid
sleep 5   # the second load after the first has taken its memory
start 18312 /tmp/prefix-8b-off.log "${common[@]}" --no-prefix-caching; off=$spid
if ! ready 18311 $on "$(tmo 180 100)" || ! ready 18312 $off "$(tmo 120 100)"; then
  row 8b "ready" FAIL; tail -20 /tmp/prefix-8b-on.log /tmp/prefix-8b-off.log >> "$LOG"; kill -TERM $on $off 2>/dev/null; cat "$TABLE"; exit 1
fi
say "== 8B servers ready ($(left) s left)"
# words per 2,000 tokens: one request of 200 of loadgen's words
words=$($PY - <<'PYEOF'
import json, urllib.request
w = ("the of and to in is was for on are with as his they at be this from have or by one had not but what all were "
     "when we there can an your which their said if do will each about how up out them then she many some so these")
text = " ".join((w.split() * 10)[:200])
req = urllib.request.Request("http://127.0.0.1:18311/v1/completions",
    json.dumps({"model": "llama-8b", "prompt": text, "max_tokens": 1}).encode(), {"Content-Type": "application/json"})
n = json.load(urllib.request.urlopen(req, timeout=60))["usage"]["prompt_tokens"]
print(max(50, round(2000 * 200 / n)))
PYEOF
)
say "== system prompt: ${words:=700} words for about 2,000 tokens"
LG="$JAVA -jar $APP loadgen --model llama-8b --workload multi-turn --system-prompt-len $words --turns 3 --input-len 40 \
  --output-len 32 --ignore-eos --warmup 0 --timeout 120s"
# warm-up: each server's JIT, CUDA graphs and mixed-step paths, with another seed (so another system prompt: nothing the
# measured runs could hit in the cache); without it the first level measured a cold JVM (2026-12-02: c=8 2.74x)
for port in 18311 18312; do
  timeout "$(tmo 60 20)" $LG --url "http://127.0.0.1:$port" --seed 7 --concurrency 8 --num-requests 8 \
    --out-dir "/tmp/prefix-warmup-$port" > /dev/null 2>&1
  say "== warm-up :$port: exit $? ($(left) s left)"
done
for c in 8 32; do
  n=32
  for mode in on off; do
    port=$([ $mode = on ] && echo 18311 || echo 18312)
    timeout "$(tmo 120 20)" $LG --url "http://127.0.0.1:$port" --concurrency $c --num-requests $n \
      --out-dir "$OUT/loadgen-$mode-c$c" >> "$LOG" 2>&1
    say "== loadgen $mode c=$c: exit $? ($(left) s left)"
  done
done
for port in 18311 18312; do
  curl -s http://127.0.0.1:$port/metrics | grep -E '^tensorlane:(prefix_cache|prompt_tokens|num_preemptions|request_queue_time_seconds_(sum|count)|time_to_first_token_seconds_(sum|count))' \
    | sed "s/^/:$port /" >> "$LOG"
done
kill -TERM $on $off; wait $on $off
$PY - "$OUT" <<'PYEOF' | tee -a "$TABLE"
import json, sys, os
out = sys.argv[1]
def level(mode, c):
    p = os.path.join(out, f"loadgen-{mode}-c{c}", "loadgen.json")
    return json.load(open(p))["levels"][0] if os.path.exists(p) else None
print("%-6s %14s %14s %7s %16s %16s %9s %9s" % ("conv", "TTFT p50 on", "TTFT p50 off", "off/on", "out tok/s on", "out tok/s off", "hit on", "hit off"))
for c in (8, 32):
    a, b = level("on", c), level("off", c)
    if not a or not b:
        print(f"c={c}: missing results"); continue
    ta, tb = a["ttft_ms"]["median"], b["ttft_ms"]["median"]
    ratio = tb / ta if ta else float("nan")
    hit = lambda l: "n/a" if l["prefix_cache_hit_rate"] is None else f"{100 * l['prefix_cache_hit_rate']:.1f}%"
    print("%-6s %12.1f ms %12.1f ms %6.2fx %16.1f %16.1f %9s %9s %s" % (f"c={c}", ta, tb, ratio, a["output_token_throughput"],
          b["output_token_throughput"], hit(a), hit(b), "PASS" if ratio >= 3 and a["output_token_throughput"] >= b["output_token_throughput"] else "(target: >= 3x, throughput not lower)"))
PYEOF
echo "================ prefix caching ================"
cat "$TABLE"
