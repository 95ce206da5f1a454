// Mixture-of-Experts decode kernels with fewer launches (issue #31: the batch-1 step is latency-bound, not read-bound):
// included by tl_model.cu after tl_moe.cuh and tl_moe_fp8.cuh. For steps of at most kMoeRouterMaxTokens tokens
// (io.tensorlane.runtime.llm.MoeDecodePath), three kernels replace the router GEMM + tl_moe_route + gate_up + silu +
// down + combine of tl_moe.cuh:
//   tl_moe_router        the router logits GEMV (one warp per expert row, fp32) AND, in the grid's last block to finish
//                        (a counter in global memory, reset by that block, so CUDA graphs replay it), tl_moe_route_row
//                        per token: the same ids / weights as tl_moe_route over cuBLAS' logits (the logits differ
//                        only in summation order);
//   tl_moe_gate_up_silu  each pair's gate AND up rows in one warp, act = T(silu(T(gate)) * T(up)) written directly
//                        (the gate and up values rounded to T first, as tl_silu_mul reads them from the T gate_up rows);
//   tl_moe_down_sum      one warp per (token, output row): the sum over the token's k slots, in slot order, of
//                        weights[p] * (expert ids[p]'s down row . act[p]), fp32, one rounding to T. No atomics: every
//                        output is one warp's fixed-order sum, so the result is the same run to run.
//   tl_moe_down_sum_res  the same sum added to the fp32 residual stream (r += float(T(sum)), tl_add_rmsnorm's mode-1
//                        add), for a fused one-token step on one rank (RankModel's fused path, MoeMlp.forwardFused).
//   tl_moe_router_norm   a fused one-token step's RMSNorm of the residual stream and tl_moe_router in one kernel
//                        (MoeMlp.forwardFused under TENSORLANE_MOE_FUSED_DECODE=step): every block computes x =
//                        RMSNorm(r) * gamma into shared memory as tl_add_rmsnorm's mode 2 does (at its block size, 512,
//                        so with its sum order: the same bits), block 0 also stores x for the gate/up kernel, and the
//                        router's logits and routing follow over the shared x (one launch fewer a MoE layer).
// The FP8 variants (block and per-row scales, tl_moe_fp8.cuh's layouts) read e4m3 rows as tl_moe_pairs_fp8 does.
// Layouts as tl_moe.cuh: router w [E, in] T; w_gate_up [E, 2*inter, in]; w_down [E, out, inter]; act [n*k, inter].
#pragma once

constexpr int kMoeRouterWarps = 8;      // expert rows per block of tl_moe_router
constexpr int kMoeRouterMaxTokens = 8;  // the longest step tl_moe_router takes
constexpr int kMoeRouterNormThreads = 512;  // tl_moe_router_norm's block: tl_add_rmsnorm's, for its sum order
// 16-byte weight loads in flight per lane in tl_moe_down_sum: its warps are 8x fewer than tl_moe_down's (one per token
// and output row, not per pair), so each keeps twice the GEMV's loads in flight (not measured against 4 yet)
constexpr int kMoeDownUnroll = 8;

// logits [n, E] fp32 scratch; counter: one unsigned, zero before the first launch (and after every launch).
// Launch: grid ceil(E / WARPS), block WARPS * 32; n <= kMoeRouterMaxTokens, E <= 512, k <= 32. XS: x in shared memory.
template <typename T, int WARPS = kMoeRouterWarps, bool XS = false>
__device__ __forceinline__ void tl_moe_router(const T* x, const T* w, float* logits, unsigned* counter, int n, int in,
                                              int E, int k, int norm, int* ids, float* weights) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int e = blockIdx.x * WARPS + warp;
  if (e < E) {
    const T* wr = w + (long long)e * in;
    for (int t = 0; t < n; ++t) {
      const float acc = tl_moe_row_dot<T, XS>(wr, x + (long long)t * in, in);
      if (lane == 0) logits[(long long)t * E + e] = acc;
    }
  }
  __shared__ bool last;
  __threadfence();  // this block's logits visible device-wide before it counts itself done
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(counter, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (int t = warp; t < n; t += WARPS) {
    tl_moe_route_row(logits + (long long)t * E, E, k, norm, ids + (long long)t * k, weights + (long long)t * k);
  }
  if (threadIdx.x == 0) *counter = 0u;  // every block has counted: the next launch starts from zero
}

// One token: xn[in] = T(gamma * r * rsqrt(mean(r^2) + eps)) (r [in] fp32, unchanged), then tl_moe_router over it.
// Launch: grid ceil(E / (kMoeRouterNormThreads / 32)), block kMoeRouterNormThreads; in <= tlfuse::kFuseMaxIn.
template <typename T>
__device__ __forceinline__ void tl_moe_router_norm(const float* r, const T* gamma, float eps, T* xn, const T* w,
                                                   float* logits, unsigned* counter, int in, int E, int k, int norm,
                                                   int* ids, float* weights) {
  __shared__ __align__(16) T xs[tlfuse::kFuseMaxIn];
  __shared__ float red[32];
  tlnorm::add_rmsnorm_row<T>(const_cast<float*>(r), nullptr, gamma, xs, in, eps, 2, red);  // mode 2: r only read
  __syncthreads();
  if (blockIdx.x == 0) {
    for (int j = threadIdx.x; j < in; j += blockDim.x) xn[j] = xs[j];
  }
  tl_moe_router<T, kMoeRouterNormThreads / 32, true>(xs, w, logits, counter, 1, in, E, k, norm, ids, weights);
}

// One warp's lane-partial dot products of two weight rows a, b with the same x (fp32; warp_sum them).
template <typename T>
__device__ __forceinline__ void tl_moe_row_dot2(const T* a, const T* b, const T* x, int in, float& pa, float& pb) {
  const int lane = threadIdx.x & 31;
  float sa = 0.0f, sb = 0.0f;
  if ((in & 7) == 0) {
    const uint4* ar = reinterpret_cast<const uint4*>(a);
    const uint4* br = reinterpret_cast<const uint4*>(b);
    const uint4* xr = reinterpret_cast<const uint4*>(x);
    const int chunks = in >> 3;
    int c = lane;
    for (; c + 32 * (kGemvUnroll - 1) < chunks; c += 32 * kGemvUnroll) {
      uint4 av[kGemvUnroll], bv[kGemvUnroll], xv[kGemvUnroll];
#pragma unroll
      for (int u = 0; u < kGemvUnroll; ++u) av[u] = ld_stream(ar + c + 32 * u);
#pragma unroll
      for (int u = 0; u < kGemvUnroll; ++u) bv[u] = ld_stream(br + c + 32 * u);
#pragma unroll
      for (int u = 0; u < kGemvUnroll; ++u) xv[u] = ld_readonly(xr + c + 32 * u);
#pragma unroll
      for (int u = 0; u < kGemvUnroll; ++u) {
        sa = dot8<T>(av[u], xv[u], sa);
        sb = dot8<T>(bv[u], xv[u], sb);
      }
    }
    for (; c < chunks; c += 32) {
      const uint4 xv = ld_readonly(xr + c);
      sa = dot8<T>(ld_stream(ar + c), xv, sa);
      sb = dot8<T>(ld_stream(br + c), xv, sb);
    }
  } else {
    for (int c = lane; c < in; c += 32) {
      const float xv = ld(x, c);
      sa = fmaf(ld(a, c), xv, sa);
      sb = fmaf(ld(b, c), xv, sb);
    }
  }
  pa = sa;
  pb = sb;
}

// act = T(silu(T(g)) * T(u)), the arithmetic of tl_silu_mul over the T gate/up rows.
template <typename T>
__device__ __forceinline__ T tl_moe_silu_mul(float g, float u) {
  const float gq = Cv<T>::f(Cv<T>::t(g)), uq = Cv<T>::f(Cv<T>::t(u));
  return Cv<T>::t(gq / (1.0f + expf(-gq)) * uq);
}

// act [n*k, inter]: pair p's act row through expert ids[p]'s gate row r and up row inter + r, x the token p / k's row.
// Launch: grid (n*k, ceil(inter / kGemvWarps)), block kGemvWarps * 32 (one warp per act column of one pair).
template <typename T>
__device__ __forceinline__ void tl_moe_gate_up_silu(const T* x, const T* w, T* act, const int* ids, int k, int in,
                                                    int inter) {
  const long long p = blockIdx.x;
  const int row = blockIdx.y * kGemvWarps + (threadIdx.x >> 5);
  if (row >= inter) return;
  const long long e = ids[p];
  const T* wg = w + (e * 2 * inter + row) * in;
  float g, u;
  tl_moe_row_dot2<T>(wg, wg + (long long)inter * in, x + (p / k) * in, in, g, u);
  g = warp_sum(g);
  u = warp_sum(u);
  if ((threadIdx.x & 31) == 0) act[p * inter + row] = tl_moe_silu_mul<T>(g, u);
}

// y [n, out] in T: y[t, o] = sum over s < k of weights[t*k+s] * (w[ids[t*k+s], o, :] . act[t*k+s, :]). The k rows of
// whole 16-byte chunks are walked as one run of k * chunks chunks (kMoeDownUnroll loads in flight a lane, whatever the
// width of one row); other widths a scalar loop per slot.
// Launch: grid (n, ceil(out / kGemvWarps)), block kGemvWarps * 32 (one warp per output row of one token).
// A down kernel's output element: y[i] = T(acc), or (RES) r[i] += float(T(acc)) as tl_add_rmsnorm's mode 1 adds it.
template <typename T, bool RES>
__device__ __forceinline__ void down_out(float acc, T* y, float* r, long long i) {
  if constexpr (RES) {
    r[i] += Cv<T>::f(Cv<T>::t(acc));
  } else {
    y[i] = Cv<T>::t(acc);
  }
}

// RES: r[t, row] += float(T(sum)) (fp32 residual stream) instead of y[t, row] = T(sum): tl_add_rmsnorm's mode-1 add
// folded in, for a fused one-token step (y unused).
template <typename T, bool RES = false>
__device__ __forceinline__ void tl_moe_down_sum(const T* act, const T* w, T* y, const int* ids, const float* weights,
                                                int k, int in, int out, float* r = nullptr) {
  const long long t = blockIdx.x;
  const int row = blockIdx.y * kGemvWarps + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= out) return;
  float acc = 0.0f;
  if ((in & 7) == 0) {
    const int chunks = in >> 3, total = k * chunks;
    const uint4* w4 = reinterpret_cast<const uint4*>(w);
    const uint4* a4 = reinterpret_cast<const uint4*>(act);
    for (int c = lane; c < total; c += 32 * kMoeDownUnroll) {
      uint4 wv[kMoeDownUnroll], xv[kMoeDownUnroll];
      float ws[kMoeDownUnroll];
#pragma unroll
      for (int u = 0; u < kMoeDownUnroll; ++u) {
        const int cc = c + 32 * u;
        if (cc < total) {
          const int s = cc / chunks, j = cc - s * chunks;
          const long long p = t * k + s;
          wv[u] = ld_stream(w4 + ((long long)ids[p] * out + row) * chunks + j);
          xv[u] = ld_readonly(a4 + p * chunks + j);
          ws[u] = weights[p];
        } else {
          wv[u] = make_uint4(0u, 0u, 0u, 0u);
          xv[u] = wv[u];
          ws[u] = 0.0f;
        }
      }
#pragma unroll
      for (int u = 0; u < kMoeDownUnroll; ++u) acc = fmaf(ws[u], dot8<T>(wv[u], xv[u], 0.0f), acc);
    }
  } else {
    for (int s = 0; s < k; ++s) {
      const long long p = t * k + s;
      const T* wr = w + ((long long)ids[p] * out + row) * in;
      const T* xr = act + p * in;
      float d = 0.0f;
      for (int c = lane; c < in; c += 32) d = fmaf(ld(wr, c), ld(xr, c), d);
      acc = fmaf(weights[p], d, acc);
    }
  }
  acc = warp_sum(acc);
  if (lane == 0) down_out<T, RES>(acc, y, r, t * out + row);
}

// ---- FP8 experts ----------------------------------------------------------------------------------------------
// gate/up: rows g = ids[p] * 2 * inter + r (gate) and + inter (up) of the stacked [E * 2 * inter, in] e4m3 weight.
template <typename T, bool BLOCK>
__device__ __forceinline__ void tl_moe_gate_up_silu_fp8(const T* x, const uint8_t* w, const float* scale, T* act,
                                                        const int* ids, int k, int in, int inter, int row_block) {
  const long long p = blockIdx.x;
  const int row = blockIdx.y * kGemvWarps + (threadIdx.x >> 5);
  if (row >= inter) return;
  const long long gg = (long long)ids[p] * 2 * inter + row, gu = gg + inter;
  const T* xr = x + (p / k) * in;
  float g = warp_sum(tl_moe_fp8_partial<T, BLOCK>(xr, w, scale, gg, in, row_block));
  float u = warp_sum(tl_moe_fp8_partial<T, BLOCK>(xr, w, scale, gu, in, row_block));
  if (!BLOCK) {
    g *= scale[gg];
    u *= scale[gu];
  }
  if ((threadIdx.x & 31) == 0) act[p * inter + row] = tl_moe_silu_mul<T>(g, u);
}

// down + the weighted sum over FP8 experts: each 16-byte chunk's coefficient is the slot's routing weight times its
// block's scale (BLOCK) or its row's scale (per-row); one run of k * chunks chunks as tl_moe_down_sum.
template <typename T, bool BLOCK, bool RES = false>
__device__ __forceinline__ void tl_moe_down_sum_fp8(const T* act, const uint8_t* w, const float* scale, T* y,
                                                    const int* ids, const float* weights, int k, int in, int out,
                                                    int row_block, float* r = nullptr) {
  const long long t = blockIdx.x;
  const int row = blockIdx.y * kGemvWarps + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= out) return;
  const int kb = (in + tlfp8::kFp8Block - 1) / tlfp8::kFp8Block;
  float acc = 0.0f;
  if ((in & 15) == 0) {
    constexpr int U = tlfp8::kFp8Unroll;
    const int chunks = in >> 4, total = k * chunks;
    const uint4* w4 = reinterpret_cast<const uint4*>(w);
    const uint4* a4 = reinterpret_cast<const uint4*>(act);
    for (int c = lane; c < total; c += 32 * U) {
      uint4 wv[U];
      float coef[U];
      long long xo[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int cc = c + 32 * u;
        if (cc < total) {
          const int s = cc / chunks, j = cc - s * chunks;
          const long long p = t * k + s;
          const long long g = (long long)ids[p] * out + row;
          wv[u] = ld_stream(w4 + g * chunks + j);
          coef[u] = weights[p] * (BLOCK ? scale[(g / row_block) * kb + (j >> 3)] : scale[g]);
          xo[u] = p * 2 * chunks + 2 * j;  // 8 T elements a uint4: two x chunks per 16 weights
        } else {
          wv[u] = make_uint4(0u, 0u, 0u, 0u);
          coef[u] = 0.0f;
          xo[u] = -1;
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (xo[u] >= 0) {
          float wf[16];
          tlfp8::unpack16(wv[u], wf);
          acc = fmaf(coef[u], tlfp8::dot16<T>(wf, ld_readonly(a4 + xo[u]), ld_readonly(a4 + xo[u] + 1)), acc);
        }
      }
    }
  } else {
    for (int s = 0; s < k; ++s) {
      const long long p = t * k + s;
      const long long g = (long long)ids[p] * out + row;
      const float d = tl_moe_fp8_partial<T, BLOCK>(act + p * in, w, scale, g, in, row_block);
      acc = fmaf(weights[p] * (BLOCK ? 1.0f : scale[g]), d, acc);
    }
  }
  acc = warp_sum(acc);
  if (lane == 0) down_out<T, RES>(acc, y, r, t * out + row);
}

#define TL_MOE_FUSED_ENTRIES(SUF, T)                                                                               \
  extern "C" __global__ void __launch_bounds__(kMoeRouterWarps * 32)                                               \
      tl_moe_router_##SUF(const T* x, const T* w, float* logits, unsigned* counter, int n, int in, int E, int k,  \
                          int norm, int* ids, float* weights) {                                                    \
    tlpdl::enter();                                                                                                \
    tl_moe_router<T>(x, w, logits, counter, n, in, E, k, norm, ids, weights);                                      \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kMoeRouterNormThreads) tl_moe_router_norm_##SUF(                    \
      const float* r, const T* gamma, float eps, T* xn, const T* w, float* logits, unsigned* counter, int in, int E, \
      int k, int norm, int* ids, float* weights) {                                                                 \
    tlpdl::enter();                                                                                                \
    tl_moe_router_norm<T>(r, gamma, eps, xn, w, logits, counter, in, E, k, norm, ids, weights);                    \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32)                                                    \
      tl_moe_gate_up_silu_##SUF(const T* x, const T* w, T* act, const int* ids, int k, int in, int inter) {       \
    tlpdl::enter();                                                                                               \
    tl_moe_gate_up_silu<T>(x, w, act, ids, k, in, inter);                                                          \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32) tl_moe_down_sum_##SUF(                             \
      const T* act, const T* w, T* y, const int* ids, const float* weights, int k, int in, int out) {             \
    tlpdl::enter();                                                                                               \
    tl_moe_down_sum<T>(act, w, y, ids, weights, k, in, out);                                                       \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32) tl_moe_gate_up_silu_fp8_block_##SUF(               \
      const T* x, const uint8_t* w, const float* scale, T* act, const int* ids, int k, int in, int inter,         \
      int row_block) {                                                                                             \
    tlpdl::enter();                                                                                                \
    tl_moe_gate_up_silu_fp8<T, true>(x, w, scale, act, ids, k, in, inter, row_block);                              \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32) tl_moe_gate_up_silu_fp8_row_##SUF(                 \
      const T* x, const uint8_t* w, const float* scale, T* act, const int* ids, int k, int in, int inter,         \
      int row_block) {                                                                                             \
    tlpdl::enter();                                                                                                \
    tl_moe_gate_up_silu_fp8<T, false>(x, w, scale, act, ids, k, in, inter, row_block);                             \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32) tl_moe_down_sum_fp8_block_##SUF(                   \
      const T* act, const uint8_t* w, const float* scale, T* y, const int* ids, const float* weights, int k,      \
      int in, int out, int row_block) {                                                                            \
    tlpdl::enter();                                                                                                \
    tl_moe_down_sum_fp8<T, true>(act, w, scale, y, ids, weights, k, in, out, row_block);                           \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32) tl_moe_down_sum_fp8_row_##SUF(                     \
      const T* act, const uint8_t* w, const float* scale, T* y, const int* ids, const float* weights, int k,      \
      int in, int out, int row_block) {                                                                            \
    tlpdl::enter();                                                                                                \
    tl_moe_down_sum_fp8<T, false>(act, w, scale, y, ids, weights, k, in, out, row_block);                          \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32) tl_moe_down_sum_res_##SUF(                         \
      const T* act, const T* w, float* r, const int* ids, const float* weights, int k, int in, int out) {         \
    tlpdl::enter();                                                                                               \
    tl_moe_down_sum<T, true>(act, w, nullptr, ids, weights, k, in, out, r);                                        \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32) tl_moe_down_sum_res_fp8_block_##SUF(               \
      const T* act, const uint8_t* w, const float* scale, float* r, const int* ids, const float* weights, int k,  \
      int in, int out, int row_block) {                                                                            \
    tlpdl::enter();                                                                                                \
    tl_moe_down_sum_fp8<T, true, true>(act, w, scale, nullptr, ids, weights, k, in, out, row_block, r);            \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32) tl_moe_down_sum_res_fp8_row_##SUF(                 \
      const T* act, const uint8_t* w, const float* scale, float* r, const int* ids, const float* weights, int k,  \
      int in, int out, int row_block) {                                                                            \
    tlpdl::enter();                                                                                                \
    tl_moe_down_sum_fp8<T, false, true>(act, w, scale, nullptr, ids, weights, k, in, out, row_block, r);           \
  }
