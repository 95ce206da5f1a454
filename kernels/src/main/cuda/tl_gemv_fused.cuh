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

// Variants of the kernels' inner loop (V, a set of these bits; io.tensorlane.runtime.llm.FusedGemvVariant picks one):
// kPipe and kXf32 keep every bit of the base loop (the same products, summed in the same order); kBits may differ from
// it where a partial sum falls below fp32's normal range (2^-126 after the 2^-120 below), and decodes e4m3's NaN codes
// (0x7f, 0xff; no checkpoint stores them) as finite numbers.
constexpr int kPipe = 1;  // the next group of a lane's weight loads is issued before the current group is consumed
constexpr int kXf32 = 2;  // norm kernels: x staged in shared memory as fp32 (T's exact values): no conversion a row
constexpr int kBits = 4;  // FP8: e4m3 -> fp32 by integer operations, times 2^-120 (folded into the scales)

template <typename T, bool F>
struct StagedX {
  using type = T;
};
template <typename T>
struct StagedX<T, true> {
  using type = float;
};

// Byte i of u (e4m3) as fp32 times 2^-120, exactly: the sign to bit 31, exponent and mantissa to bits 26..20 (fp32's
// bias 127 against e4m3's 7; e4m3's subnormals land on fp32's).
__device__ __forceinline__ float e4m3_scaled(uint32_t u, int i) {
  const int t = (int)(u << (24 - 8 * i));
  return __int_as_float((t >> 4) & (int)0x87F00000);
}

// 16 e4m3 weights (one 16-byte chunk) -> 16 floats: exact (BITS false) or exact times 2^-120 (BITS true).
template <bool BITS>
__device__ __forceinline__ void decode16(const uint4 v, float* f) {
  if (BITS) {
    const uint32_t u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
      for (int b = 0; b < 4; ++b) f[4 * i + b] = e4m3_scaled(u[i], b);
    }
  } else {
    tlfp8::unpack16(v, f);
  }
}

// x[E * c .. E * c + E) as floats: x in T (global memory or shared, XS) or staged as fp32 in shared memory.
template <typename T, bool XS, int E>
__device__ __forceinline__ void x_of(const T* x, int c, float* f) {
  const uint4* p = reinterpret_cast<const uint4*>(x) + (E / 8) * c;
#pragma unroll
  for (int h = 0; h < E / 8; ++h) {
    const uint4 v = ld_x<XS>(p + h);
    const uint32_t u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 q = Pair<T>::f(u[i]);
      f[8 * h + 2 * i] = q.x;
      f[8 * h + 2 * i + 1] = q.y;
    }
  }
}
template <typename T, bool XS, int E>
__device__ __forceinline__ void x_of(const float* x, int c, float* f) {
  const float4* p = reinterpret_cast<const float4*>(x) + (E / 4) * c;
#pragma unroll
  for (int h = 0; h < E / 4; ++h) {
    const float4 v = p[h];
    f[4 * h] = v.x;
    f[4 * h + 1] = v.y;
    f[4 * h + 2] = v.z;
    f[4 * h + 3] = v.w;
  }
}

// sum_j wf[j] * x[16 c + j] in dot16's order (elements 0 .. 15): x in T through dot16 itself (the base loop's exact
// instructions), or staged as fp32.
template <typename T, bool XS>
__device__ __forceinline__ float dot16x(const float* wf, const T* x, int c) {
  const uint4* p = reinterpret_cast<const uint4*>(x) + 2 * c;
  return tlfp8::dot16<T>(wf, ld_x<XS>(p), ld_x<XS>(p + 1));
}
template <typename T, bool XS>
__device__ __forceinline__ float dot16x(const float* wf, const float* x, int c) {
  float xf[16];
  x_of<T, XS, 16>(x, c, xf);
  float d = 0.0f;
#pragma unroll
  for (int j = 0; j < 16; ++j) d = fmaf(wf[j], xf[j], d);
  return d;
}

// A lane's pass over chunks lane, lane + 32, ... of a row (chunks 16 bytes): groups of U loads, then the rest one at
// a time, consume(chunk value, chunk index) called in chunk order. PIPE: while a group is consumed the next group's
// loads are in flight (two register sets, alternating).
template <int U, bool PIPE, typename F>
__device__ __forceinline__ void row_chunks(const uint4* wr, int chunks, F consume) {
  int c = threadIdx.x & 31;
  if (PIPE) {
    if (c + 32 * (U - 1) < chunks) {
      uint4 a[U], b[U];
#pragma unroll
      for (int u = 0; u < U; ++u) a[u] = ld_stream(wr + c + 32 * u);
      while (true) {
        bool more = c + 32 * (2 * U - 1) < chunks;
        if (more) {
#pragma unroll
          for (int u = 0; u < U; ++u) b[u] = ld_stream(wr + c + 32 * (U + u));
        }
#pragma unroll
        for (int u = 0; u < U; ++u) consume(a[u], c + 32 * u);
        c += 32 * U;
        if (!more) break;
        more = c + 32 * (2 * U - 1) < chunks;
        if (more) {
#pragma unroll
          for (int u = 0; u < U; ++u) a[u] = ld_stream(wr + c + 32 * (U + u));
        }
#pragma unroll
        for (int u = 0; u < U; ++u) consume(b[u], c + 32 * u);
        c += 32 * U;
        if (!more) break;
      }
    }
  } else {
    for (; c + 32 * (U - 1) < chunks; c += 32 * U) {
      uint4 wv[U];
#pragma unroll
      for (int u = 0; u < U; ++u) wv[u] = ld_stream(wr + c + 32 * u);
#pragma unroll
      for (int u = 0; u < U; ++u) consume(wv[u], c + 32 * u);
    }
  }
  for (; c < chunks; c += 32) consume(ld_stream(wr + c), c);
}

// w[row, :] . x for an FP8 row, summed over the warp, times the row's scale: tl_gemv1_fp8_*'s arithmetic (gemv_fp8
// with NT 1: chunk c of 16 weights scaled per 128-column block with an fma, per row after the warp sum). X: T, or
// float (x staged as fp32).
template <typename T, bool BLOCK, bool XS, int V, typename X>
__device__ __forceinline__ float fp8_dot1(const X* x, const uint8_t* w, const float* scale, int row, int in,
                                          int row_block) {
  constexpr bool BITS = (V & kBits) != 0;
  const uint4* wr = reinterpret_cast<const uint4*>(w + (long long)row * in);
  const float* srow =
      BLOCK ? scale + (long long)(row / row_block) * ((in + tlfp8::kFp8Block - 1) / tlfp8::kFp8Block) : scale;
  float acc = 0.0f;
  row_chunks<8, (V & kPipe) != 0>(wr, in >> 4, [&](const uint4 wv, int c) {
    float wf[16];
    decode16<BITS>(wv, wf);
    const float d = dot16x<T, XS>(wf, x, c);
    if (BLOCK) {
      const float s = srow[c >> 3];  // 8 chunks of 16 per 128-column block
      acc = fmaf(BITS ? s * 0x1p120f : s, d, acc);
    } else {
      acc += d;
    }
  });
  const float v = warp_sum(acc);
  return BLOCK ? v : (BITS ? v * 0x1p120f : v) * scale[row];
}

// w[row, :] . x for a dense row in T: tl_gemv_dot's arithmetic (one accumulator over the row's 8-element chunks in
// order), kGemvUnroll loads a group.
template <typename T, bool XS, int V, typename X>
__device__ __forceinline__ float dense_dot1(const X* x, const T* w, int row, int in) {
  const uint4* wr = reinterpret_cast<const uint4*>(w + (long long)row * in);
  float acc = 0.0f;
  row_chunks<kGemvUnroll, (V & kPipe) != 0>(wr, in >> 3, [&](const uint4 wv, int c) {
    float xf[8];
    x_of<T, XS, 8>(x, c, xf);
    const uint32_t u[4] = {wv.x, wv.y, wv.z, wv.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 q = Pair<T>::f(u[i]);
      acc = fmaf(q.x, xf[2 * i], acc);
      acc = fmaf(q.y, xf[2 * i + 1], acc);
    }
  });
  return warp_sum(acc);
}

// The row dot products the kernels take: dense T, or FP8 with its scales. Every entry takes (w, scale, row_block);
// the dense ones ignore the last two. X: the type of the norm kernels' staged x.
template <typename T, int V = 0>
struct DenseRows {
  static constexpr int kBytes = sizeof(T);                 // bytes a weight
  static constexpr int kPrefetch = 32 * kGemvUnroll * 16;  // a warp's first loads of its row (tl_gemv_dot)
  using X = typename StagedX<T, (V & kXf32) != 0>::type;
  const T* w;
  __device__ DenseRows(const void* w_, const float*, int) : w(static_cast<const T*>(w_)) {}
  template <bool XS, typename XT>
  __device__ __forceinline__ float dot(const XT* x, int row, int in) const {
    if (V == 0) return tl_gemv_dot<T, kGemvUnroll, XS>(reinterpret_cast<const T*>(x), w, row, in);
    return dense_dot1<T, XS, V>(x, w, row, in);
  }
};
template <typename T, bool BLOCK, int V = 0>
struct Fp8Rows {
  static constexpr int kBytes = 1;
  static constexpr int kPrefetch = 32 * 8 * 16;  // fp8_dot1: 8 16-byte loads a lane
  using X = typename StagedX<T, (V & kXf32) != 0>::type;
  const uint8_t* w;
  const float* scale;
  int row_block;
  __device__ Fp8Rows(const void* w_, const float* s, int rb) : w(static_cast<const uint8_t*>(w_)), scale(s), row_block(rb) {}
  template <bool XS, typename XT>
  __device__ __forceinline__ float dot(const XT* x, int row, int in) const {
    return fp8_dot1<T, BLOCK, XS, V>(x, w, scale, row, in, row_block);
  }
};
template <typename T, int V = 0>
using Fp8BlockRows = Fp8Rows<T, true, V>;
template <typename T, int V = 0>
using Fp8RowRows = Fp8Rows<T, false, V>;
// the variants' entries (TL_FUSE_ENTRIES: one macro argument each)
template <typename T>
using DenseRowsP = DenseRows<T, kPipe>;
template <typename T>
using DenseRowsPx = DenseRows<T, kPipe | kXf32>;
template <typename T>
using Fp8BlockRowsP = Fp8Rows<T, true, kPipe>;
template <typename T>
using Fp8BlockRowsPx = Fp8Rows<T, true, kPipe | kXf32>;
template <typename T>
using Fp8BlockRowsPxb = Fp8Rows<T, true, kPipe | kXf32 | kBits>;
template <typename T>
using Fp8RowRowsP = Fp8Rows<T, false, kPipe>;
template <typename T>
using Fp8RowRowsPx = Fp8Rows<T, false, kPipe | kXf32>;
template <typename T>
using Fp8RowRowsPxb = Fp8Rows<T, false, kPipe | kXf32 | kBits>;

// x = RMSNorm(r) * gamma into shared memory by the whole block, then rows strided over the grid, a warp each.
template <typename T, bool SILU, typename Rows>
__device__ __forceinline__ void gemv_norm(const float* r, const T* gamma, float eps, const Rows rows_of, T* y,
                                          int in, int rows) {
  using X = typename Rows::X;
  __shared__ __align__(16) X xs[kFuseMaxIn];
  __shared__ float red[32];
  // mode 2: r only read
  tlnorm::add_rmsnorm_row<T, tlnorm::kNormCache, X>(const_cast<float*>(r), nullptr, gamma, xs, in, eps, 2, red);
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

// The inner-loop variants (tlfuse::kPipe etc.) after the weight type: _p pipelined loads, _px also x staged as fp32,
// _pxb (FP8) also the integer e4m3 decode.
#define TL_FUSE_ENTRIES(SUF, T)                                                  \
  TL_FUSE_ROWS_ENTRIES(SUF, T, , tlfuse::DenseRows<T>)                           \
  TL_FUSE_ROWS_ENTRIES(SUF, T, _fp8_block, tlfuse::Fp8BlockRows<T>)              \
  TL_FUSE_ROWS_ENTRIES(SUF, T, _fp8_row, tlfuse::Fp8RowRows<T>)                  \
  TL_FUSE_ROWS_ENTRIES(SUF, T, _p, tlfuse::DenseRowsP<T>)                        \
  TL_FUSE_ROWS_ENTRIES(SUF, T, _px, tlfuse::DenseRowsPx<T>)                      \
  TL_FUSE_ROWS_ENTRIES(SUF, T, _fp8_block_p, tlfuse::Fp8BlockRowsP<T>)           \
  TL_FUSE_ROWS_ENTRIES(SUF, T, _fp8_block_px, tlfuse::Fp8BlockRowsPx<T>)         \
  TL_FUSE_ROWS_ENTRIES(SUF, T, _fp8_block_pxb, tlfuse::Fp8BlockRowsPxb<T>)       \
  TL_FUSE_ROWS_ENTRIES(SUF, T, _fp8_row_p, tlfuse::Fp8RowRowsP<T>)               \
  TL_FUSE_ROWS_ENTRIES(SUF, T, _fp8_row_px, tlfuse::Fp8RowRowsPx<T>)             \
  TL_FUSE_ROWS_ENTRIES(SUF, T, _fp8_row_pxb, tlfuse::Fp8RowRowsPxb<T>)
