#!/usr/bin/env bash
# Builds the kernels' fatbin (called by the kernels module's Maven build; usable by hand).
#   build-fatbin.sh <output.fatbin> <skip:true|false>
# One fatbin: SASS for sm_80, sm_86, sm_89, sm_90, sm_100, sm_120 plus compute_90 PTX (forward compatibility).
# Rebuilds only when a source under this folder is newer than the output.
set -euo pipefail
out=$1
skip=${2:-false}
here=$(cd "$(dirname "$0")" && pwd)
if [[ "$skip" == "true" ]]; then
  echo "[WARNING] ************************************************************************" >&2
  echo "[WARNING] tensorlane.skipNvcc is set: the CUDA kernels are NOT compiled; the jar has no fatbin" >&2
  echo "[WARNING] and the engine cannot run allreduce kernels. Never ship such a build." >&2
  echo "[WARNING] ************************************************************************" >&2
  exit 0
fi
NVCC=${NVCC:-$(command -v nvcc || true)}
[[ -z "$NVCC" && -x /usr/local/cuda/bin/nvcc ]] && NVCC=/usr/local/cuda/bin/nvcc
if [[ -z "$NVCC" ]]; then
  echo "ERROR: nvcc not found (PATH, \$NVCC, /usr/local/cuda/bin). The kernels module compiles CUDA ahead of time;" >&2
  echo "ERROR: install the CUDA toolkit (nvcc 13) or build with -Dtensorlane.skipNvcc (no kernels in the jar)." >&2
  exit 2
fi
if [[ -f "$out" ]] && [[ -z "$(find "$here" -newer "$out" -type f \( -name '*.cu' -o -name '*.cuh' -o -name '*.sh' \))" ]]; then
  echo "fatbin up to date: $out"
  exit 0
fi
mkdir -p "$(dirname "$out")"
arches=(80 86 89 90 100 120)
gencode=()
for a in "${arches[@]}"; do gencode+=(-gencode "arch=compute_$a,code=sm_$a"); done
gencode+=(-gencode "arch=compute_90,code=compute_90")
echo "nvcc: $("$NVCC" --version | tail -1)"
"$NVCC" -std=c++17 -O3 -fatbin "${gencode[@]}" -Xptxas -warn-spills -o "$out.tmp" "$here/tl_allreduce.cu"
mv "$out.tmp" "$out"
echo "wrote $out ($(stat -c %s "$out") bytes) for sm_${arches[*]} + compute_90"
