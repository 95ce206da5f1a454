#!/usr/bin/env bash
# On the GPU machine: unpacks .device/bundle.tar.xz (from scripts/device-prepare.sh) into .device/jre and .device/app,
# once per bundle. Every GPU script runs it before it uses .device/jre.
set -euo pipefail
cd "$(dirname "$0")/../.."
b=.device/bundle.tar.xz
[ -f "$b" ] || { echo "device-unpack: $b missing: run runtime-image/scripts/device-prepare.sh here and carry .device" >&2; exit 2; }
if [ ! -f .device/.unpacked ] || [ "$b" -nt .device/.unpacked ]; then
  rm -rf .device/jre .device/app
  xz -dc "$b" | tar -C .device -xf -
  touch .device/.unpacked
fi
