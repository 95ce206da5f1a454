#!/usr/bin/env bash
# Proves that an image tarball built by Jib starts: unpacks its layers into a folder and runs its entrypoint in a
# chroot, as the image's user, with the image's environment, for each given argument list.
#
#   hack/image-smoke.sh <image.tar> [--expect REGEX] -- <args...> [-- <args...>]...
#   hack/image-smoke.sh <image.tar> --until REGEX --timeout S --env K=V -- [args...]
#        long-running entrypoints (the operator): passes as soon as the output matches REGEX, whatever happens
#        after (the run is then killed); fails when the process ends or S seconds pass without a match
#   hack/image-smoke.sh runtime-image/target/jib-image.tar          # the runtime image's default checks:
#                                                                    #   --help, version, selftest --dry-run
# The entrypoint runs with cwd / (chroot(1) changes into the new root); Jib's entrypoints use absolute paths.
# Reads OCI (index.json) or docker-save (manifest.json) tarballs. Runs as root (CI does): unshare gives the run
# its own mount and PID namespaces, so /proc, /dev/null etc. exist inside and vanish afterwards. Without root it
# falls back to a user namespace (unshare -r) and runs as the mapped root instead of the image's user.
# Needs: tar, jq, unshare, chroot (hack/test-deps.sh installs what is missing). Exit 0 only if every run exits 0
# and prints what is expected.
set -euo pipefail

log() { echo "[image-smoke] $*" >&2; }
die() { echo "[image-smoke] ERROR: $*" >&2; exit 1; }

[ $# -ge 1 ] || die "usage: hack/image-smoke.sh <image.tar> [--expect REGEX] -- <args...> [-- <args...>]..."
IMAGE=$1; shift
[ -f "$IMAGE" ] || die "no image tarball at $IMAGE (build it: hack/images.sh build)"
for t in tar jq unshare chroot mount; do command -v "$t" >/dev/null || die "$t is missing (run hack/test-deps.sh)"; done
UNSHARE=$(command -v unshare); CHROOT=$(command -v chroot); MOUNT=$(command -v mount); SH=/bin/sh

# Runs: each "--" starts an argument list; --expect applies to the next run. Default: the runtime CLI checks.
RUN_ARGS=(); RUN_EXPECT=(); RUN_UNTIL=(); RUN_TIMEOUT=(); EXTRA_ENV=()
if [ $# -eq 0 ]; then
  RUN_ARGS=("--help" "version" "selftest --dry-run" "serve --help" "probe --help")
  RUN_EXPECT=("Usage:" "chat templates: ok" "dry run" "Usage: tensorlane-runtime serve" "Usage: tensorlane-runtime probe")
  RUN_UNTIL=("" "" "" "" ""); RUN_TIMEOUT=(300 300 300 300 300)
else
  expect="."; until_re=""; timeout_s=300
  current=""; started=0
  flush() { RUN_ARGS+=("$current"); RUN_EXPECT+=("$last_expect"); RUN_UNTIL+=("$last_until"); RUN_TIMEOUT+=("$last_timeout"); }
  while [ $# -gt 0 ]; do
    case "$1" in
      --expect) expect=$2; shift 2 ;;
      --until) until_re=$2; shift 2 ;;
      --timeout) timeout_s=$2; shift 2 ;;
      --env) EXTRA_ENV+=("$2"); shift 2 ;;
      --) if [ $started -eq 1 ]; then flush; fi
          current=""; started=1; last_expect=$expect; last_until=$until_re; last_timeout=$timeout_s
          expect="."; until_re=""; timeout_s=300; shift ;;
      *) current="${current:+$current }$1"; shift ;;
    esac
  done
  [ $started -eq 1 ] && flush
  [ ${#RUN_ARGS[@]} -gt 0 ] || die "no run given: put -- before the arguments (an empty list runs the bare entrypoint)"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/image-smoke.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/img" "$WORK/rootfs"
tar -xf "$IMAGE" -C "$WORK/img"

blob() { echo "$WORK/img/blobs/${1%%:*}/${1#*:}"; }
if [ -f "$WORK/img/index.json" ]; then
  manifest=$(blob "$(jq -r '.manifests[0].digest' "$WORK/img/index.json")")
  config=$(blob "$(jq -r '.config.digest' "$manifest")")
  mapfile -t layers < <(jq -r '.layers[].digest' "$manifest" | while read -r d; do blob "$d"; done)
elif [ -f "$WORK/img/manifest.json" ]; then
  config="$WORK/img/$(jq -r '.[0].Config' "$WORK/img/manifest.json")"
  mapfile -t layers < <(jq -r '.[0].Layers[]' "$WORK/img/manifest.json" | sed "s#^#$WORK/img/#")
else
  die "$IMAGE is neither an OCI nor a docker-save tarball"
fi
log "$(basename "$IMAGE"): ${#layers[@]} layers"
for l in "${layers[@]}"; do
  # gzip or plain; Jib writes no whiteouts, but honour them anyway
  tar --warning=no-unknown-keyword -xzf "$l" -C "$WORK/rootfs" --no-same-owner 2>/dev/null \
    || tar --warning=no-unknown-keyword -xf "$l" -C "$WORK/rootfs" --no-same-owner
  find "$WORK/rootfs" -name '.wh.*' | while read -r wh; do
    rm -rf "$(dirname "$wh")/$(basename "$wh" | sed 's/^\.wh\.//')" "$wh"; done
done

mapfile -t entrypoint < <(jq -r '.config.Entrypoint // [] | .[]' "$config")
mapfile -t cmd < <(jq -r '.config.Cmd // [] | .[]' "$config")
mapfile -t envs < <(jq -r '.config.Env // [] | .[]' "$config")
user=$(jq -r '.config.User // ""' "$config")
workdir=$(jq -r '.config.WorkingDir // "/"' "$config")
[ ${#entrypoint[@]} -gt 0 ] || die "the image has no entrypoint"
log "entrypoint: ${entrypoint[*]}"
log "user: ${user:-<none>}  workdir: $workdir"
case "$user" in ""|0|0:0|root) die "the image runs as root; it must name a non-root user" ;; esac

mkdir -p "$WORK/rootfs"/{proc,dev,tmp} "$WORK/rootfs$workdir"
chmod 1777 "$WORK/rootfs/tmp"
for d in null zero random urandom; do : > "$WORK/rootfs/dev/$d"; done

if [ "$(id -u)" -eq 0 ]; then
  NS=(unshare --mount --pid --fork); USERSPEC="--userspec=$user"
  [[ "$user" == *:* ]] || USERSPEC="--userspec=$user:$user"
else
  log "not root: using a user namespace, the entrypoint runs as the mapped root"
  NS=(unshare --user --map-root-user --mount --pid --fork); USERSPEC=""
fi

# One run: the entrypoint with the image's environment (plus --env) in fresh mount and PID namespaces; the
# namespaces die with the run (--kill-child), and with them every mount made for it.
run_in_image() { # <out-file> <args...>
  local out=$1; shift
  exec env -i "${envs[@]}" "${EXTRA_ENV[@]}" "$UNSHARE" "${NS[@]:1}" --kill-child "$SH" -c '
      root=$1; userspec=$2; mount=$3; chroot=$4; shift 4
      "$mount" -t proc proc "$root/proc" || exit 97
      for d in null zero random urandom; do "$mount" --bind "/dev/$d" "$root/dev/$d" || exit 97; done
      exec "$chroot" $userspec "$root" "$@"' \
      smoke "$WORK/rootfs" "$USERSPEC" "$MOUNT" "$CHROOT" "${entrypoint[@]}" "$@" >"$out" 2>&1
}

failed=0
for i in "${!RUN_ARGS[@]}"; do
  read -r -a args <<< "${RUN_ARGS[$i]}"
  log "run: ${entrypoint[*]} ${args[*]}"
  out="$WORK/run-$i.log"; : > "$out"
  run_in_image "$out" "${args[@]}" &
  pid=$!
  deadline=$(( $(date +%s) + ${RUN_TIMEOUT[$i]} )); matched=0; timed_out=0
  while kill -0 "$pid" 2>/dev/null; do
    if [ -n "${RUN_UNTIL[$i]}" ] && grep -Eq -- "${RUN_UNTIL[$i]}" "$out"; then matched=1; break; fi
    [ "$(date +%s)" -lt "$deadline" ] || { timed_out=1; break; }
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    # unshare forwards SIGTERM to the entrypoint (PID 1 of its namespace); --kill-child does not survive chroot's
    # change of user, so whatever is left after 15 s is killed by its PID
    children=$(pgrep -P "$pid" || true)
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    for c in $children; do kill -9 "$c" 2>/dev/null || true; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  set +e; wait "$pid"; rc=$?; set -e
  grep -v '^\s*at ' "$out" | sed 's/^/    | /' >&2
  if [ -n "${RUN_UNTIL[$i]}" ]; then
    grep -Eq -- "${RUN_UNTIL[$i]}" "$out" && matched=1
    if [ $matched -eq 1 ]; then log "ok: output matched /${RUN_UNTIL[$i]}/ (then stopped)"
    else log "FAILED: /${RUN_UNTIL[$i]}/ did not appear (exit $rc, timed out: $timed_out)"; failed=1; fi
  elif [ $timed_out -eq 1 ]; then
    log "FAILED: '${args[*]}' still running after ${RUN_TIMEOUT[$i]} s"; failed=1
  elif [ $rc -ne 0 ]; then
    log "FAILED (exit $rc): ${args[*]}"; failed=1
  elif ! grep -Eq -- "${RUN_EXPECT[$i]}" "$out"; then
    log "FAILED: output of '${args[*]}' does not match /${RUN_EXPECT[$i]}/"; failed=1
  else
    log "ok: ${args[*]}"
  fi
done
[ $failed -eq 0 ] || die "the image did not start correctly"
log "image starts: ${#RUN_ARGS[@]} runs passed"
