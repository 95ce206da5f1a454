#!/usr/bin/env bash
# What agent and app clients send, with the OFFICIAL `openai` Python client, on the GPU machine (device tool, kind
# nvidia-h200; issue #30). Builds nothing there. Needs .device/ from scripts/device-prepare.sh and the portable Python
# 3.11 with openai 2.54 of ../shared/tools/openai-client-bundle.sh. The two do not fit one call's 64 MiB carry
# (~52 + 15 MiB), so the client goes first, into /tmp on the warm machine:
#   here:   bash ../shared/tools/openai-client-bundle.sh .oa/openai-client.tar.xz      (.oa/ is ignored by git)
#   call 1: STEPS="client train" OUT=$OUT bash runtime-image/scripts/device-agent.sh    carry [".oa"]
#   call 2: OUT=$OUT bash runtime-image/scripts/device-agent.sh                          carry [".device"]
# (call 2 soon after call 1: /tmp/oa and /tmp/tl-models last while the machine stays warm; on a fresh machine call 2
# trains the checkpoints itself and fails the client step with this recipe.)
# Steps ($STEPS, default "client train agent"):
#   client  unpack .oa/openai-client.tar.xz into $OA (/tmp/oa) when carried; check `import openai` there
#   train   oracle/make_models.py: the trained $MODELS checkpoints (default "qwen3 llama mistral"), skipped when there
#   agent   per model: a copy of the checkpoint with its family's tool-capable chat template as chat_template.jinja
#           (src/test/resources/chat/templates: qwen3 -> qwen3.jinja, qwen2 -> qwen2.5-instruct, llama -> Llama 3.1,
#           mistral -> Mistral v0.3), `serve` on it (tool-call parser chosen by the server: hermes, llama3_json,
#           mistral), then oracle/agent_client.py with the official client (tools auto/required/named, streamed and
#           not, the stream helpers' accumulation, a tool round trip, $REQUESTS sampled json_schema answers at
#           temperature 1 validated, json_object, parse() with pydantic, penalties and logit_bias in the direction
#           and by the amount the sampler's arithmetic says, echo + logprobs / max_tokens 0), and oracle/echo_check.py:
#           the echoed prompt logprobs against fp32 transformers on the same ids
# Results under $OUT: agent.txt (the table, printed last), agent.log, agent-<model>.json (every check, the echo's
# numbers), serve-<model>.log. Last line `device-agent: PASS` or `device-agent: FAIL`; exit 1 on FAIL, 2 when a step
# could not run at all.
set -uo pipefail
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
PY="env LD_LIBRARY_PATH=/usr/local/nvidia/lib64 python3"
LOG="$OUT/agent.log"; : > "$LOG"
TABLE="$OUT/agent.txt"; : > "$TABLE"
STEPS=${STEPS:-client train agent}
BUDGET=${BUDGET:-570}
source runtime-image/scripts/device-lib.sh
OA=${OA:-/tmp/oa}
OAPY="env LD_LIBRARY_PATH=$OA/py311/lib PYTHONHOME=$OA/py311 PYTHONPATH=$OA/oai $OA/py311/bin/python3.11"
MODELDIR=${MODELDIR:-/tmp/tl-models}
MODELS=${MODELS:-qwen3 llama mistral}
TEMPLATES=runtime-image/src/test/resources/chat/templates
ORACLE=runtime-image/scripts/oracle
FAILS=0
row() { printf '%-8s %-30s %s\n' "$1" "$2" "$3" | tee -a "$TABLE"; case "$3" in PASS*) ;; *) FAILS=$((FAILS + 1)) ;; esac; }
finish() {
  echo "================ agent clients (official openai) ================"
  cat "$TABLE"
  if [ "$FAILS" -eq 0 ]; then echo "device-agent: PASS"; exit 0; fi
  echo "device-agent: FAIL"
  exit "${1:-1}"
}
say "== date: $(date -u +%FT%TZ)  steps: $STEPS  models: $MODELS  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"

# --- client: the portable Python with openai, unpacked once per archive
if has_step client; then
  a=.oa/openai-client.tar.xz
  if [ -f "$a" ] && { [ ! -f "$OA/.unpacked" ] || [ "$a" -nt "$OA/.unpacked" ]; }; then
    rm -rf "$OA" && mkdir -p "$OA" && xz -dc "$a" | tar -C "$OA" -xf - && touch "$OA/.unpacked"
    say "== client: unpacked $a into $OA"
  fi
  v=$($OAPY -c 'import openai, pydantic; print(openai.__version__, pydantic.__version__)' 2>>"$LOG")
  if [ -n "$v" ]; then row client "openai, pydantic in $OA" "PASS $v"
  else row client "openai in $OA" "FAIL (none: carry .oa/openai-client.tar.xz, see the header)"; finish 2; fi
fi

# --- train: the oracle checkpoints that are missing
if has_step train; then
  missing=""
  for m in $MODELS; do [ -f "$MODELDIR/$m/config.json" ] || missing="$missing $m"; done
  if [ -n "$missing" ]; then
    step "train$missing" "$OUT/train.log" timeout "$(tmo 240 60)" $PY $ORACLE/make_models.py --out "$MODELDIR" \
      --steps "${TRAIN_STEPS:-150}" --models "$missing" || { row train "make_models.py$missing" "FAIL (see train.log)"; finish 2; }
  fi
  row train "checkpoints ($MODELS)" PASS
fi

has_step agent || finish
bash runtime-image/scripts/device-unpack.sh || { row agent ".device (device-prepare.sh)" "FAIL (missing)"; finish 2; }
JAVA=".device/jre/bin/java -Xmx4g"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
$OAPY -c 'import openai' 2>/dev/null || { row agent "openai client in $OA" "FAIL (run STEPS=client first, see the header)"; finish 2; }

template() { # the tool-capable template of a model's family, and the parser serve should choose
  case "$1" in
    qwen2*moe*|qwen3*) echo "qwen3.jinja hermes" ;;
    qwen2*) echo "qwen2.5-instruct.jinja hermes" ;;
    llama*) echo "llama-3.1-instruct.jinja llama3_json" ;;
    mistral*|mixtral*) echo "mistral-7b-instruct-v0.3.jinja mistral" ;;
    *) echo "" ;;
  esac
}

port=18460
for m in $MODELS; do
  port=$((port + 1))
  read -r tpl parser <<< "$(template "$m")"
  [ -n "$tpl" ] || { row "$m" "chat template" "FAIL (no tool template for this family)"; continue; }
  [ -f "$MODELDIR/$m/config.json" ] || { row "$m" "checkpoint" "FAIL (none in $MODELDIR)"; continue; }
  [ "$(left)" -gt 60 ] || { row "$m" "time" "FAIL (only $(left) s left of BUDGET=$BUDGET)"; continue; }
  d=/tmp/tl-agent/$m
  rm -rf "$d" && mkdir -p /tmp/tl-agent && cp -r "$MODELDIR/$m" "$d" && cp "$TEMPLATES/$tpl" "$d/chat_template.jinja"
  $JAVA -jar "$APP" serve --model "$d" --served-model-name "$m" --port $port --memory-fraction 0.3 \
    --kv-cache-tokens 65536 --max-model-len 2048 > "$OUT/serve-$m.log" 2>&1 &
  spid=$!
  ok=0
  for i in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$port/health" > /dev/null && { ok=1; break; }
    kill -0 $spid 2>/dev/null || break
    sleep 1
  done
  if [ $ok = 0 ]; then
    row "$m" "serve ready" "FAIL (see serve-$m.log)"; tail -20 "$OUT/serve-$m.log" | sed 's/^/   | /' >> "$LOG"
    kill -TERM $spid 2>/dev/null; wait $spid 2>/dev/null; continue
  fi
  got=$(sed -n 's/^serve: tool calls parsed as \([a-z0-9_]*\).*/\1/p' "$OUT/serve-$m.log" | head -1)
  [ "$got" = "$parser" ] && row "$m" "tool-call parser ($tpl)" "PASS $got" || row "$m" "tool-call parser ($tpl)" "FAIL (${got:-none}, want $parser)"
  t0=$(now)
  # the checkpoint's EOS id (the first, when config.json lists several) for tools-parallel's EOS-biased answers
  eos=$($OAPY -c 'import json, sys; e = json.load(open(sys.argv[1]))["eos_token_id"]; print(e[0] if isinstance(e, list) else e)' \
    "$d/config.json" 2>>"$LOG")
  timeout "$(tmo 240 30)" $OAPY $ORACLE/agent_client.py "http://127.0.0.1:$port" "$m" --out "$OUT/agent-$m.json" \
    --requests "${REQUESTS:-300}" ${eos:+--eos-id "$eos"} --tool-parser "$parser" > "$OUT/client-$m.txt" 2>&1
  rc=$?
  say "== $m: agent_client.py exit $rc, $(since "$t0") s ($(left) s left)"
  cat "$OUT/client-$m.txt" >> "$LOG"
  while read -r _ name verdict rest; do row "$m" "${name%:}" "$verdict $rest"; done < <(grep "^agent " "$OUT/client-$m.txt")
  [ "$rc" -eq 0 ] || grep -q "^agent .* FAIL " "$OUT/client-$m.txt" || row "$m" "agent_client.py" "FAIL (exit $rc; see client-$m.txt)"
  if [ -f "$OUT/agent-$m.json" ]; then
    timeout "$(tmo 90 20)" $PY $ORACLE/echo_check.py "$OUT/agent-$m.json" "$d" > "$OUT/echo-$m.txt" 2>>"$LOG"
    rc=$?
    while read -r _ name verdict rest; do row "$m" "${name%:}" "$verdict $rest"; done < <(grep "^agent " "$OUT/echo-$m.txt")
    [ "$rc" -eq 0 ] || grep -q "^agent .* FAIL " "$OUT/echo-$m.txt" || row "$m" "echo_check.py" "FAIL (exit $rc; see agent.log)"
  fi
  kill -TERM $spid 2>/dev/null; wait $spid 2>/dev/null
  tail -5 "$OUT/serve-$m.log" | sed 's/^/   | /' >> "$LOG"
done
$PY - "$OUT" $MODELS > "$OUT/agent.json" 2>>"$LOG" <<'PYEOF'
import json, os, sys
out = {}
for m in sys.argv[2:]:
    p = os.path.join(sys.argv[1], "agent-%s.json" % m)
    out[m] = json.load(open(p)) if os.path.isfile(p) else None
print(json.dumps(out, indent=1))
PYEOF
finish
