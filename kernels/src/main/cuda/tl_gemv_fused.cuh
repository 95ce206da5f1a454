// One-token GEMVs with the residual stream folded in (decode steps of one token on one rank; dense weights T):
//   tl_gemv_norm:      y[o] = T(w[o] . x) with x = RMSNorm(r) * gamma computed by every block into shared memory
//   tl_gemv_norm_silu: the same x; w is a fused gate/up weight [2 inter, in]; y[j] = T(silu(T(g_j)) * T(u_j)) with
//                      g_j = w[j] . x, u_j = w[inter + j] . x (the arithmetic of tl_silu_mul)
//   tl_gemv_res:       r[o] += float(T(w[o] . x)) (x in global memory, as tl_gemv): the residual add of the next norm
// A batch-1 decode step is latency-bound outside its weight reads: folding the residual add into the linear that
// produces it (o, down) and the RMSNorm into the linear that consumes it (qkv, gate_up), and silu into gate_up,
// removes three kernels a layer (two add+RMSNorms and silu). Bits: the norm is tlnorm::add_rmsnorm_row in mode 2 on
// a block of 512 threads, as tl_add_rmsnorm computes it; the dot products are tl_gemv's (the same lane order and
// warp sum), so each fused kernel gives the bits of the kernels it replaces (kernelcheck compares them).
// Included by tl_model.cu after tl_gemv (ld_stream, ld_readonly, dot8, Cv, Pair).
// Requires: in % 8 == 0, in <= kFuseMaxIn (norm kernels), x, w, r 16-byte aligned.
// Launch: norm kernels block kFuseThreads (512), any grid (rows are strided over it; the caller takes
// min(ceil(rows / 16), 2 x multiprocessors)); tl_gemv_res as tl_gemv (grid ceil(out / kGemvWarps), block 256).
#pragma once

namespace tlfuse {

constexpr int kFuseThreads = 512;
constexpr int kFuseWarps = kFuseThreads / 32;
constexpr int kFuseMaxIn = 8192;  // the staged x: 16 KB of bf16
constexpr int kFuseUnroll = 4;

// Two rows at once (gate j and up j): both rows' loads in flight together, each row's sum in tl_gemv's order.
template <typename T, int U>
__device__ __forceinline__ float2 dot_rows2(const T* w, const T* xs, int ra, int rb, int in) {
  const int lane = threadIdx.x & 31;
  const uint4* wa = reinterpret_cast<const uint4*>(w + (long long)ra * in);
  const uint4* wb = reinterpret_cast<const uint4*>(w + (long long)rb * in);
  const uint4* xr = reinterpret_cast<const uint4*>(xs);
  const int chunks = in >> 3;
  float acc_a = 0.0f, acc_b = 0.0f;
  int c = lane;
  for (; c + 32 * (U - 1) < chunks; c += 32 * U) {
    uint4 av[U], bv[U], xv[U];
#pragma unroll
    for (int u = 0; u < U; ++u) av[u] = ld_stream(wa + c + 32 * u);
#pragma unroll
    for (int u = 0; u < U; ++u) bv[u] = ld_stream(wb + c + 32 * u);
#pragma unroll
    for (int u = 0; u < U; ++u) xv[u] = xr[c + 32 * u];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      acc_a = dot8<T>(av[u], xv[u], acc_a);
      acc_b = dot8<T>(bv[u], xv[u], acc_b);
    }
  }
  for (; c < chunks; c += 32) {
    const uint4 xv = xr[c];
    acc_a = dot8<T>(ld_stream(wa + c), xv, acc_a);
    acc_b = dot8<T>(ld_stream(wb + c), xv, acc_b);
  }
  return make_float2(warp_sum(acc_a), warp_sum(acc_b));
}

// x = RMSNorm(r) * gamma into xs (every thread of the block; ends with a barrier so xs is complete).
template <typename T>
__device__ __forceinline__ void stage_norm(const float* r, const T* gamma, float eps, T* xs, int in, float* red) {
  tlnorm::add_rmsnorm_row<T>(const_cast<float*>(r), nullptr, gamma, xs, in, eps, 2, red);
  __syncthreads();
}

template <typename T, bool SILU>
__device__ __forceinline__ void gemv_norm(const float* r, const T* gamma, float eps, const T* w, T* y, int in,
                                          int rows) {
  __shared__ __align__(16) T xs[kFuseMaxIn];
  __shared__ float red[32];
  stage_norm<T>(r, gamma, eps, xs, in, red);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  for (int row = blockIdx.x * kFuseWarps + warp; row < rows; row += gridDim.x * kFuseWarps) {
    if (SILU) {
      const float2 gu = dot_rows2<T, kFuseUnroll>(w, xs, row, rows + row, in);
      if (lane == 0) {
        const float g = Cv<T>::f(Cv<T>::t(gu.x)), u = Cv<T>::f(Cv<T>::t(gu.y));
        y[row] = Cv<T>::t(g / (1.0f + expf(-g)) * u);
      }
    } else {
      const float acc = tl_gemv_dot<T, kFuseUnroll, true>(xs, w, row, in);
      if (lane == 0) y[row] = Cv<T>::t(acc);
    }
  }
}

// r[o] += float(T(w[o] . x)): tl_gemv, then the residual add of tl_add_rmsnorm's mode 1, in one kernel.
template <typename T>
__device__ __forceinline__ void gemv_res(const T* x, const T* w, float* r, int in, int out) {
  const int row = blockIdx.x * kGemvWarps + (threadIdx.x >> 5);
  if (row >= out) return;
  const float acc = tl_gemv_dot<T, kGemvUnroll>(x, w, row, in);
  if ((threadIdx.x & 31) == 0) r[row] = r[row] + Cv<T>::f(Cv<T>::t(acc));
}

}  // namespace tlfuse
