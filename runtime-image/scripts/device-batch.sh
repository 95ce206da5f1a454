#!/usr/bin/env bash
# Several device scripts in one device call (device tool, carry [".device"]): each step gets its own output folder and
# a time limit, and every result is packed into $OUT/results.tar.xz at the end (the device tool brings back at most 8
# files). Usage:
#   OUT=$OUT bash runtime-image/scripts/device-batch.sh 'NAME:SECONDS:COMMAND' ...
# COMMAND runs under bash in the repository root with OUT=<$OUT's scratch>/NAME exported, killed (TERM, then KILL 10 s
# later) after SECONDS; its stdout and stderr go to NAME/stdout.txt. $OUT/batch.txt gets one line per step (exit code,
# seconds, the step's last line of output) and is printed last. Exit 0 when every step exits 0. BUDGET (570 s): no step
# runs past it (a step's limit is cut to what is left less 20 s for packing; a step with less than 5 s left is skipped),
# so the results are packed before the device call's own limit.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
bash runtime-image/scripts/device-unpack.sh || exit 2
work=$(mktemp -d /tmp/tl-batch.XXXXXX)
summary="$work/batch.txt"
echo "== device-batch $(date -u +%FT%TZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)" > "$summary"
BUDGET=${BUDGET:-570}
T0=$(date +%s)
rc=0
for step in "$@"; do
  name=${step%%:*}; rest=${step#*:}; secs=${rest%%:*}; cmd=${rest#*:}
  [[ "$name" =~ ^[A-Za-z0-9_.-]+$ && "$secs" =~ ^[0-9]+$ && -n "$cmd" ]] || { echo "device-batch: bad step '$step' (NAME:SECONDS:COMMAND)" >&2; exit 2; }
  mkdir -p "$work/$name"
  t0=$(date +%s)
  left=$(( BUDGET - 20 - (t0 - T0) ))
  [ "$left" -lt "$secs" ] && secs=$left
  if [ "$secs" -lt 5 ]; then
    printf '%-14s skipped: the budget (%s s) is spent\n' "$name" "$BUDGET" >> "$summary"; rc=1; continue
  fi
  OUT="$work/$name" timeout -k 10 "$secs" bash -c "$cmd" > "$work/$name/stdout.txt" 2>&1
  s=$?
  [ $s = 0 ] || rc=1
  printf '%-14s exit %-3s %4s s  %s\n' "$name" "$s" "$(( $(date +%s) - t0 ))" "$(tail -1 "$work/$name/stdout.txt" | cut -c1-160)" >> "$summary"
done
cp "$summary" "$OUT/batch.txt"
tar -C "$work" -cJf "$OUT/results.tar.xz" . && rm -rf "$work"
cat "$OUT/batch.txt"
exit $rc
