#!/usr/bin/env bash
# Builds (once per machine) or reuses a current CustomResourceDefinition API server: the standalone server of
# k8s.io/apiextensions-apiserver (its main.go: CRDs and custom resources only, on etcd, delegating authentication,
# authorization and namespaces to a core kube-apiserver), built from Debian's development suite:
#   golang-k8s-apiextensions-apiserver-dev 0.36.x (Go sources) and the golang-*-dev source packages it depends on,
#   compiled in GOPATH mode with Debian's golang-1.26-go (the machine's Go is older than its go.mod's 1.26).
# Nothing of the machine's own apt configuration or packages changes: a private apt configuration and state under
# the cache (the archive URI is read from the machine's Debian sources), `apt-get download` (apt checks every .deb
# against the archive's signed index), `dpkg -x` into a private tree, GOPROXY=off.
# The binary is cached outside the repository, keyed by series, and verified (sha256 + a run) before use.
# Usage: hack/crd-apiserver.sh        (prints the cache directory on the last line of stdout)
set -euo pipefail

SERIES=0.36              # k8s.io/apiextensions-apiserver minor release = Kubernetes 1.36
ROOT_PKG=golang-k8s-apiextensions-apiserver-dev
GO_PKG=golang-1.26       # go.mod of 0.36 says go 1.26.0
SUITE=sid                # Debian's development suite (unstable)
CACHE_ROOT="${TENSORLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tensorlane}"
BIN_DIR="$CACHE_ROOT/apiextensions-apiserver-$SERIES"
SRC_DIR="$CACHE_ROOT/src/apiextensions-apiserver-$SERIES"
APT_DIR="$CACHE_ROOT/apt-$SUITE"
BIN=apiextensions-apiserver

log() { echo "[crd-apiserver] $*" >&2; }
die() { echo "[crd-apiserver] ERROR: $*" >&2; exit 1; }

stamp() { (cd "$BIN_DIR" && stat -c '%n %s %Y %i' SHA256SUMS "$BIN" 2>/dev/null); }

verify_cache() {
  [ -f "$BIN_DIR/SHA256SUMS" ] && [ -f "$BIN_DIR/VERSION" ] || return 1
  grep -q "^$ROOT_PKG $SERIES\." "$BIN_DIR/VERSION" || { log "cache in $BIN_DIR is not $SERIES"; return 1; }
  if [ "$(cat "$BIN_DIR/.verified" 2>/dev/null)" != "$(stamp)" ]; then
    (cd "$BIN_DIR" && sha256sum --quiet -c SHA256SUMS >/dev/null 2>&1) || { log "checksum mismatch in $BIN_DIR"; return 1; }
    stamp > "$BIN_DIR/.verified" 2>/dev/null || true
  fi
  local v
  v=$("$BIN_DIR/$BIN" --help 2>&1 || true)
  grep -q -- '--etcd-servers' <<<"$v" || { log "$BIN in cache does not run: ${v:0:300}"; return 1; }
  return 0
}

if verify_cache; then
  log "reusing verified $BIN $(awk -v p=$ROOT_PKG '$1==p{print $2}' "$BIN_DIR/VERSION") in $BIN_DIR"
  echo "$BIN_DIR"; exit 0
fi

mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.crd-apiserver.lock"
if ! flock -n 9; then
  log "another hack/crd-apiserver.sh is building; waiting for it"
  flock 9
fi
if verify_cache; then
  log "reusing verified binary in $BIN_DIR (built by another run)"
  echo "$BIN_DIR"; exit 0
fi
t_start=$(date +%s)
for tool in apt-get apt-cache dpkg sha256sum awk flock; do command -v "$tool" >/dev/null || die "needs $tool"; done

# --- a private apt for the development suite ----------------------------------------------------------
uri=""; keyring=/usr/share/keyrings/debian-archive-keyring.gpg
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  uri=$(awk '/^URIs:/{print $2}' /etc/apt/sources.list.d/debian.sources | grep -v -- '-security' | head -1)
fi
if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
  uri=$(awk '$1=="deb" && $0 !~ /security/ {for(i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' /etc/apt/sources.list)
fi
[ -n "$uri" ] || die "could not find the Debian archive URI in the machine's apt sources"
[ -f "$keyring" ] || die "no $keyring (package debian-archive-keyring)"
mkdir -p "$APT_DIR"/{etc/apt.conf.d,etc/preferences.d,etc/sources.list.d,state/lists/partial,cache/archives/partial}
touch "$APT_DIR/state/status"   # an empty dpkg status: apt resolves as if nothing were installed, and installs nothing
echo "deb [signed-by=$keyring] $uri $SUITE main" > "$APT_DIR/etc/sources.list"
cat > "$APT_DIR/apt.conf" <<EOF
Dir::Etc "$APT_DIR/etc";
Dir::Etc::SourceList "$APT_DIR/etc/sources.list";
Dir::Etc::SourceParts "$APT_DIR/etc/sources.list.d";
Dir::Etc::Parts "$APT_DIR/etc/apt.conf.d";
Dir::Etc::Preferences "$APT_DIR/etc/preferences";
Dir::Etc::PreferencesParts "$APT_DIR/etc/preferences.d";
Dir::State "$APT_DIR/state";
Dir::State::status "$APT_DIR/state/status";
Dir::Cache "$APT_DIR/cache";
APT::Architecture "$(dpkg --print-architecture)";
Acquire::Languages "none";
// the archive this machine reaches may be a dated snapshot whose Release file is past its Valid-Until;
// the signature is still checked
Acquire::Check-Valid-Until "false";
APT::Sandbox::User "$(id -un)";
EOF
export APT_CONFIG="$APT_DIR/apt.conf"
log "apt-get update ($SUITE, private state in $APT_DIR)"
apt-get update -qq >&2 || die "apt-get update of $SUITE failed"

version=$(apt-cache show --no-all-versions "$ROOT_PKG" 2>/dev/null | awk '/^Version:/{print $2; exit}')
[ -n "$version" ] || die "$SUITE has no $ROOT_PKG"
case "$version" in "$SERIES".*) ;; *) die "$SUITE ships $ROOT_PKG $version, not $SERIES.x; update SERIES (and GO_PKG) here";; esac

# the Depends closure of the root package, restricted to Go source packages (golang-*-dev): the first member of
# each alternative group, the first provider of a virtual package
deps=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
         --no-enhances --no-pre-depends "$ROOT_PKG" 2>/dev/null)
pkgs=$(awk -v ROOT="$ROOT_PKG" '
  /^[^ ]/ { cur=$1; next }
  /^ [ |]Depends: / {
    alt = (substr($0,2,1)=="|"); d=$2
    if (skip) { skip = alt; next }
    skip = alt
    if (d ~ /^</) { pendv=cur; next }
    edges[cur] = edges[cur] " " d; pendv=""; next
  }
  /^    / { if (pendv!="") { edges[pendv] = edges[pendv] " " $1; pendv="" } next }
  END {
    n=1; q[1]=ROOT; seen[ROOT]=1
    for (i=1; i<=n; i++) {
      m=split(edges[q[i]], e, " ")
      for (j=1; j<=m; j++) if (!(e[j] in seen) && e[j] ~ /^golang-.*-dev$/) { seen[e[j]]=1; q[++n]=e[j] }
    }
    for (i=1; i<=n; i++) print q[i]
  }' <<<"$deps")
[ "$(wc -l <<<"$pkgs")" -gt 50 ] || die "dependency closure of $ROOT_PKG looks wrong: $(tr '\n' ' ' <<<"$pkgs")"

# --- sources: download and extract --------------------------------------------------------------------
if [ "$(cat "$SRC_DIR/.tensorlane-prepared" 2>/dev/null)" != "$ROOT_PKG $version" ]; then
  rm -rf "$SRC_DIR"; mkdir -p "$SRC_DIR/debs"
  log "downloading $ROOT_PKG $version, $(wc -l <<<"$pkgs") Go source packages and $GO_PKG-go"
  (cd "$SRC_DIR/debs" && apt-get download -q $pkgs "$GO_PKG-go" "$GO_PKG-src" >"$SRC_DIR/download.log" 2>&1) \
    || { tail -20 "$SRC_DIR/download.log" >&2; die "apt-get download failed (log: $SRC_DIR/download.log)"; }
  log "extracting into $SRC_DIR (dpkg -x)"
  mkdir -p "$SRC_DIR/go" "$SRC_DIR/tree"
  for f in "$SRC_DIR"/debs/*.deb; do
    case "$(basename "$f")" in
      "$GO_PKG"-go_*|"$GO_PKG"-src_*) dpkg -x "$f" "$SRC_DIR/go" ;;
      *) dpkg -x "$f" "$SRC_DIR/tree" ;;
    esac
  done
  (cd "$SRC_DIR/debs" && for f in *.deb; do
     printf '%s %s %s\n' "$(dpkg-deb -f "$f" Package)" "$(dpkg-deb -f "$f" Version)" "$(sha256sum "$f" | cut -d' ' -f1)"
   done) | sort > "$SRC_DIR/PACKAGES"
  rm -rf "$SRC_DIR/debs"
  echo "$ROOT_PKG $version" > "$SRC_DIR/.tensorlane-prepared"
fi

# --- build ---------------------------------------------------------------------------------------------
GOROOT_DIR=$(echo "$SRC_DIR"/go/usr/lib/go-*)
[ -x "$GOROOT_DIR/bin/go" ] || die "no go binary in $SRC_DIR/go"
upstream=${version%%-*}; upstream=${upstream#*:}
log "building $BIN $upstream with $("$GOROOT_DIR/bin/go" version | awk '{print $3}') (GOPATH mode, GOPROXY=off; ~10 minutes on 2 cores, once per machine)"
t_build=$(date +%s)
(
  export GOROOT="$GOROOT_DIR" GOPATH="$SRC_DIR/tree/usr/share/gocode" GO111MODULE=off GOFLAGS= GOPROXY=off \
         GOTOOLCHAIN=local GOSUMDB=off GOTELEMETRY=off CGO_ENABLED=0 GOCACHE="$CACHE_ROOT/src/gocache-apiextensions"
  cd "$GOPATH/src/k8s.io/apiextensions-apiserver"
  v=k8s.io/component-base/version
  nice "$GOROOT/bin/go" build -trimpath -o "$SRC_DIR/$BIN" \
    -ldflags "-s -w -X $v.gitVersion=v1.${upstream#0.} -X $v.gitMajor=1 -X $v.gitMinor=${SERIES#0.} -X $v.gitTreeState=clean" . >&2
)
log "compiled in $(( $(date +%s) - t_build )) s"
mkdir -p "$BIN_DIR"
install -m 0755 "$SRC_DIR/$BIN" "$BIN_DIR/$BIN"
{ echo "$ROOT_PKG $version"; echo "go $("$GOROOT_DIR/bin/go" version | awk '{print $3}')"; echo "suite $SUITE"
  echo "# every package the build used: name version sha256-of-.deb"; cat "$SRC_DIR/PACKAGES"; } > "$BIN_DIR/VERSION"
(cd "$BIN_DIR" && sha256sum "$BIN" VERSION > SHA256SUMS)
rm -f "$BIN_DIR/.verified"
rm -rf "$CACHE_ROOT/src/gocache-apiextensions"   # 1.4 GB, needed again only for another release
verify_cache || die "freshly built $BIN failed verification"
log "$BIN ready in $BIN_DIR ($(( $(date +%s) - t_start )) s in all)"
echo "$BIN_DIR"
