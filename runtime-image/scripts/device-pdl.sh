#!/usr/bin/env bash
# Programmatic dependent launch in captured steps (TENSORLANE_PDL, engine.ProgrammaticEdges, kernels' tl_pdl.cuh) on
# the GPU machine (device tool, kind nvidia-h200, carry [".device"]; ~250 s from a fresh machine). The same kernels run
# in the same order either way, so the check is bit for bit:
#   1. models  oracle/make_models.py --steps $TRAIN_STEPS on $MODELS (only their architectures matter here), unless
#              $MODELDIR has them
#   2. pairs   per model and TP in $TPS (virtual ranks for TP > 1): `generate` greedy (64 tokens, --logprobs 5, CUDA
#              graphs) and sampled (temperature 0.8, top-p 0.9, seed 7), each with TENSORLANE_PDL=off and =on; the two
#              runs' generated ids and logprobs must be identical, the decode steps must have replayed graphs, and the
#              on run's log must say how many graph edges it made programmatic (more than 0)
# SWITCH (TENSORLANE_PDL) names the variable a pair flips, from OFF (off) to ON (on): any switch that must not change a
# bit (TENSORLANE_L2_PREFETCH with ON=40: weights prefetched toward L2); the edge count is asked for of TENSORLANE_PDL only.
# PASS: every pair identical, with edges. Environment: MODELS ("llama qwen3 qwen3moe"), TPS ("1 2"), TRAIN_STEPS (30),
# MODELDIR (/tmp/tl-pdl-models), BUDGET (300 s). Results under $OUT: pdl.txt (one line a pair, printed last),
# pdl.log, runs/. Last line: pdl: PASS|FAIL; exit 0 / 1 (2: no bundle or no checkpoints).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT/runs"
PY_LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=true HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
bash runtime-image/scripts/device-unpack.sh || { echo "pdl: FAIL (no .device bundle)"; exit 2; }
JAVA=".device/jre/bin/java -Xmx4g"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
PY="env LD_LIBRARY_PATH=$PY_LD_LIBRARY_PATH ${PY:-python3}"
MODELS=${MODELS:-llama qwen3 qwen3moe}
TPS=${TPS:-1 2}
MODELDIR=${MODELDIR:-/tmp/tl-pdl-models}
BUDGET=${BUDGET:-300}
STEPS=${STEPS:-models pairs}
SWITCH=${SWITCH:-TENSORLANE_PDL}
ON=${ON:-on}
OFF=${OFF:-off}
LOG="$OUT/pdl.log"
TXT="$OUT/pdl.txt"
. runtime-image/scripts/device-lib.sh
: > "$LOG"
: > "$TXT"
say "== date: $(date -u +%FT%TZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
say "== pairs: $SWITCH=$OFF against $SWITCH=$ON"

missing=""
for m in $MODELS; do [ -f "$MODELDIR/$m/config.json" ] || missing="$missing $m"; done
if has_step models && [ -n "$missing" ]; then
  step "train$missing" "$OUT/train.log" timeout "$(tmo 200 100)" \
    $PY runtime-image/scripts/oracle/make_models.py --out "$MODELDIR" --steps "${TRAIN_STEPS:-30}" --models "${missing# }"
fi
printf '%s\n' '{"text": "def main():"}' '{"text": "import os\nimport sys\n\nclass Reader:\n    def __init__(self, path):"}' \
  '{"text": "# "}' '{"text": "for i in range(10):\n    print(i)\n"}' \
  '{"text": "\"\"\"Utilities for parsing configuration files and the command line.\n\nThe functions here"}' \
  > "$OUT/runs/prompts.jsonl"

fails=0
pairs=0
run() {   # run DIR off|on TP MODEL ARGS...: generate's JSON lines to DIR/off|on.jsonl, its log to DIR/off|on.log
  local d=$1 pdl=$2 tp=$3 m=$4; shift 4
  local vr=""; [ "$tp" -gt 1 ] && vr="--virtual-ranks"
  local val=$OFF; [ "$pdl" = on ] && val=$ON
  env "$SWITCH=$val" timeout -s QUIT -k 5 "$(tmo 90 10)" $JAVA -jar "$APP" generate --model "$MODELDIR/$m" --tp "$tp" $vr \
    --prompts-file "$OUT/runs/prompts.jsonl" --max-tokens 64 --ignore-eos --json --logprobs 5 "$@" \
    > "$d/$pdl.jsonl" 2> "$d/$pdl.log"
}
if has_step pairs; then
  for m in $MODELS; do
    if [ ! -f "$MODELDIR/$m/config.json" ]; then
      echo "$m: no checkpoint  FAIL" | tee -a "$TXT"; fails=$((fails + 1)); continue
    fi
    for tp in $TPS; do
      for mode in greedy sampled; do
        if [ "$(left)" -lt 40 ]; then echo "$m tp$tp $mode: skipped ($(left) s left)" | tee -a "$TXT"; fails=$((fails + 1)); continue; fi
        d="$OUT/runs/$m-tp$tp-$mode"; mkdir -p "$d"
        args=(); [ "$mode" = sampled ] && args=(--temperature 0.8 --top-p 0.9 --seed 7)
        run "$d" off "$tp" "$m" "${args[@]}"; rc_off=$?
        run "$d" on "$tp" "$m" "${args[@]}"; rc_on=$?
        pairs=$((pairs + 1))
        verdict=$($PY - "$d/off.jsonl" "$d/on.jsonl" "$d/on.log" "$rc_off" "$rc_on" "$SWITCH" <<'PY'
import json, re, sys
off, on, log, rc_off, rc_on, switch = sys.argv[1:7]
def rows(path):
    res, summary = [], None
    for line in open(path, errors="replace"):
        line = line.strip()
        if not line.startswith("{"):
            continue
        o = json.loads(line)
        if "summary" in o or o.get("type") == "summary":
            summary = o.get("summary", o)
        elif "generated_ids" in o:
            res.append((o["generated_ids"], o.get("logprobs")))
    return res, summary
try:
    a, sa = rows(off)
    b, sb = rows(on)
except Exception as e:
    print(f"FAIL (unreadable output: {e})"); sys.exit()
edges = re.findall(r"programmatic dependent launch.*?: (\d+) edges", open(log, errors="replace").read())
problems = []
if rc_off != "0" or rc_on != "0": problems.append(f"exit {rc_off}/{rc_on}")
if not a or len(a) != len(b): problems.append(f"{len(a)} vs {len(b)} results")
same_ids = sum(x[0] == y[0] for x, y in zip(a, b))
same_lp = sum(x[1] == y[1] for x, y in zip(a, b))
if same_ids != len(a) or same_lp != len(a): problems.append(f"ids equal {same_ids}/{len(a)}, logprobs equal {same_lp}/{len(a)}")
for name, s in (("off", sa), ("on", sb)):
    if not s or not s.get("graph_replays"): problems.append(f"{name}: no graph replays")
if switch == "TENSORLANE_PDL" and (not edges or int(edges[0]) == 0): problems.append("on: no programmatic edges logged")
info = f"{len(a)} prompts, edges {edges[0] if edges else '?'}, replays {sa.get('graph_replays') if sa else '?'}/{sb.get('graph_replays') if sb else '?'}"
print(("PASS " if not problems else "FAIL ") + info + ("" if not problems else ": " + "; ".join(problems)))
PY
)
        echo "$m tp$tp $mode: $verdict" | tee -a "$TXT"
        case "$verdict" in PASS*) ;; *) fails=$((fails + 1)) ;; esac
        grep -h -E "programmatic|Exception|error" "$d/on.log" | head -5 >> "$LOG"
      done
    done
  done
fi
echo "================ pdl ================"
cat "$TXT"
if [ "$pairs" -gt 0 ] && [ "$fails" -eq 0 ]; then echo "pdl: PASS"; exit 0; fi
echo "pdl: FAIL ($fails of $pairs pairs failed or were skipped)"; exit 1
