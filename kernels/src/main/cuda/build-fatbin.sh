#!/usr/bin/env bash
# Builds the kernels' fatbins (called by the kernels module's Maven build; usable by hand).
#   build-fatbin.sh <output.fatbin> <skip:true|false>
# Two fatbins, each with SASS for sm_80, sm_86, sm_89, sm_90 (sm_90a for the model kernels), sm_100, sm_120 plus
# compute_90 PTX (forward compatibility):
#   <output.fatbin>                       from tl_allreduce.cu (the custom allreduce)
#   tl_model.fatbin next to <output>      from tl_model.cu (the decoder's forward-pass kernels)
# Each is rebuilt only when a source under this folder is newer than it.
set -euo pipefail
out=$1
skip=${2:-false}
here=$(cd "$(dirname "$0")" && pwd)
if [[ "$skip" == "true" ]]; then
  echo "[WARNING] ************************************************************************" >&2
  echo "[WARNING] tensorlane.skipNvcc is set: the CUDA kernels are NOT compiled; the jar has no fatbins" >&2
  echo "[WARNING] and the engine cannot run its allreduce or model kernels. Never ship such a build." >&2
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
arches=(80 86 89 90 100 120)
# gencode <suffix of sm_90's SASS>: "" for sm_90, "a" for sm_90a (the model kernels: Hopper's warpgroup MMA, which only
# sm_90a code may use; that SASS runs on every compute capability 9.0 GPU, H100 and H200)
gencode() {
  local a
  for a in "${arches[@]}"; do
    if [[ $a == 90 ]]; then echo "-gencode arch=compute_90$1,code=sm_90$1"; else echo "-gencode arch=compute_$a,code=sm_$a"; fi
  done
  echo "-gencode arch=compute_90,code=compute_90"
}
echo "nvcc: $("$NVCC" --version | tail -1)"

# build <source.cu> <output.fatbin> <sm_90 suffix>
build() {
  local src=$1 dst=$2
  local gencode
  read -r -d '' -a gencode < <(gencode "$3") || true
  if [[ -f "$dst" ]] && [[ -z "$(find "$here" -newer "$dst" -type f \( -name '*.cu' -o -name '*.cuh' -o -name '*.sh' \))" ]]; then
    echo "fatbin up to date: $dst"
    return 0
  fi
  mkdir -p "$(dirname "$dst")"
  "$NVCC" -std=c++17 -O3 -fatbin "${gencode[@]}" -Xptxas -warn-spills -o "$dst.tmp" "$here/$src"
  mv "$dst.tmp" "$dst"
  echo "wrote $dst ($(stat -c %s "$dst") bytes) for sm_${arches[*]} (sm_90$3) + compute_90"
}

build tl_allreduce.cu "$out" ""
build tl_model.cu "$(dirname "$out")/tl_model.fatbin" a
