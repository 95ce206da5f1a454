#!/usr/bin/env bash
# Installs, idempotently, every Debian package the tests need (beyond the JDK, Maven and kubectl of the machine).
# Run as root (or with password-less sudo) before the test command on a fresh machine. Safe to run again:
# it only calls apt-get when something is missing.
#   lua5.4, lua5.1 - run the Argo CD health check (manifests/argocd/health.lua) in its table-driven tests
#                    (Argo CD itself runs gopher-lua, a Lua 5.1 dialect: both interpreters must agree)
#   jq             - hack/images.sh writes the CI base image's config, hack/image-smoke.sh reads image manifests
#   openjdk-17-jdk-headless - jlink and jmods (Debian ships them there): hack/images.sh jlinks the Java runtime that goes into both images
#   tar            - hack/image-smoke.sh unpacks image layers (normally present)
set -euo pipefail

PKGS=(lua5.4 lua5.1 jq openjdk-17-jdk-headless tar)
need=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [ ${#need[@]} -eq 0 ]; then
  echo "[test-deps] all present: ${PKGS[*]}" >&2
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO="sudo -n"
  else echo "[test-deps] ERROR: not root; install these yourself: ${need[*]}" >&2; exit 1; fi
fi
echo "[test-deps] installing ${need[*]}" >&2
$SUDO apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
echo "[test-deps] installed ${need[*]}" >&2
