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
// The FP8 variants (block and per-row scales, tl_moe_fp8.cuh's layouts) stage each lane's chunks in shared memory with
// cp.async, so that a row's loads are in flight together (below, "FP8 experts"), and split a down row over warps.
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
// Why these kernels stage their loads (a hypothesis until a GPU run times them): a one-token step of FP8 experts looks
// bound by DRAM round trips, not bytes. A lane that loads a group of chunks, consumes it and only then loads the next
// waits a round trip a group, and an FP8 row has half the chunks of a bf16 row of the same width, so as many groups
// read half the bytes in about the same time (FP8 experts' layer 65.5 us against bf16's 74.8 us, H100, 2026-12-07).
// Registers do not keep a group in flight either: with the loads in registers, ptxas gave the gate/up kernel 32-44
// registers for a group of 16 16-byte loads, which need 64 (nvcc --resource-usage, sm_90a, 2026-12-07; no SASS dump
// here), so it must issue some loads only after others are used. So both kernels stage a lane's whole group in shared
// memory with cp.async (the weights, x and the block scales; each lane copies and reads only its own slots, so no
// barrier) and wait for it once: a group is one round trip, and a row of up to 32 * kMoeFp8Chunks chunks (2,048
// columns) is one group.
constexpr int kMoeFp8Warps = 4;   // warps a block of the one-token FP8 expert kernels (their staging: 9 KB a warp)
constexpr int kMoeFp8Chunks = 4;  // 16-byte weight chunks of each row a lane stages a group

// The lane's cp.async copies done and visible to it; the "memory" clobber keeps the compiler from reading the staged
// slots before the wait (cp_async_wait_all's asm has none).
__device__ __forceinline__ void tl_moe_stage_wait() {
  cp_async_wait_all();
  asm volatile("" ::: "memory");
}

// The lane has read its slots: the next group's copies may overwrite them (no read moves past this).
__device__ __forceinline__ void tl_moe_stage_done() { asm volatile("" ::: "memory"); }

// gate/up: rows gg = ids[p] * 2 * inter + r (gate) and gu = gg + inter (up) of the stacked [E * 2 * inter, in] e4m3
// weight; a group is kMoeFp8Chunks chunk positions c a lane, each with the gate's and the up's chunk, the two x chunks
// both use and (BLOCK) both block scales. Other widths: tl_moe_fp8_partial per row.
// Launch: grid (n*k, ceil(inter / kMoeFp8Warps)), block kMoeFp8Warps * 32.
template <typename T, bool BLOCK>
__device__ __forceinline__ void tl_moe_gate_up_silu_fp8(const T* x, const uint8_t* w, const float* scale, T* act,
                                                        const int* ids, int k, int in, int inter, int row_block) {
  constexpr int U = kMoeFp8Chunks;
  __shared__ __align__(16) uint4 stage[kMoeFp8Warps][4][U][32];  // gate, up, x's first and second 8 elements
  __shared__ float stage_s[kMoeFp8Warps][2][U][32];              // gate's and up's block scales
  const long long p = blockIdx.x;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int row = blockIdx.y * kMoeFp8Warps + warp;
  if (row >= inter) return;
  const long long gg = (long long)ids[p] * 2 * inter + row, gu = gg + inter;
  const T* xr = x + (p / k) * in;
  float g, u;
  if ((in & 15) == 0) {
    const int chunks = in >> 4;
    const int kb = (in + tlfp8::kFp8Block - 1) / tlfp8::kFp8Block;
    const uint4* wg = reinterpret_cast<const uint4*>(w + gg * in);
    const uint4* wu = reinterpret_cast<const uint4*>(w + gu * in);
    const uint4* x4 = reinterpret_cast<const uint4*>(xr);
    const float* sg = scale + (BLOCK ? (gg / row_block) * kb : gg);
    const float* su = scale + (BLOCK ? (gu / row_block) * kb : gu);
    float ag = 0.0f, au = 0.0f;
    for (int base = 0; base < chunks; base += 32 * U) {
#pragma unroll
      for (int q = 0; q < U; ++q) {
        const int c = base + lane + 32 * q;
        const int b = c < chunks ? 16 : 0, cc = c < chunks ? c : 0;  // past the row: zeros, nothing read
        cp_async16(smem_addr(&stage[warp][0][q][lane]), wg + cc, b);
        cp_async16(smem_addr(&stage[warp][1][q][lane]), wu + cc, b);
        cp_async16(smem_addr(&stage[warp][2][q][lane]), x4 + 2 * cc, b);
        cp_async16(smem_addr(&stage[warp][3][q][lane]), x4 + 2 * cc + 1, b);
        if (BLOCK) {  // 8 chunks of 16 a 128-column block
          tlmoegemm::cp_async4(smem_addr(&stage_s[warp][0][q][lane]), sg + (cc >> 3), b / 4);
          tlmoegemm::cp_async4(smem_addr(&stage_s[warp][1][q][lane]), su + (cc >> 3), b / 4);
        }
      }
      tl_moe_stage_wait();
#pragma unroll
      for (int q = 0; q < U; ++q) {
        const uint4 xa = stage[warp][2][q][lane], xb = stage[warp][3][q][lane];
        float wf[16];
        tlfp8::unpack16(stage[warp][0][q][lane], wf);
        const float dg = tlfp8::dot16<T>(wf, xa, xb);
        tlfp8::unpack16(stage[warp][1][q][lane], wf);
        const float du = tlfp8::dot16<T>(wf, xa, xb);
        ag = BLOCK ? fmaf(stage_s[warp][0][q][lane], dg, ag) : ag + dg;  // zero chunks add zero
        au = BLOCK ? fmaf(stage_s[warp][1][q][lane], du, au) : au + du;
      }
      tl_moe_stage_done();
    }
    g = warp_sum(ag);
    u = warp_sum(au);
    if (!BLOCK) {
      g *= sg[0];
      u *= su[0];
    }
  } else {
    g = warp_sum(tl_moe_fp8_partial<T, BLOCK>(xr, w, scale, gg, in, row_block));
    u = warp_sum(tl_moe_fp8_partial<T, BLOCK>(xr, w, scale, gu, in, row_block));
    if (!BLOCK) {
      g *= scale[gg];
      u *= scale[gu];
    }
  }
  if (lane == 0) act[p * inter + row] = tl_moe_silu_mul<T>(g, u);
}

// down + the weighted sum over FP8 experts: y[t, o] = sum over s < k of weights[t*k+s] * (expert ids[t*k+s]'s row o .
// act[t*k+s]), each chunk's coefficient the slot's routing weight times its block's scale (BLOCK) or its row's. The k
// rows of whole 16-byte chunks are one run of k * chunks chunks, cut into `splits` contiguous parts, one warp each
// (splits divides kMoeFp8Warps; a block takes kMoeFp8Warps / splits output rows): the host picks the fewest parts that
// leave a lane at most kMoeFp8Chunks chunks (MoeDecodeKernels.downSplits), so a part is one group as above (each chunk
// with its two act chunks and, BLOCK, its scale). The token's k expert ids and routing weights are read once, a lane
// each, and handed out by warp shuffles. A row's parts are summed in part order in shared memory by its first warp:
// deterministic, no atomics. Other widths: the slots s = part, part + splits, ..., each through tl_moe_fp8_partial.
// Launch: grid (n, ceil(out / (kMoeFp8Warps / splits))), block kMoeFp8Warps * 32; k <= 32.
template <typename T, bool BLOCK, bool RES = false>
__device__ __forceinline__ void tl_moe_down_sum_fp8(const T* act, const uint8_t* w, const float* scale, T* y,
                                                    const int* ids, const float* weights, int k, int in, int out,
                                                    int row_block, int splits, float* r = nullptr) {
  constexpr int U = kMoeFp8Chunks;
  __shared__ __align__(16) uint4 stage[kMoeFp8Warps][3][U][32];  // the weight chunk, its act's two chunks
  __shared__ float stage_s[kMoeFp8Warps][U][32];                 // the chunk's scale (BLOCK)
  __shared__ float part[kMoeFp8Warps];
  const long long t = blockIdx.x;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int sp = warp % splits;
  const int row = blockIdx.y * (kMoeFp8Warps / splits) + warp / splits;
  float acc = 0.0f;
  if (row < out) {  // the same for the whole warp
    const int kb = (in + tlfp8::kFp8Block - 1) / tlfp8::kFp8Block;
    if ((in & 15) == 0) {
      const int chunks = in >> 4, total = k * chunks;
      const int len = (total + splits - 1) / splits;
      const int begin = sp * len, end = min(total, begin + len);
      const int my_id = lane < k ? ids[t * k + lane] : 0;
      const float my_w = lane < k ? weights[t * k + lane] : 0.0f;
      const uint4* w4 = reinterpret_cast<const uint4*>(w);
      const uint4* a4 = reinterpret_cast<const uint4*>(act);
      for (int base = begin; base < end; base += 32 * U) {  // a warp-uniform trip count: every lane shuffles
        float ws[U];
#pragma unroll
        for (int q = 0; q < U; ++q) {
          const int cc = base + lane + 32 * q;
          const int s = min(cc / chunks, k - 1);
          const long long g = (long long)__shfl_sync(0xffffffffu, my_id, s) * out + row;
          ws[q] = __shfl_sync(0xffffffffu, my_w, s);
          const int b = cc < end ? 16 : 0;  // past the part: zeros, nothing read
          const int j = cc < end ? cc - s * chunks : 0;
          const long long xo = (t * k + s) * 2 * chunks + 2 * j;  // 8 T elements a uint4: two act chunks per 16 weights
          cp_async16(smem_addr(&stage[warp][0][q][lane]), w4 + g * chunks + j, b);
          cp_async16(smem_addr(&stage[warp][1][q][lane]), a4 + xo, b);
          cp_async16(smem_addr(&stage[warp][2][q][lane]), a4 + xo + 1, b);
          tlmoegemm::cp_async4(smem_addr(&stage_s[warp][q][lane]),
                               scale + (BLOCK ? (g / row_block) * kb + (j >> 3) : g), b / 4);
        }
        tl_moe_stage_wait();
#pragma unroll
        for (int q = 0; q < U; ++q) {
          float wf[16];
          tlfp8::unpack16(stage[warp][0][q][lane], wf);
          const float d = tlfp8::dot16<T>(wf, stage[warp][1][q][lane], stage[warp][2][q][lane]);
          acc = fmaf(ws[q] * stage_s[warp][q][lane], d, acc);  // zero chunks add zero
        }
        tl_moe_stage_done();
      }
    } else {
      for (int s = sp; s < k; s += splits) {
        const long long p = t * k + s;
        const long long g = (long long)ids[p] * out + row;
        const float d = tl_moe_fp8_partial<T, BLOCK>(act + p * in, w, scale, g, in, row_block);
        acc = fmaf(weights[p] * (BLOCK ? 1.0f : scale[g]), d, acc);
      }
    }
  }
  acc = warp_sum(acc);
  if (splits == 1) {  // the same for the whole block
    if (lane == 0 && row < out) down_out<T, RES>(acc, y, r, t * out + row);
    return;
  }
  if (lane == 0) part[warp] = acc;
  __syncthreads();
  if (sp == 0 && lane == 0 && row < out) {
    float sum = part[warp];
    for (int i = 1; i < splits; ++i) sum += part[warp + i];
    down_out<T, RES>(sum, y, r, t * out + row);
  }
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
  extern "C" __global__ void __launch_bounds__(kMoeFp8Warps * 32) tl_moe_gate_up_silu_fp8_block_##SUF(              \
      const T* x, const uint8_t* w, const float* scale, T* act, const int* ids, int k, int in, int inter,         \
      int row_block) {                                                                                             \
    tlpdl::enter();                                                                                                \
    tl_moe_gate_up_silu_fp8<T, true>(x, w, scale, act, ids, k, in, inter, row_block);                              \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kMoeFp8Warps * 32) tl_moe_gate_up_silu_fp8_row_##SUF(                \
      const T* x, const uint8_t* w, const float* scale, T* act, const int* ids, int k, int in, int inter,         \
      int row_block) {                                                                                             \
    tlpdl::enter();                                                                                                \
    tl_moe_gate_up_silu_fp8<T, false>(x, w, scale, act, ids, k, in, inter, row_block);                             \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kMoeFp8Warps * 32) tl_moe_down_sum_fp8_block_##SUF(                  \
      const T* act, const uint8_t* w, const float* scale, T* y, const int* ids, const float* weights, int k,      \
      int in, int out, int row_block, int splits) {                                                                \
    tlpdl::enter();                                                                                                \
    tl_moe_down_sum_fp8<T, true>(act, w, scale, y, ids, weights, k, in, out, row_block, splits);                    \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kMoeFp8Warps * 32) tl_moe_down_sum_fp8_row_##SUF(                    \
      const T* act, const uint8_t* w, const float* scale, T* y, const int* ids, const float* weights, int k,      \
      int in, int out, int row_block, int splits) {                                                                \
    tlpdl::enter();                                                                                                \
    tl_moe_down_sum_fp8<T, false>(act, w, scale, y, ids, weights, k, in, out, row_block, splits);                   \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32) tl_moe_down_sum_res_##SUF(                         \
      const T* act, const T* w, float* r, const int* ids, const float* weights, int k, int in, int out) {         \
    tlpdl::enter();                                                                                               \
    tl_moe_down_sum<T, true>(act, w, nullptr, ids, weights, k, in, out, r);                                        \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kMoeFp8Warps * 32) tl_moe_down_sum_res_fp8_block_##SUF(              \
      const T* act, const uint8_t* w, const float* scale, float* r, const int* ids, const float* weights, int k,  \
      int in, int out, int row_block, int splits) {                                                                \
    tlpdl::enter();                                                                                                \
    tl_moe_down_sum_fp8<T, true, true>(act, w, scale, nullptr, ids, weights, k, in, out, row_block, splits, r);     \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kMoeFp8Warps * 32) tl_moe_down_sum_res_fp8_row_##SUF(                \
      const T* act, const uint8_t* w, const float* scale, float* r, const int* ids, const float* weights, int k,  \
      int in, int out, int row_block, int splits) {                                                                \
    tlpdl::enter();                                                                                                \
    tl_moe_down_sum_fp8<T, false, true>(act, w, scale, nullptr, ids, weights, k, in, out, row_block, splits, r);    \
  }
