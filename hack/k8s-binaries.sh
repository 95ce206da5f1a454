#!/usr/bin/env bash
# Builds (once per machine) or reuses the Kubernetes control-plane binaries that the tests and the demo run:
#   kube-apiserver, kube-controller-manager, kube-scheduler 1.20.2 built from Debian bookworm's `kubernetes`
#   source package, and etcd from Debian's `etcd-server`.
# Binaries are cached outside the repository, keyed by version, and verified (sha256 + --version) before use.
# Usage: hack/k8s-binaries.sh [--print-dir]     (prints the cache directory on the last line of stdout)
set -euo pipefail

K8S_VERSION=1.20.2
CACHE_ROOT="${TENSORLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tensorlane}"
BIN_DIR="$CACHE_ROOT/k8s-$K8S_VERSION"
SRC_DIR="$CACHE_ROOT/src/kubernetes-$K8S_VERSION"
BINS=(kube-apiserver kube-controller-manager kube-scheduler etcd)

log() { echo "[k8s-binaries] $*" >&2; }
die() { echo "[k8s-binaries] ERROR: $*" >&2; exit 1; }

# size, mtime and inode of every binary: when unchanged since the last full check, the checksums need not be
# recomputed (300 MB of sha256 costs seconds on a loaded 2-core machine, on every control-plane start)
stamp() { (cd "$BIN_DIR" && stat -c '%n %s %Y %i' SHA256SUMS "${BINS[@]}" 2>/dev/null); }

verify_cache() {
  [ -f "$BIN_DIR/SHA256SUMS" ] || return 1
  if [ "$(cat "$BIN_DIR/.verified" 2>/dev/null)" != "$(stamp)" ]; then
    (cd "$BIN_DIR" && sha256sum --quiet -c SHA256SUMS >/dev/null 2>&1) || { log "checksum mismatch in $BIN_DIR"; return 1; }
    stamp > "$BIN_DIR/.verified" 2>/dev/null || true
  fi
  # capture first, then match: `cmd | grep -q` under pipefail fails at random when grep exits before cmd's last
  # write (SIGPIPE); etcd prints four lines
  local v
  v=$("$BIN_DIR/kube-apiserver" --version 2>&1 || true)
  grep -q "v$K8S_VERSION" <<<"$v" || { log "kube-apiserver in cache is not v$K8S_VERSION: $v"; return 1; }
  v=$("$BIN_DIR/etcd" --version 2>&1 || true)
  grep -q '^etcd Version: 3\.' <<<"$v" || { log "etcd in cache does not run: $v"; return 1; }
  return 0
}

if verify_cache; then
  log "reusing verified binaries in $BIN_DIR"
  echo "$BIN_DIR"; exit 0
fi

# one builder at a time per machine (test JVMs, the demo and CI may all call this at once); whoever waited
# re-checks the cache the other one just filled
mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.k8s-binaries.lock"
if ! flock -n 9; then
  log "another hack/k8s-binaries.sh is building; waiting for it"
  flock 9
fi
if verify_cache; then
  log "reusing verified binaries in $BIN_DIR (built by another run)"
  echo "$BIN_DIR"; exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO="sudo -n"
  else
    die "not root and no password-less sudo. Install these first, then run again:
    a deb-src entry for Debian bookworm (main), then: apt-get install golang-go rsync etcd-server dpkg-dev
  (or copy kube-apiserver/kube-controller-manager/kube-scheduler $K8S_VERSION and etcd 3.4 into $BIN_DIR
   with a SHA256SUMS file)."
  fi
fi

# --- apt: a deb-src entry for bookworm, derived from the machine's own configured Debian archive ---------
SRC_LIST=/etc/apt/sources.list.d/tensorlane-bookworm-src.sources
if [ ! -f "$SRC_LIST" ]; then
  uri=""; signed=""
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    uri=$(awk '/^URIs:/{print $2}' /etc/apt/sources.list.d/debian.sources | grep -v -- '-security' | head -1)
    signed=$(awk '/^Signed-By:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  fi
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1=="deb" && $0 !~ /security/ {for(i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' /etc/apt/sources.list)
  fi
  [ -n "$uri" ] || die "could not find the Debian archive URI in the apt sources; add a deb-src entry for bookworm main yourself"
  log "adding deb-src bookworm from the configured archive"
  { echo "Types: deb-src"; echo "URIs: $uri"; echo "Suites: bookworm"; echo "Components: main"
    [ -n "$signed" ] && echo "Signed-By: $signed"; } | $SUDO tee "$SRC_LIST" >/dev/null
fi
need_pkgs=()
command -v go >/dev/null || need_pkgs+=(golang-go)
command -v rsync >/dev/null || need_pkgs+=(rsync)
[ -x /usr/bin/etcd ] || need_pkgs+=(etcd-server)
command -v dpkg-source >/dev/null || need_pkgs+=(dpkg-dev)
[ -d /usr/share/gocode/src/github.com/modern-go/reflect2 ] || need_pkgs+=(golang-github-modern-go-reflect2-dev)
log "apt-get update"
$SUDO apt-get update -qq >&2
if [ ${#need_pkgs[@]} -gt 0 ]; then
  log "installing ${need_pkgs[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >&2
fi

# --- source --------------------------------------------------------------------------------------------
if [ ! -f "$SRC_DIR/.tensorlane-prepared" ]; then
  rm -rf "$SRC_DIR"; mkdir -p "$CACHE_ROOT/src/dl"
  log "fetching the kubernetes source package (bookworm)"
  (cd "$CACHE_ROOT/src/dl" && rm -rf ./* && apt-get source -qq -t bookworm "kubernetes" >&2 2>/dev/null || apt-get source -qq "kubernetes/bookworm" >&2)
  d=$(find "$CACHE_ROOT/src/dl" -mindepth 1 -maxdepth 1 -type d -name 'kubernetes-*' | head -1)
  [ -n "$d" ] || die "apt-get source kubernetes produced no directory"
  grep -q "gitVersion.*$K8S_VERSION\|$K8S_VERSION" "$d/debian/changelog" 2>/dev/null || log "warning: debian/changelog does not mention $K8S_VERSION"
  mv "$d" "$SRC_DIR"
  rm -rf "$CACHE_ROOT/src/dl"
  # reflect2 1.0.1 (vendored) is unsafe on Go >= 1.18: the apiserver dies on the first custom-resource write.
  log "replacing vendored modern-go/reflect2 with Debian's 1.0.2 source"
  rm -rf "$SRC_DIR/vendor/github.com/modern-go/reflect2"
  cp -r /usr/share/gocode/src/github.com/modern-go/reflect2 "$SRC_DIR/vendor/github.com/modern-go/reflect2"
  sed -i 's#^github.com/modern-go/reflect2 v1.0.1#github.com/modern-go/reflect2 v1.0.2#' "$SRC_DIR/vendor/modules.txt" || true
  sed -i 's#github.com/modern-go/reflect2 v1.0.1#github.com/modern-go/reflect2 v1.0.2#' "$SRC_DIR/go.mod" || true
  mkdir -p "$SRC_DIR/.go/src/k8s.io"
  ln -sfn ../../.. "$SRC_DIR/.go/src/k8s.io/kubernetes"
  touch "$SRC_DIR/.tensorlane-prepared"
fi

# --- build ---------------------------------------------------------------------------------------------
log "building kube-apiserver, kube-controller-manager, kube-scheduler (10-15 minutes on 2 cores, once per machine)"
(
  cd "$SRC_DIR/.go/src/k8s.io/kubernetes"
  export GOPATH="$SRC_DIR/.go" GO111MODULE=off GOFLAGS= GOCACHE="$CACHE_ROOT/src/gocache"
  export KUBE_GIT_VERSION="v$K8S_VERSION" KUBE_GIT_TREE_STATE=clean KUBE_GIT_MAJOR=1 KUBE_GIT_MINOR=20
  make WHAT="cmd/kube-apiserver cmd/kube-controller-manager cmd/kube-scheduler" >&2
)
out=$(find "$SRC_DIR/_output" -type d -path '*/bin' | head -1)
[ -x "$out/kube-apiserver" ] || die "build finished without kube-apiserver in _output"
mkdir -p "$BIN_DIR"
for b in kube-apiserver kube-controller-manager kube-scheduler; do install -m 0755 "$out/$b" "$BIN_DIR/$b"; done
install -m 0755 /usr/bin/etcd "$BIN_DIR/etcd"
(cd "$BIN_DIR" && sha256sum "${BINS[@]}" > SHA256SUMS)
verify_cache || die "freshly built binaries failed verification"
log "binaries ready in $BIN_DIR"
echo "$BIN_DIR"
