// One-token GEMVs with the residual stream folded in (decode steps of one token on one rank), for dense weights T
// and FP8 weights (the scale layouts of tl_fp8.cuh):
//   tl_gemv_norm[_fp8_*]:      y[o] = T(w[o] . x), x = RMSNorm(r) * gamma computed by every block into shared memory
//   tl_gemv_norm_silu[_fp8_*]: the same x; w a fused gate/up weight [2 inter, in]; y[j] = T(silu(T(g)) * T(u)) with
//                              g = w[j] . x, u = w[inter + j] . x (the arithmetic of tl_silu_mul)
//   tl_gemv_res[_fp8_*]:       r[o] += float(T(w[o] . x)), x in global memory: the linear and the residual add of
//                              tl_add_rmsnorm's mode 1 in one kernel
// A batch-1 decode step is latency-bound outside its weight reads: folding the residual add into the linear that
// produces it (o, down), the RMSNorm into the linear that consumes it (qkv, gate_up) and silu into gate_up removes
// three kernels a layer. Bits: the norm is tlnorm::add_rmsnorm_row in mode 2 on a block of 512 threads, as
// tl_add_rmsnorm computes it, and each dot product is the one-warp-per-row kernel's (tl_gemv, tl_gemv1_fp8_*: the
// same lane order, scale arithmetic and warp sum), so each fused kernel gives the bits of the kernels it replaces
// (kernelcheck compares them bit for bit).
// Included by tl_model.cu after tl_gemv and tl_fp8.cuh (ld_stream, ld_x, tl_gemv_dot, Cv, dot16, unpack16).
// Requires: in % 8 == 0 (T) or % 16 == 0 (FP8); in <= kFuseMaxIn for the norm kernels; x, w 16-byte aligned.
// Launch: norm kernels block kFuseThreads, any grid (rows strided over it; the caller takes
// min(ceil(rows / kFuseWarps), 2 x multiprocessors)); res kernels grid ceil(out / kGemvWarps), block kGemvWarps * 32.
#pragma once

namespace tlfuse {

constexpr int kFuseThreads = 512;
constexpr int kFuseWarps = kFuseThreads / 32;
constexpr int kFuseMaxIn = 8192;  // the staged x: 16 KB of bf16

// w[row, :] . x for an FP8 row, summed over the warp, times the row's scale: tl_gemv1_fp8_*'s arithmetic (gemv_fp8
// with NT 1: chunk c of 16 weights scaled per 128-column block with an fma, per row after the warp sum).
template <typename T, bool BLOCK, bool XS>
__device__ __forceinline__ float fp8_dot1(const T* x, const uint8_t* w, const float* scale, int row, int in,
                                          int row_block) {
  constexpr int U = 8;
  const int lane = threadIdx.x & 31;
  const uint4* wr = reinterpret_cast<const uint4*>(w + (long long)row * in);
  const uint4* xr = reinterpret_cast<const uint4*>(x);
  const int chunks = in >> 4;
  const float* srow =
      BLOCK ? scale + (long long)(row / row_block) * ((in + tlfp8::kFp8Block - 1) / tlfp8::kFp8Block) : scale;
  float acc = 0.0f;
  auto consume = [&](const uint4 wv, int c) {
    float wf[16];
    tlfp8::unpack16(wv, wf);
    const float d = tlfp8::dot16<T>(wf, ld_x<XS>(xr + 2 * c), ld_x<XS>(xr + 2 * c + 1));
    acc = BLOCK ? fmaf(srow[c >> 3], d, acc) : acc + d;
  };
  int c = lane;
  for (; c + 32 * (U - 1) < chunks; c += 32 * U) {
    uint4 wv[U];
#pragma unroll
    for (int u = 0; u < U; ++u) wv[u] = ld_stream(wr + c + 32 * u);
#pragma unroll
    for (int u = 0; u < U; ++u) consume(wv[u], c + 32 * u);
  }
  for (; c < chunks; c += 32) consume(ld_stream(wr + c), c);
  const float v = warp_sum(acc);
  return BLOCK ? v : v * scale[row];
}

// The row dot products the kernels take: dense T, or FP8 with its scales. Every entry takes (w, scale, row_block);
// the dense ones ignore the last two.
template <typename T>
struct DenseRows {
  static constexpr int kBytes = sizeof(T);                 // bytes a weight
  static constexpr int kPrefetch = 32 * kGemvUnroll * 16;  // a warp's first loads of its row (tl_gemv_dot)
  const T* w;
  __device__ DenseRows(const void* w_, const float*, int) : w(static_cast<const T*>(w_)) {}
  template <bool XS>
  __device__ __forceinline__ float dot(const T* x, int row, int in) const {
    return tl_gemv_dot<T, kGemvUnroll, XS>(x, w, row, in);
  }
};
template <typename T, bool BLOCK>
struct Fp8Rows {
  static constexpr int kBytes = 1;
  static constexpr int kPrefetch = 32 * 8 * 16;  // fp8_dot1: U = 8 16-byte loads a lane
  const uint8_t* w;
  const float* scale;
  int row_block;
  __device__ Fp8Rows(const void* w_, const float* s, int rb) : w(static_cast<const uint8_t*>(w_)), scale(s), row_block(rb) {}
  template <bool XS>
  __device__ __forceinline__ float dot(const T* x, int row, int in) const {
    return fp8_dot1<T, BLOCK, XS>(x, w, scale, row, in, row_block);
  }
};
template <typename T>
using Fp8BlockRows = Fp8Rows<T, true>;
template <typename T>
using Fp8RowRows = Fp8Rows<T, false>;

// x = RMSNorm(r) * gamma into shared memory by the whole block, then rows strided over the grid, a warp each.
template <typename T, bool SILU, typename Rows>
__device__ __forceinline__ void gemv_norm(const float* r, const T* gamma, float eps, const Rows rows_of, T* y,
                                          int in, int rows) {
  __shared__ __align__(16) T xs[kFuseMaxIn];
  __shared__ float red[32];
  tlnorm::add_rmsnorm_row<T>(const_cast<float*>(r), nullptr, gamma, xs, in, eps, 2, red);  // mode 2: r only read
  __syncthreads();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  for (int row = blockIdx.x * kFuseWarps + warp; row < rows; row += gridDim.x * kFuseWarps) {
    if (SILU) {
      const float g = Cv<T>::f(Cv<T>::t(rows_of.template dot<true>(xs, row, in)));
      const float u = Cv<T>::f(Cv<T>::t(rows_of.template dot<true>(xs, rows + row, in)));
      if (lane == 0) y[row] = Cv<T>::t(g / (1.0f + expf(-g)) * u);
    } else {
      const float acc = rows_of.template dot<true>(xs, row, in);
      if (lane == 0) y[row] = Cv<T>::t(acc);
    }
  }
}

// r[o] += float(T(w[o] . x)), a warp a row.
template <typename T, typename Rows>
__device__ __forceinline__ void gemv_res(const T* x, const Rows rows_of, float* r, int in, int out) {
  const int row = blockIdx.x * kGemvWarps + (threadIdx.x >> 5);
  if (row >= out) return;
  const float acc = rows_of.template dot<false>(x, row, in);
  if ((threadIdx.x & 31) == 0) r[row] = r[row] + Cv<T>::f(Cv<T>::t(acc));
}

}  // namespace tlfuse

// Entries (instantiated per model dtype in tl_model.cu's TL_MODEL_ENTRIES): w is T (dense) or e4m3 (FP8, with
// scale and row_block as in tl_fp8.cuh; the dense entries ignore them).
#define TL_FUSE_ROWS_ENTRIES(SUF, T, NAME, ROWS)                                                                   \
  extern "C" __global__ void __launch_bounds__(tlfuse::kFuseThreads) tl_gemv_norm##NAME##_##SUF(                   \
      const float* r, const T* gamma, float eps, const void* w, const float* scale, int row_block, T* y, int in,    \
      int out) {                                                                                                   \
    tlpdl::prefetch_warp_row(w, (long long)in * ROWS::kBytes, out, tlfuse::kFuseWarps, ROWS::kPrefetch);           \
    tlpdl::enter();                                                                                                \
    tlfuse::gemv_norm<T, false>(r, gamma, eps, ROWS(w, scale, row_block), y, in, out);                             \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(tlfuse::kFuseThreads) tl_gemv_norm_silu##NAME##_##SUF(              \
      const float* r, const T* gamma, float eps, const void* w, const float* scale, int row_block, T* y, int in,    \
      int inter) {                                                                                                 \
    tlpdl::prefetch_warp_row(w, (long long)in * ROWS::kBytes, inter, tlfuse::kFuseWarps, ROWS::kPrefetch);         \
    tlpdl::enter();                                                                                                \
    tlfuse::gemv_norm<T, true>(r, gamma, eps, ROWS(w, scale, row_block), y, in, inter);                            \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32) tl_gemv_res##NAME##_##SUF(                         \
      const T* x, const void* w, const float* scale, int row_block, float* r, int in, int out) {                    \
    tlpdl::prefetch_warp_row(w, (long long)in * ROWS::kBytes, out, kGemvWarps, ROWS::kPrefetch);                    \
    tlpdl::enter();                                                                                                 \
    tlfuse::gemv_res<T>(x, ROWS(w, scale, row_block), r, in, out);                                                 \
  }

#define TL_FUSE_ENTRIES(SUF, T)                                  \
  TL_FUSE_ROWS_ENTRIES(SUF, T, , tlfuse::DenseRows<T>)           \
  TL_FUSE_ROWS_ENTRIES(SUF, T, _fp8_block, tlfuse::Fp8BlockRows<T>) \
  TL_FUSE_ROWS_ENTRIES(SUF, T, _fp8_row, tlfuse::Fp8RowRows<T>)
