// Mixture-of-Experts expert linears over FP8 (e4m3) weights, for decode steps: included by tl_model.cu after tl_fp8.cuh
// and tl_moe.cuh (uses tlfp8's unpack16/dot16/e4m3x2, the GEMV's ld_stream/ld_readonly/warp_sum and tl_moe's layout).
// Launched by io.tensorlane.runtime.llm.MoeKernels (gateUpFp8 / downFp8).
//
// The same pairs as tl_moe_pairs (pair p = t*k + s reads only expert ids[p]'s rows: a step reads the routed experts'
// weights only; expert selection is on the device, so the launches replay in CUDA graphs), with the stacked expert
// weights w [E * out, in] in e4m3 and their fp32 scales in tl_fp8.cuh's layouts over the stacked rows:
//   BLOCK = true:  scale [ceil(E * out / row_block), ceil(in / 128)]; global row g = e * out + row reads scale row
//                  g / row_block. row_block 128 (the compact grid) is used by the loader only when every expert's part
//                  starts on a 128-row boundary (io.tensorlane.runtime.model.Fp8Shards), so g / 128 is expert e's own
//                  block row; row_block 1: each weight row carries its block row's scales.
//   BLOCK = false: scale [E * out], one per row (per-channel; a per-tensor scale is repeated by the loader).
// Rows of whole 16-byte chunks (in % 16 == 0, x and w 16-byte aligned) take 16-byte streamed weight loads (kFp8Unroll
// in flight a lane), each chunk inside one 128-column block (scaled once, fp32); other widths a scalar loop. fp32
// accumulation; the summation order differs from the host reference's and cuBLAS'.
// Launch: grid (pairs, ceil(out / kGemvWarps)), block kGemvWarps * 32 (one warp per output row of one pair).
#pragma once

// One warp's lane-partial dot product of stacked row g of w with xr (fp32, block scales applied, a per-row scale not:
// the caller multiplies the warp's sum by scale[g]); warp_sum it.
template <typename T, bool BLOCK>
__device__ __forceinline__ float tl_moe_fp8_partial(const T* xr, const uint8_t* w, const float* scale, long long g,
                                                    int in, int row_block) {
  const int lane = threadIdx.x & 31;
  const uint8_t* wr = w + g * in;
  const int kb = (in + tlfp8::kFp8Block - 1) / tlfp8::kFp8Block;
  const float* srow = BLOCK ? scale + (g / row_block) * kb : scale;
  float acc = 0.0f;
  if ((in & 15) == 0) {
    const uint4* w4 = reinterpret_cast<const uint4*>(wr);
    const uint4* x4 = reinterpret_cast<const uint4*>(xr);
    const int chunks = in >> 4;
    auto consume = [&](const uint4 wv, int c) {
      float wf[16];
      tlfp8::unpack16(wv, wf);
      const float d = tlfp8::dot16<T>(wf, ld_readonly(x4 + 2 * c), ld_readonly(x4 + 2 * c + 1));
      acc = BLOCK ? fmaf(srow[c >> 3], d, acc) : acc + d;  // 8 chunks of 16 per 128-column block
    };
    constexpr int U = tlfp8::kFp8Unroll;  // 16-byte weight loads in flight per lane, as the dense FP8 GEMV
    int c = lane;
    for (; c + 32 * (U - 1) < chunks; c += 32 * U) {
      uint4 wv[U];
#pragma unroll
      for (int u = 0; u < U; ++u) wv[u] = ld_stream(w4 + c + 32 * u);
#pragma unroll
      for (int u = 0; u < U; ++u) consume(wv[u], c + 32 * u);
    }
    for (; c < chunks; c += 32) consume(ld_stream(w4 + c), c);
  } else {
    for (int c = lane; c < in; c += 32) {
      const float wv = tle4m3::e4m3x2(wr[c]).x;
      const float s = BLOCK ? srow[c / tlfp8::kFp8Block] : 1.0f;
      acc = fmaf(wv * s, Cv<T>::f(xr[c]), acc);
    }
  }
  return acc;
}

template <typename T, typename Y, bool BLOCK>
__device__ __forceinline__ void tl_moe_pairs_fp8(const T* x, const uint8_t* w, const float* scale, Y* y,
                                                 const int* ids, int xdiv, int in, int out, int row_block) {
  const long long p = blockIdx.x;
  const int row = blockIdx.y * kGemvWarps + (threadIdx.x >> 5);
  if (row >= out) return;
  const long long g = (long long)ids[p] * out + row;  // the stacked weight row
  const float v = warp_sum(tl_moe_fp8_partial<T, BLOCK>(x + (p / xdiv) * in, w, scale, g, in, row_block));
  if ((threadIdx.x & 31) == 0) y[p * out + row] = Cv<Y>::t(BLOCK ? v : v * scale[g]);
}

// gate/up: x the tokens' rows (xdiv = k), y [pairs, out] in T; down: x the pairs' act rows, y fp32 (tl_moe_combine_f32
// sums them). row_block: 128 or 1 (block entries); ignored by the per-row entries.
#define TL_MOE_FP8_ENTRY(NAME, SUF, T, Y, BLOCK, XDIV)                                                             \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32)                                                    \
      NAME##_##SUF(const T* x, const uint8_t* w, const float* scale, Y* y, const int* ids, int k, int in, int out, \
                   int row_block) {                                                                                \
    tlpdl::enter();                                                                                                \
    tl_moe_pairs_fp8<T, Y, BLOCK>(x, w, scale, y, ids, XDIV, in, out, row_block);                                  \
  }

#define TL_MOE_FP8_ENTRIES(SUF, T)                                          \
  TL_MOE_FP8_ENTRY(tl_moe_gate_up_fp8_block, SUF, T, T, true, k)            \
  TL_MOE_FP8_ENTRY(tl_moe_gate_up_fp8_row, SUF, T, T, false, k)             \
  TL_MOE_FP8_ENTRY(tl_moe_down_fp8_block, SUF, T, float, true, 1)           \
  TL_MOE_FP8_ENTRY(tl_moe_down_fp8_row, SUF, T, float, false, 1)
