# Helpers the GPU-machine scripts share (sourced, not run). The caller sets LOG (the combined log under $OUT), STEPS
# (the steps asked for) and, optionally, BUDGET (seconds for the whole script; the device tool stops a command at 600 s).
T_ALL=$(date +%s)
BUDGET=${BUDGET:-570}
left() { echo $(( BUDGET - ($(date +%s) - T_ALL) )); }
# a step's timeout: min(wanted, time left - reserve), at least 1
tmo() { local t; t=$(( $(left) - $2 )); [ "$t" -gt "$1" ] && t=$1; [ "$t" -lt 1 ] && t=1; echo "$t"; }
say() { echo "$*" | tee -a "$LOG"; }
has_step() { [[ " $STEPS " == *" $1 "* ]]; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# step NAME LOGFILE cmd...: output to LOGFILE, its tail into the combined log; one status line
step() {
  local name=$1 logf=$2; shift 2
  local t0; t0=$(now)
  "$@" > "$logf" 2>&1
  local rc=$?
  say "== $name: exit $rc, $(since "$t0") s ($(left) s left)"
  [ $rc -ne 0 ] && tail -40 "$logf" | sed 's/^/   | /' | tee -a "$LOG"
  { echo "---- $name ($logf, last 300 lines)"; tail -300 "$logf"; } >> "$LOG"
  return $rc
}
