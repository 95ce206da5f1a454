// Residual add + RMSNorm of one row, and the block reductions it needs. Included by tl_model.cu (the kernel
// tl_add_rmsnorm_*) and by tl_allreduce.cu (tl_allreduce_rmsnorm_*, the allreduce fused with it): one body, so both
// give the same bits for the same inputs (kernelcheck compares them).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace tlnorm {

template <typename T>
struct Cv;
template <>
struct Cv<__nv_bfloat16> {
  __device__ __forceinline__ static float f(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ __forceinline__ static __nv_bfloat16 t(float v) { return __float2bfloat16_rn(v); }
};
template <>
struct Cv<__half> {
  __device__ __forceinline__ static float f(__half v) { return __half2float(v); }
  __device__ __forceinline__ static __half t(float v) { return __float2half_rn(v); }
};

template <typename T>
__device__ __forceinline__ float ld(const T* p, long long i) {
  return Cv<T>::f(p[i]);
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Sum over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the result.
// `red` is shared scratch of 32 floats; the call begins and ends with a barrier so `red` may be reused.
__device__ __forceinline__ float block_sum(float v, float* red) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_sum(v);
  __syncthreads();
  if (lane == 0) red[warp] = v;
  __syncthreads();
  float r = lane < warps ? red[lane] : 0.0f;
  return warp_sum(r);
}

// One row: r [hidden] fp32 (in/out), d [hidden] T (unused in mode 2), weight [hidden] T, o [hidden] T.
//   mode 0: r = float(d); mode 1: r += float(d); mode 2: r unchanged;
// then o[j] = T(weight[j] * r[j] * rsqrt(mean_j(r[j]^2) + eps)) (that value as fp32 where O is float). Called by every
// thread of the block (block_sum).
// One pass over memory for hidden <= CACHE x blockDim (8192 at block 512 with the default 16): a thread's residual and
// weight elements stay in registers across the reduction (all its loads are issued at once; a decode step is
// latency-bound here); elements beyond that are re-read. Every thread visits its elements j = threadIdx.x + k * blockDim
// in increasing k in both parts, so CACHE changes the registers used, never the bits.
// O: the output's element type, T, or float for T's value as fp32 (the fused one-token linears stage their x so).
template <typename T, typename O>
struct Store {
  __device__ __forceinline__ static O v(float x) { return Cv<T>::t(x); }
};
template <typename T>
struct Store<T, float> {
  __device__ __forceinline__ static float v(float x) { return Cv<T>::f(Cv<T>::t(x)); }
};
constexpr int kNormCache = 16;
template <typename T, int CACHE = kNormCache, typename O = T>
__device__ __forceinline__ void add_rmsnorm_row(float* r, const T* d, const T* weight, O* o, int hidden, float eps,
                                                int mode, float* red) {
  const int bd = blockDim.x;
  float cv[CACHE], cw[CACHE];
  float ss = 0.0f;
#pragma unroll
  for (int k = 0; k < CACHE; ++k) {
    const int j = threadIdx.x + k * bd;
    cv[k] = 0.0f;
    cw[k] = 0.0f;
    if (j < hidden) {
      const float base = mode == 0 ? 0.0f : r[j];
      cv[k] = mode == 2 ? base : base + ld(d, j);
      cw[k] = ld(weight, j);
    }
  }
#pragma unroll
  for (int k = 0; k < CACHE; ++k) {
    const int j = threadIdx.x + k * bd;
    if (j < hidden) {
      if (mode != 2) r[j] = cv[k];
      ss += cv[k] * cv[k];
    }
  }
  for (int j = threadIdx.x + CACHE * bd; j < hidden; j += bd) {
    float v = mode == 0 ? ld(d, j) : mode == 1 ? r[j] + ld(d, j) : r[j];
    if (mode != 2) r[j] = v;
    ss += v * v;
  }
  const float inv = rsqrtf(block_sum(ss, red) / (float)hidden + eps);
#pragma unroll
  for (int k = 0; k < CACHE; ++k) {
    const int j = threadIdx.x + k * bd;
    if (j < hidden) o[j] = Store<T, O>::v(cw[k] * (cv[k] * inv));
  }
  // Each thread re-reads only the residual elements it wrote itself: no barrier needed.
  for (int j = threadIdx.x + CACHE * bd; j < hidden; j += bd) o[j] = Store<T, O>::v(ld(weight, j) * (r[j] * inv));
}

}  // namespace tlnorm
