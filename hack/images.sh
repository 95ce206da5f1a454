#!/usr/bin/env bash
# Inputs of the container images that do not come from Maven, made offline from this machine's JDK:
#
#   hack/images.sh prepare <dir>   -> <dir>/jre       a jlinked Java runtime (goes into both images at /opt/java)
#                                     <dir>/base.tar  the CI base image: only the shared libraries that runtime needs
#                                                     (ldd closure, Debian's glibc etc.), /etc/passwd with the
#                                                     non-root user 1000, /tmp; docker-save format, which Jib reads
#                                                     with from.image=tar://<dir>/base.tar (no registry, no daemon)
#   hack/images.sh build [mvn args] -> runtime-image/target/jib-image.tar and operator/target/jib-image.tar
#                                     (mvn package with the images profile; offline when you pass -o)
#
# The JRE and base are cached under ${TENSORLANE_CACHE:-~/.cache/tensorlane}/image-inputs/<key>, keyed by the
# JDK release, the module list and this script, so a second build takes a second. Production images use a
# registry base instead (-Dtensorlane.image.base.runtime=..., see runtime-image/pom.xml): the JRE layer is the same.
set -euo pipefail

# Modules of the jlinked runtime. Everything the runtime (fabric8 client, JNA, JCuda, picocli, Micrometer) and
# the Quarkus operator load (jdk.httpserver: serve's health and metrics endpoints); java.desktop for java.beans, which the
# chat-template engine (Jinjava) needs, with its AWT/sound/imaging native libraries excluded (no X11 libraries come in).
MODULES=java.base,java.logging,java.management,java.naming,java.net.http,java.sql,java.xml,java.scripting,\
java.security.jgss,java.security.sasl,java.instrument,java.compiler,java.prefs,jdk.crypto.ec,jdk.crypto.cryptoki,\
jdk.management,jdk.net,jdk.unsupported,jdk.zipfs,jdk.naming.dns,jdk.httpserver,java.desktop
# java.desktop's native libraries (AWT, fonts, sound, imaging): java.beans needs none of them
DESKTOP_NATIVES='glob:/java.desktop/lib/*'
IMAGE_UID=1000
IMAGE_GID=1000

CLEANUP=()
trap 'for d in "${CLEANUP[@]}"; do rm -rf "$d"; done' EXIT
log() { echo "[images] $*" >&2; }
die() { echo "[images] ERROR: $*" >&2; exit 1; }

find_jdk() {
  local jdk="${TENSORLANE_JDK:-}" javac
  if [ -z "$jdk" ] && javac=$(command -v javac); then
    jdk=$(dirname "$(dirname "$(readlink -f "$javac")")")
    [ -d "$jdk/jmods" ] || jdk=""
  fi
  if [ -z "$jdk" ]; then
    for cand in /usr/lib/jvm/java-17-openjdk-*; do [ -d "$cand/jmods" ] && { jdk=$cand; break; }; done
  fi
  [ -n "$jdk" ] && [ -d "$jdk/jmods" ] || die "no JDK with jmods/ found (Debian: apt-get install openjdk-17-jdk-headless, \
or run hack/test-deps.sh; or set TENSORLANE_JDK to a JDK 17 home)"
  echo "$jdk"
}

make_jre() { # <jdk> <out>
  local jdk=$1 out=$2
  rm -rf "$out"
  "$jdk/bin/jlink" --module-path "$jdk/jmods" --add-modules "$MODULES" --strip-debug --no-man-pages \
    --no-header-files --compress=2 --exclude-files="$DESKTOP_NATIVES" --output "$out" >&2
  # Debian's JDK links legal notices and the CA store to /etc: keep the content, not the links.
  find "$out" -type l | while read -r l; do cp --remove-destination "$(readlink -f "$l")" "$l"; done
  "$out/bin/java" -version >/dev/null 2>&1 || die "jlinked runtime in $out does not start"
}

# Copies a host library into the rootfs under the same path, following links, and keeps its soname link.
copy_lib() { # <path as ldd printed it> <rootfs>
  local p=$1 root=$2 real
  real=$(readlink -f "$p")
  # merged /usr: /lib and /lib64 are links to usr/lib*, so always store below usr/
  local dest=$p
  case "$dest" in /lib/*|/lib64/*) dest=/usr$dest ;; esac
  mkdir -p "$root$(dirname "$dest")"
  [ -e "$root$dest" ] || cp "$real" "$root$dest"
}

make_base() { # <jre> <out.tar>
  local jre=$1 out=$2 work
  work=$(mktemp -d); CLEANUP+=("$work")
  local root=$work/rootfs
  mkdir -p "$root"/{usr/lib/x86_64-linux-gnu,usr/lib64,etc,tmp,dev,proc,sys,home/tensorlane,opt}
  ln -s usr/lib "$root/lib"; ln -s usr/lib64 "$root/lib64"; ln -s usr/bin "$root/bin"; mkdir -p "$root/usr/bin"
  chmod 1777 "$root/tmp"
  # every shared library the runtime's executables and JNI libraries load (JNA/JCuda natives need libc,
  # libstdc++ and libgcc_s; name resolution dlopens the NSS modules)
  local libs
  libs=$( { find "$jre" -type f \( -name '*.so' -o -path '*/bin/*' -o -name jspawnhelper -o -name jexec \) \
              -exec ldd {} \; 2>/dev/null || true; } | awk '/=> \//{print $3} /^\t\/lib/{print $1}' | grep -v "^$jre/" | sort -u)
  [ -n "$libs" ] || die "ldd found no libraries for $jre"
  for extra in libstdc++.so.6 libgcc_s.so.1 libnss_files.so.2 libnss_dns.so.2 libresolv.so.2; do
    local hit; hit=$(ldconfig -p | awk -v n="$extra" '$1==n && /x86-64/ && !f {print $NF; f=1}')
    [ -n "$hit" ] && libs="$libs"$'\n'"$hit"
  done
  while read -r lib; do [ -n "$lib" ] && copy_lib "$lib" "$root"; done <<< "$libs"
  [ -e "$root/usr/lib64/ld-linux-x86-64.so.2" ] || die "the dynamic loader was not collected"
  printf 'root:x:0:0:root:/root:/sbin/nologin\ntensorlane:x:%s:%s:tensorlane:/home/tensorlane:/sbin/nologin\n' \
    "$IMAGE_UID" "$IMAGE_GID" > "$root/etc/passwd"
  printf 'root:x:0:\ntensorlane:x:%s:\n' "$IMAGE_GID" > "$root/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' > "$root/etc/nsswitch.conf"
  chown "$IMAGE_UID:$IMAGE_GID" "$root/home/tensorlane" 2>/dev/null || true
  # one layer, reproducible (sorted, fixed times and owners)
  local layer=$work/layer.tar
  tar --sort=name --mtime='@0' --owner=0 --group=0 --numeric-owner -C "$root" -cf "$layer" .
  local diff_id; diff_id=$(sha256sum "$layer" | cut -d' ' -f1)
  mkdir -p "$work/img"
  mv "$layer" "$work/img/$diff_id.tar"
  jq -n --arg d "sha256:$diff_id" '{
      architecture: "amd64", os: "linux", created: "1970-01-01T00:00:00Z",
      config: { Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"] },
      rootfs: { type: "layers", diff_ids: [$d] },
      history: [ { created: "1970-01-01T00:00:00Z", created_by: "hack/images.sh: ldd closure of the jlinked JRE" } ]
    }' > "$work/img/config.json"
  jq -n --arg l "$diff_id.tar" '[{ Config: "config.json", RepoTags: ["tensorlane/ci-base:local"], Layers: [$l] }]' \
    > "$work/img/manifest.json"
  tar --mtime='@0' --owner=0 --group=0 --numeric-owner -C "$work/img" -cf "$out.tmp" \
    manifest.json config.json "$diff_id.tar"
  mv "$out.tmp" "$out"
  rm -rf "$work"
}

prepare() { # <dir>
  local dir=$1 jdk key cache
  jdk=$(find_jdk)
  command -v jq >/dev/null || die "jq is needed (apt-get install jq, or run hack/test-deps.sh)"
  key=$( { "$jdk/bin/java" -version 2>&1; echo "$MODULES $IMAGE_UID"; cat "$0"; ldd --version 2>&1 | sed -n 1p; } \
         | sha256sum | cut -c1-16)
  cache="${TENSORLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tensorlane}/image-inputs/$key"
  if [ ! -f "$cache/.done" ]; then
    log "making the jlinked runtime and the CI base image (once per JDK; cache $cache)"
    rm -rf "$cache"; mkdir -p "$cache"
    make_jre "$jdk" "$cache/jre"
    make_base "$cache/jre" "$cache/base.tar"
    touch "$cache/.done"
  fi
  mkdir -p "$dir"
  rm -rf "$dir/jre" "$dir/base.tar"
  cp -a "$cache/jre" "$dir/jre"
  cp "$cache/base.tar" "$dir/base.tar"
  log "ready: $dir/jre ($(du -sh "$dir/jre" | cut -f1)), $dir/base.tar ($(du -h "$dir/base.tar" | cut -f1))"
}

case "${1:-}" in
  prepare) [ $# -eq 2 ] || die "usage: hack/images.sh prepare <dir>"; prepare "$2" ;;
  build)
    shift
    cd "$(dirname "$0")/.."
    mvn -B -q -pl runtime-image,operator -am package -DskipTests -Ptensorlane-images "$@"
    ls -l runtime-image/target/jib-image.tar operator/target/jib-image.tar >&2 ;;
  *) die "usage: hack/images.sh prepare <dir> | build [maven args]" ;;
esac
