#!/usr/bin/env bash
# Prefix caching's correctness on the GPU machine (device tool, kind nvidia-h200, carry [".device"]; issue #33 item 4).
# Needs .device/ from scripts/device-prepare.sh and the machine's python3 (torch, transformers, tokenizers). Builds
# nothing there; about 3-4 minutes on a fresh machine (BUDGET, 240 s by default).
#   1. train    oracle/make_models.py --steps TRAIN_STEPS (60: the check compares the engine with itself, so the models
#               need their architectures and shapes more than quality; a few dozen steps make attention less uniform,
#               so a cached block read from the wrong place moves the later layers' KV more than on random weights):
#               llama mistral qwen2 qwen3 qwen3moe mixtral in MODELDIR (/tmp/tl-pkv-models, its own: other scripts'
#               SKIP_TRAIN must not pick these up); skipped when present
#   2. kv       `prefixcheck` per model and TP in TPS (1 2 4 8, virtual ranks on GPU 0): a prompt's prefix computed once
#               by a writer (two chunks, beside another sequence), then the same prompt fresh in one step and on the
#               writer's blocks (only the rest computed), plus a one-token rest (eager, then the decode graph replayed);
#               every rank's K and V of every layer read back and compared block by block (relative L2 <= 2^-6, 4 x
#               bf16's rounding), the logits of every position computed on the cached blocks too; a negative control
#               (block k/2 taken from the prefix shifted by one token) must be reported as a mismatch. MoE models
#               (TENSORLANE_MOE_ROUTING_DUMP on): the layers after the first MoE layer, and the logits, are gated where
#               the routing dump shows fresh and cached routed every token alike, else reported (a router near-tie
#               that rounding tips sends a token to another expert). A TP degree the geometry refuses (mixtral's
#               expert intermediate 702 at TP 4 and 8) is a SKIP with the reason. Table: oracle/prefix_kv_report.py table
#   3. pressure serve llama with the cache on, --kv-cache-tokens PRESSURE_TOKENS (4800 = 300 blocks) and --kv-audit (the
#               allocator's self-audit after every step), and a cache-off server; at once against the first, for
#               LOAD_SECONDS: loadgen multi-turn with two system prompts (seeds 1, 2; every conversation its own
#               history), shared-prompt (seed 3), random token ids (distinct prompts), and oracle/prefix_check.py
#               (seeds 33,34,35; each token the cache-off server's or in its top-5) while the load runs; then, idle: every request succeeded, the free-block gauge is back at the total with
#               none in use, evictions > 0 (it was under pressure), the audit ran with no failure and no request ended in
#               error (oracle/prefix_kv_report.py pressure)
# Environment: STEPS ("train kv pressure"), MODELS, TPS, TRAIN_STEPS, MODELDIR, BUDGET, PRESSURE_TOKENS, LOAD_SECONDS
# (25: how long each loadgen sends). A prefixcheck run is skipped (and the table says MISSING: FAIL) under 80 s left,
# the pressure part under 55 s.
# Results under $OUT: prefix-kv.txt (the tables, printed last), prefix-kv.log, prefixcheck/<model>-tp<N>.{json,log},
# loadgen-*/, metrics-idle.txt, serve-{on,off}.log. Last line: "prefix-kv: PASS" (exit 0) or "prefix-kv: FAIL" (exit 1).
set -uo pipefail
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
PY_LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}   # python's (see PY below)
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=true HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
unset TENSORLANE_KV_CACHE_DTYPE TENSORLANE_PREFIX_CACHING TENSORLANE_KV_AUDIT
BUDGET=${BUDGET:-240}
LOG="$OUT/prefix-kv.log"; : > "$LOG"
TXT="$OUT/prefix-kv.txt"; : > "$TXT"
. runtime-image/scripts/device-lib.sh
bash runtime-image/scripts/device-unpack.sh || exit 2   # .device/bundle.tar.xz -> .device/jre, .device/app
JAVA=".device/jre/bin/java -Xmx3g"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
PY="env LD_LIBRARY_PATH=$PY_LD_LIBRARY_PATH ${PY:-python3}"
ORACLE=runtime-image/scripts/oracle
STEPS=${STEPS:-train kv pressure}
MODELS=${MODELS:-llama mistral qwen2 qwen3 qwen3moe mixtral}
TPS=${TPS:-1 2 4 8}
MODELDIR=${MODELDIR:-/tmp/tl-pkv-models}
PRESSURE_TOKENS=${PRESSURE_TOKENS:-4800}
LOAD_SECONDS=${LOAD_SECONDS:-25}
W=$(mktemp -d)
fails=0
say "== date: $(date -u +%FT%TZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)  steps: $STEPS"

# ---- 1. train
if has_step train; then
  missing=""
  for m in $MODELS; do [ -f "$MODELDIR/$m/config.json" ] || missing="$missing $m"; done
  if [ -n "$missing" ]; then
    step "train$missing (${TRAIN_STEPS:-60} steps)" "$W/train.log" timeout "$(tmo 120 100)" $PY $ORACLE/make_models.py \
      --out "$MODELDIR" --steps "${TRAIN_STEPS:-60}" --models "$missing" || { fails=$((fails + 1)); say "== train failed"; }
  else
    say "== train: $MODELDIR has every model"
  fi
fi

# ---- 2. cached KV vs fresh, every model and TP degree
if has_step kv; then
  mkdir -p "$OUT/prefixcheck"
  for m in $MODELS; do
    for tp in $TPS; do
      j="$OUT/prefixcheck/$m-tp$tp.json"; rm -f "$j"
      [ -f "$MODELDIR/$m/config.json" ] || { say "== prefixcheck $m tp$tp: no checkpoint"; continue; }
      if [ "$(left)" -lt 80 ]; then say "== prefixcheck $m tp$tp: skipped, $(left) s left of BUDGET=$BUDGET"; continue; fi
      # the routing dump: a MoE model's layers after MoE routing are gated where fresh and cached routed alike
      step "prefixcheck $m tp$tp" "$OUT/prefixcheck/$m-tp$tp.log" timeout -s QUIT -k 5 "$(tmo 60 60)" \
        env TENSORLANE_MOE_ROUTING_DUMP="$W/routing-$m-tp$tp.bin" $JAVA -jar "$APP" prefixcheck --model "$MODELDIR/$m" --tp "$tp" --virtual-ranks --kv-cache-tokens 2048 \
        --max-model-len 1024 --memory-fraction 0.3 --json "$j"
      grep -E '^prefixcheck: ' "$OUT/prefixcheck/$m-tp$tp.log" | tee -a "$LOG"
    done
  done
  { echo "---- cached prefix KV vs fresh (prefixcheck)"; $PY $ORACLE/prefix_kv_report.py table "$OUT/prefixcheck" "$MODELS" "$TPS"; } > "$W/table.txt" 2>&1 \
    || fails=$((fails + 1))
  cat "$W/table.txt" >> "$TXT"
fi

# ---- 3. memory pressure: a few hundred blocks, many distinct and shared prefixes, the audit after every step
start() { # start PORT LOGFILE ARGS...: serve in the background, its pid in $spid
  local port=$1 logf=$2; shift 2
  $JAVA -jar "$APP" serve --port "$port" "$@" > "$logf" 2>&1 &
  spid=$!
}
ready() { # ready PORT PID SECONDS
  for _ in $(seq 1 "$3"); do curl -sf "http://127.0.0.1:$1/health" > /dev/null && return 0; kill -0 "$2" 2>/dev/null || return 1; sleep 1; done
  return 1
}
if has_step pressure; then
  m=llama
  if [ ! -f "$MODELDIR/$m/config.json" ]; then
    echo "pressure  FAIL  no $m checkpoint" >> "$TXT"; fails=$((fails + 1))
  elif [ "$(left)" -lt 55 ]; then
    echo "pressure  FAIL  skipped: $(left) s left of BUDGET=$BUDGET" >> "$TXT"; fails=$((fails + 1))
  else
    vocab=$($PY -c "import json; print(json.load(open('$MODELDIR/$m/config.json'))['vocab_size'])")
    common=(--model "$MODELDIR/$m" --served-model-name "$m" --memory-fraction 0.2 --max-model-len 1024 --max-seqs 64)
    start 18401 "$OUT/serve-on.log" "${common[@]}" --kv-cache-tokens "$PRESSURE_TOKENS" --kv-audit; on=$spid
    start 18402 "$OUT/serve-off.log" "${common[@]}" --kv-cache-tokens 65536 --no-prefix-caching; off=$spid
    if ready 18401 $on 60 && ready 18402 $off 30; then
      say "== servers ready ($(left) s left): $(grep -m1 '^serve: model' "$OUT/serve-on.log" | cut -c1-240)"
      # every workload sends for LOAD_SECONDS (new requests, or conversations, stop then; those in flight finish)
      LG="$JAVA -Xmx1g -jar $APP loadgen --url http://127.0.0.1:18401 --model $m --output-len 24 --ignore-eos --warmup 0 \
        --timeout 60s --duration ${LOAD_SECONDS}s"
      lt=$(tmo $((LOAD_SECONDS + 60)) 15)
      pids=""
      for s in 1 2; do   # conversations (each its own history) after two system prompts
        timeout "$lt" $LG --workload multi-turn --system-prompt-len 120 --turns 3 --input-len 20 --concurrency 12 \
          --num-requests 1000 --seed $s --out-dir "$OUT/loadgen-multi-turn-$s" > "$W/lg-mt-$s.log" 2>&1 &
        pids="$pids $!"
      done
      timeout "$lt" $LG --workload shared-prompt --system-prompt-len 200 --input-len 30 --concurrency 16 \
        --seed 3 --out-dir "$OUT/loadgen-shared-prompt" > "$W/lg-sp.log" 2>&1 &
      pids="$pids $!"
      timeout "$lt" $LG --workload random --token-ids --vocab-size "$vocab" --input-len 200 --input-len-range 0.5 \
        --concurrency 8 --seed 4 --out-dir "$OUT/loadgen-random" > "$W/lg-rnd.log" 2>&1 &
      pids="$pids $!"
      sleep 3   # the load is on before the sample
      res=$(timeout "$(tmo 90 20)" $PY $ORACLE/prefix_check.py http://127.0.0.1:18401 http://127.0.0.1:18402 "$m" "$vocab" 33,34,35 2>>"$LOG")
      rc=$?
      echo "$res" >> "$LOG"
      busy=$(curl -s http://127.0.0.1:18401/metrics | grep -E '^tensorlane:num_requests_(running|waiting)' | awk '{s += $2} END {print s + 0}')
      printf '%-9s %s  %s (requests in the server when it ended: %s)\n' sample "$( [ $rc = 0 ] && echo PASS || echo FAIL )" \
        "greedy under pressure = cache off (prefix_check.py): $(echo "$res" | head -1 | cut -d' ' -f2-)" "$busy" >> "$W/pressure.txt"
      [ $rc = 0 ] || fails=$((fails + 1))
      for p in $pids; do wait "$p"; done
      for f in "$W"/lg-*.log; do grep -E ' ok, [0-9]+ failed|error' "$f" | head -3 | sed "s|^|$(basename "$f" .log): |" | tee -a "$LOG"; done
      # idle: the scheduler publishes after its last step; give it a moment, then read the gauges once
      for _ in $(seq 1 20); do
        curl -s http://127.0.0.1:18401/metrics > "$OUT/metrics-idle.txt"
        grep -qE '^tensorlane:num_requests_running\{.*\} 0(\.0)?$' "$OUT/metrics-idle.txt" \
          && grep -qE '^tensorlane:num_requests_waiting\{.*\} 0(\.0)?$' "$OUT/metrics-idle.txt" && break
        sleep 0.5
      done
      health=$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:18401/health)
      printf '%-9s %s  /health %s after the run\n' health "$( [ "$health" = 200 ] && echo PASS || echo FAIL )" "$health" >> "$W/pressure.txt"
      [ "$health" = 200 ] || fails=$((fails + 1))
      $PY $ORACLE/prefix_kv_report.py pressure "$OUT/metrics-idle.txt" 4 "$OUT"/loadgen-multi-turn-1 "$OUT"/loadgen-multi-turn-2 \
        "$OUT/loadgen-shared-prompt" "$OUT/loadgen-random" --server-log "$OUT/serve-on.log" >> "$W/pressure.txt" 2>&1 \
        || fails=$((fails + 1))
      grep -E '^tensorlane:(kv_cache_|prefix_cache|num_preemptions|request_success)' "$OUT/metrics-idle.txt" >> "$LOG"
    else
      echo "pressure  FAIL  a server was not ready" >> "$W/pressure.txt"; fails=$((fails + 1))
      tail -20 "$OUT/serve-on.log" "$OUT/serve-off.log" >> "$LOG"
    fi
    kill -TERM $on $off 2>/dev/null; wait $on $off 2>/dev/null
    { echo "---- memory pressure: $PRESSURE_TOKENS KV tokens ($((PRESSURE_TOKENS / 16)) blocks), --kv-audit"; cat "$W/pressure.txt"; } >> "$TXT"
  fi
fi

say "== total: $(( $(date +%s) - T_ALL )) s"
echo "================ prefix caching: cached KV and memory pressure ================"
cat "$TXT"
if [ $fails -eq 0 ]; then echo "prefix-kv: PASS"; exit 0; fi
echo "prefix-kv: FAIL"
exit 1
