// FP8 (e4m3) weights: the linear of decode steps of up to kFp8MaxTokens tokens, and the dequantization to T that
// feeds cuBLAS for larger steps. Included by tl_model.cu after its GEMV helpers (Pair, ld_stream, ld_readonly,
// warp_sum, Cv); launched by io.tensorlane.runtime.llm.Fp8Kernels.
//
// Weight layout: w [out, in] e4m3 (one byte each, row-major, an nn.Linear weight: rows = outputs), and its fp32
// scales in one of two layouts, the template parameter BLOCK:
//   BLOCK = true:  scale [ceil(out/row_block), ceil(in/128)]: with row_block 128 one per 128x128 block (partial
//                  blocks at the right and bottom edges), the block-scaled format of Qwen3-*-FP8 / DeepSeek-V3
//                  (weight_scale_inv) and of compressed-tensors' "block" strategy; with row_block 1 the same blocks'
//                  scales repeated for each row (a fused tensor whose parts do not start on a 128-row boundary, or a
//                  rank's rows that do not);
//   BLOCK = false: scale [out], one per output row: compressed-tensors' "channel" strategy (a "tensor" scale is
//                  broadcast to every row by the loader).
// The real weight is float(w[r,c]) * scale(r,c). e4m3 -> half is exact (3 mantissa bits, exponents inside half's
// normal range), so every product below is formed from the exact weight.
#pragma once

#include <cuda_fp8.h>

#include "tl_e4m3.cuh"

namespace tlfp8 {

constexpr int kFp8Block = 128;
constexpr int kFp8Warps = 8;      // output rows per block (one warp each)
constexpr int kFp8MaxTokens = 8;  // tokens per launch of the GEMV (x rows), each weight chunk read once for all
constexpr int kFp8Unroll = 4;     // 16-byte weight loads in flight per lane (2 measured 3.84 ms GPU at batch 1, 8B)

using tle4m3::e4m3x2;    // two e4m3 values -> two floats, exactly
using tle4m3::unpack16;  // 16 e4m3 weights (one 16-byte chunk) -> 16 floats

// sum_j wf[j] * x[j] over 16 elements of T given as two 16-byte chunks.
template <typename T>
__device__ __forceinline__ float dot16(const float* wf, const uint4 a, const uint4 b) {
  const uint32_t xv[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
  float acc = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const float2 x = Pair<T>::f(xv[i]);
    acc = fmaf(wf[2 * i], x.x, acc);
    acc = fmaf(wf[2 * i + 1], x.y, acc);
  }
  return acc;
}

// ---- FP8 GEMV: y[t, o] = T(sum_k x[t, k] * weight(o, k)) for t < n <= kFp8MaxTokens ----------------------------
// x [n, in] T; w [out, in] e4m3; scale as above; y [n, out] T. One warp per output row: each lane reads 16 weight
// bytes per load (kFp8Unroll in flight, streamed), converts them once and uses them for all n tokens (x through the
// read-only cache). BLOCK: each 16-byte chunk lies inside one 128-column block, so its partial dot product is scaled
// once (fp32) before it is added; per row: the row's scale multiplies the finished sum. fp32 accumulation; the
// summation order differs from cuBLAS'.
// Requires in % 16 == 0, x and w 16-byte aligned, 1 <= n <= kFp8MaxTokens. Launch: grid ceil(out / kFp8Warps),
// block kFp8Warps * 32.
// NT: the most tokens the instantiation takes (kFp8MaxTokens, or 1 for the one-token entries: no per-token
// predication, one accumulator, U 16-byte loads in flight per lane).
template <typename T, bool BLOCK, int NT = kFp8MaxTokens, int U = kFp8Unroll>
__device__ __forceinline__ void gemv_fp8(const T* x, const uint8_t* w, const float* scale, T* y, int n, int in,
                                         int out, int row_block) {
  const int row = blockIdx.x * kFp8Warps + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= out) return;
  const uint4* wr = reinterpret_cast<const uint4*>(w + (long long)row * in);
  const int chunks = in >> 4;
  const float* srow = BLOCK ? scale + (long long)(row / row_block) * ((in + kFp8Block - 1) / kFp8Block) : scale;
  float acc[NT];
#pragma unroll
  for (int t = 0; t < NT; ++t) acc[t] = 0.0f;
  auto consume = [&](const uint4 wv, int c) {
    float wf[16];
    unpack16(wv, wf);
    const float s = BLOCK ? srow[c >> 3] : 1.0f;  // 8 chunks of 16 per 128-column block
#pragma unroll
    for (int t = 0; t < NT; ++t) {
      if (NT == 1 || t < n) {
        const uint4* xr = reinterpret_cast<const uint4*>(x + (long long)t * in) + 2 * c;
        const float d = dot16<T>(wf, ld_readonly(xr), ld_readonly(xr + 1));
        acc[t] = BLOCK ? fmaf(s, d, acc[t]) : acc[t] + d;
      }
    }
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
  const float rs = BLOCK ? 1.0f : scale[row];
#pragma unroll
  for (int t = 0; t < NT; ++t) {
    if (NT == 1 || t < n) {
      const float v = warp_sum(acc[t]);
      if (lane == 0) y[(long long)t * out + row] = Cv<T>::t(BLOCK ? v : v * rs);
    }
  }
}

// ---- dequantization: out[r, c] = T(float(w[r, c]) * scale(r, c)) -------------------------------------------------
// w [rows, cols] e4m3, out [rows, cols] T (the bf16/fp16 weight cuBLAS then reads). Grid-stride over groups of 16
// elements when cols % 16 == 0 (a 16-byte load, two 16-byte stores; a group never straddles a row or a 128-column
// block; out 16-byte aligned), else over single elements. Launch: any grid, block 256.
template <typename T, bool BLOCK>
__device__ __forceinline__ void dequant_fp8(const uint8_t* w, const float* scale, T* out, int rows, int cols,
                                            int row_block) {
  const long long total = (long long)rows * cols;
  const int kb = (cols + kFp8Block - 1) / kFp8Block;
  const long long stride = (long long)gridDim.x * blockDim.x;
  auto scale_of = [&](long long r, long long col) -> float {
    return BLOCK ? scale[(r / row_block) * kb + col / kFp8Block] : scale[r];
  };
  if ((cols & 15) == 0) {
    const long long groups = total >> 4;
    for (long long g = blockIdx.x * (long long)blockDim.x + threadIdx.x; g < groups; g += stride) {
      const long long e = g << 4, r = e / cols, col = e - r * cols;
      float f[16];
      unpack16(reinterpret_cast<const uint4*>(w)[g], f);
      const float s = scale_of(r, col);
      uint32_t packed[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const T lo = Cv<T>::t(f[2 * j] * s), hi = Cv<T>::t(f[2 * j + 1] * s);
        packed[j] = (uint32_t)(*reinterpret_cast<const uint16_t*>(&lo)) |
                    ((uint32_t)(*reinterpret_cast<const uint16_t*>(&hi)) << 16);
      }
      uint4* o = reinterpret_cast<uint4*>(out + e);  // 32 bytes, two 16-byte stores
      o[0] = make_uint4(packed[0], packed[1], packed[2], packed[3]);
      o[1] = make_uint4(packed[4], packed[5], packed[6], packed[7]);
    }
  } else {
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total; e += stride) {
      const long long r = e / cols, col = e - r * cols;
      const float2 f = e4m3x2(w[e]);
      out[e] = Cv<T>::t(f.x * scale_of(r, col));
    }
  }
}

// ---- activation quantization for the FP8 tensor-core GEMM (cuBLASLt) --------------------------------------------
// x [n, in] T -> q [rows, in] e4m3 and fp32 scales, one per (token, group of `group` columns): scale[g * rows + t] =
// amax / 448 over x[t, g*group .. min((g+1)*group, in)), q = e4m3(x / scale) (round to nearest even, saturated);
// an all-zero group gets scale 1. Rows n <= t < rows (padding: cuBLASLt wants the token count a multiple of 4) get
// q = 0 and scale 1, x is not read there. group 128: the 1x128 layout cuBLASLt's VEC128_32F reads (token-contiguous
// per column group). One warp per (token, group).
template <typename T>
__device__ __forceinline__ void quant_fp8(const T* x, uint8_t* q, float* scale, int n, int rows, int in, int group) {
  const int lane = threadIdx.x & 31;
  const int groups = (in + group - 1) / group;
  const long long gw = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (gw >= (long long)rows * groups) return;
  const int t = (int)(gw / groups), g = (int)(gw % groups);
  const int c0 = g * group, c1 = min(c0 + group, in);
  uint8_t* qr = q + (long long)t * in;
  if (t >= n) {
    for (int c = c0 + lane; c < c1; c += 32) qr[c] = 0;
    if (lane == 0) scale[(long long)g * rows + t] = 1.0f;
    return;
  }
  const T* xr = x + (long long)t * in;
  float amax = 0.0f;
  for (int c = c0 + lane; c < c1; c += 32) amax = fmaxf(amax, fabsf(Cv<T>::f(xr[c])));
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  const float s = amax > 0.0f ? amax / 448.0f : 1.0f;
  for (int c = c0 + lane; c < c1; c += 32) {
    qr[c] = tle4m3::encode(Cv<T>::f(xr[c]) / s);
  }
  if (lane == 0) scale[(long long)g * rows + t] = s;
}

}  // namespace tlfp8

// row_block: 128 or 1 (BLOCK layouts); ignored by the per-row entries.
#define TL_FP8_ENTRIES(SUF, T)                                                                                     \
  extern "C" __global__ void __launch_bounds__(tlfp8::kFp8Warps * 32) tl_gemv_fp8_block_##SUF(                      \
      const T* x, const uint8_t* w, const float* scale, T* y, int n, int in, int out, int row_block) {             \
    tlpdl::enter();                                                                                                \
    tlfp8::gemv_fp8<T, true>(x, w, scale, y, n, in, out, row_block);                                               \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(tlfp8::kFp8Warps * 32) tl_gemv_fp8_row_##SUF(                        \
      const T* x, const uint8_t* w, const float* scale, T* y, int n, int in, int out, int row_block) {             \
    tlpdl::enter();                                                                                                \
    tlfp8::gemv_fp8<T, false>(x, w, scale, y, n, in, out, row_block);                                              \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(tlfp8::kFp8Warps * 32) tl_gemv1_fp8_block_##SUF(                     \
      const T* x, const uint8_t* w, const float* scale, T* y, int n, int in, int out, int row_block) {             \
    tlpdl::prefetch_warp_row(w, (long long)in, out, tlfp8::kFp8Warps, 32 * 8 * 16);                                \
    tlpdl::enter();                                                                                                \
    tlfp8::gemv_fp8<T, true, 1, 8>(x, w, scale, y, n, in, out, row_block);                                         \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(tlfp8::kFp8Warps * 32) tl_gemv1_fp8_row_##SUF(                       \
      const T* x, const uint8_t* w, const float* scale, T* y, int n, int in, int out, int row_block) {             \
    tlpdl::prefetch_warp_row(w, (long long)in, out, tlfp8::kFp8Warps, 32 * 8 * 16);                                \
    tlpdl::enter();                                                                                                \
    tlfp8::gemv_fp8<T, false, 1, 8>(x, w, scale, y, n, in, out, row_block);                                        \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(256) tl_dequant_fp8_block_##SUF(                                     \
      const uint8_t* w, const float* scale, T* out, int rows, int cols, int row_block) {                           \
    tlpdl::enter();                                                                                                \
    tlfp8::dequant_fp8<T, true>(w, scale, out, rows, cols, row_block);                                             \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(256) tl_dequant_fp8_row_##SUF(                                       \
      const uint8_t* w, const float* scale, T* out, int rows, int cols, int row_block) {                           \
    tlpdl::enter();                                                                                                \
    tlfp8::dequant_fp8<T, false>(w, scale, out, rows, cols, row_block);                                            \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(256) tl_quant_fp8_##SUF(const T* x, uint8_t* q, float* scale, int n, \
                                                                        int rows, int in, int group) {             \
    tlpdl::enter();                                                                                                \
    tlfp8::quant_fp8<T>(x, q, scale, n, rows, in, group);                                                          \
  }
