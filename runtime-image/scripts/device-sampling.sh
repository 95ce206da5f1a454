#!/usr/bin/env bash
# GPU sampling on the GPU machine (device tool, kind nvidia-h200; needs .device/ from device-prepare.sh and the trained
# checkpoints of device-models.sh in $MODELDIR, default /tmp/tl-models): `generate` with temperature/top-k/top-p/min-p
# and a seed, twice at TP 1 and once at TP 2 (virtual ranks). The same seed must give the same tokens; a sampled
# continuation must differ from the greedy one. Prints one line per check and exits 1 when one fails.
set -uo pipefail
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/tensorlane-out}
MODELDIR=${MODELDIR:-/tmp/tl-models}
J=".device/jre/bin/java -Xmx2g -jar .device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
rc=0
for m in ${MODELS:-llama qwen3}; do
  d="$MODELDIR/$m"
  [ -d "$d" ] || { echo "sampling $m: no checkpoint in $d"; rc=1; continue; }
  gen() { timeout 120 $J generate --model "$d" --prompt "def parse(" --max-tokens 48 --ignore-eos --json "$@" 2>>"$OUT/sampling-$m.log"; }
  S="--temperature 0.9 --top-k 50 --top-p 0.95 --min-p 0.02 --seed 7"
  gen $S > "$OUT/sampled-$m-a.json"; gen $S > "$OUT/sampled-$m-b.json"
  gen $S --tp 2 --virtual-ranks > "$OUT/sampled-$m-tp2.json"
  gen --temperature 0.9 --seed 8 > "$OUT/sampled-$m-seed8.json"
  gen > "$OUT/greedy-$m.json"
  python3 - "$m" "$OUT" <<'PY' || rc=1
import json, sys
m, out = sys.argv[1], sys.argv[2]
def ids(name):
    with open("%s/%s.json" % (out, name)) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{") and "generated_ids" in line:
                return json.loads(line)["generated_ids"]
    return None
a, b, t2, s8, g = (ids(n % m) for n in ("sampled-%s-a", "sampled-%s-b", "sampled-%s-tp2", "sampled-%s-seed8", "greedy-%s"))
checks = [("same seed, TP 1 twice: same tokens", a is not None and a == b),
          ("seed 7 and seed 8 differ", a is not None and s8 is not None and a != s8),
          ("sampled differs from greedy", a is not None and g is not None and a != g),
          ("48 tokens each", all(x is not None and len(x) == 48 for x in (a, b, t2, s8, g)))]
agree = sum(1 for x, y in zip(a or [], t2 or []) if x == y)
print("sampling %s: TP 2 (virtual) vs TP 1, same seed: %d/%d tokens equal before/after the first difference (numerics may flip a draw)" % (
    m, agree, len(a or [])))
bad = 0
for name, ok in checks:
    print("sampling %s: %-40s %s" % (m, name, "PASS" if ok else "FAIL"))
    bad += 0 if ok else 1
print("sampling %s: seed 7: %s" % (m, a))
sys.exit(1 if bad else 0)
PY
done
exit $rc
