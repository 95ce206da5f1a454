// Mixture-of-Experts kernels (Qwen3-MoE, Mixtral), included by tl_model.cu after the GEMV (uses its dot helpers).
//
// A MoE layer on one tensor-parallel rank: the router (x · router^T into fp32 logits, a cuBLAS GEMM launched by the
// engine), tl_moe_route (softmax + top-k + renormalise on the GPU), then for steps of few tokens (decode, captured in
// CUDA graphs: no host round trip) tl_moe_gate_up (each (token, slot) pair's gate/up through its expert's rows),
// tl_silu_mul over the pairs, tl_moe_down (each pair's down projection, fp32) and tl_moe_combine_f32 (each token's k
// rows weighted and summed): a step reads only the routed experts' rows. Long steps (prefill) group the pairs by
// expert instead (tl_moe_sort), run one cuBLAS GEMM per expert on the gathered rows, and tl_moe_combine un-permutes.
//
// Layouts (every expert's shard stacked, expert-major, as nn.Linear weights):
//   w_gate_up [E, 2*inter, hidden]: expert e's gate rows then its up rows (this rank's columns of the intermediate);
//   w_down    [E, hidden, inter]:   expert e's down_proj columns of this rank;
//   ids [n*k] int32 and weights [n*k] fp32: token t's slots t*k .. t*k+k-1, in descending router probability.
// Pair p = t*k + s is the token's slot s; gate_up [n*k, 2*inter] and act [n*k, inter] hold one row per pair.

namespace tlnorm {
template <>
struct Cv<float> {  // fp32 rows (the pairs' down projections) through the same load/store helpers
  __device__ __forceinline__ static float f(float v) { return v; }
  __device__ __forceinline__ static float t(float v) { return v; }
};
}  // namespace tlnorm

// ---- routing ---------------------------------------------------------------------------------------------------
// logits [n, E] fp32. Per token: p = softmax(logits) in fp32; the k largest p (ties: the lower expert index; NaN is
// never chosen before a number, and a row of NaN still yields k distinct in-range ids); weight = p (norm == 0) or p /
// (sum of the k chosen p) (norm == 1, Mixtral and Qwen3-MoE with norm_topk_prob). E <= 32 * kMoeMaxPerLane, k <= min(E,
// 32). Launch: grid ceil(n / kMoeRouteWarps), block kMoeRouteWarps * 32 (one warp per token).
constexpr int kMoeRouteWarps = 4;
constexpr int kMoeMaxPerLane = 16;  // 512 experts

__device__ __forceinline__ bool tl_moe_better(float v, int i, float bv, int bi) {
  return v > bv || (v == bv && i < bi);
}

// One token's routing by one whole warp: row [E] fp32 logits (read through L2: tl_moe_router's last block reads rows
// other blocks wrote), ids [k] and weights [k] its outputs.
__device__ __forceinline__ void tl_moe_route_row(const float* row, int E, int k, int norm, int* ids, float* weights) {
  const int lane = threadIdx.x & 31;
  float v[kMoeMaxPerLane];
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < kMoeMaxPerLane; ++j) {
    const int e = lane + 32 * j;
    v[j] = e < E ? __ldcg(row + e) : -INFINITY;
    if (v[j] > m) m = v[j];  // NaN never raises the max
  }
  m = warp_max(m);
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < kMoeMaxPerLane; ++j) {
    const int e = lane + 32 * j;
    if (e < E) {
      v[j] = expf(v[j] - m);
      if (v[j] == v[j]) s += v[j];
      else v[j] = -1.0f;  // NaN: below every probability, still choosable
    } else {
      v[j] = -2.0f;  // past E: never chosen
    }
  }
  s = warp_sum(s);
  float mine = 0.0f, chosen = 0.0f;
  int mineId = 0;
  for (int r = 0; r < k; ++r) {
    float bv = -3.0f;
    int bi = INT_MAX;
#pragma unroll
    for (int j = 0; j < kMoeMaxPerLane; ++j) {
      const int e = lane + 32 * j;
      if (tl_moe_better(v[j], e, bv, bi)) {
        bv = v[j];
        bi = e;
      }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
      const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
      if (tl_moe_better(ov, oi, bv, bi)) {
        bv = ov;
        bi = oi;
      }
    }
#pragma unroll
    for (int j = 0; j < kMoeMaxPerLane; ++j) {
      if (lane + 32 * j == bi) v[j] = -2.0f;
    }
    const float pv = fmaxf(bv, 0.0f);
    chosen += pv;
    if (lane == r) {
      mine = pv;
      mineId = bi;
    }
  }
  if (lane < k) {
    ids[lane] = mineId;
    weights[lane] = norm ? (chosen > 0.0f ? mine / chosen : 1.0f / k) : (s > 0.0f ? mine / s : 0.0f);
  }
}

__device__ __forceinline__ void tl_moe_route(const float* logits, int n, int E, int k, int norm, int* ids,
                                             float* weights) {
  const int t = blockIdx.x * kMoeRouteWarps + (threadIdx.x >> 5);
  if (t >= n) return;
  tl_moe_route_row(logits + (long long)t * E, E, k, norm, ids + (long long)t * k, weights + (long long)t * k);
}

// ---- expert linears -------------------------------------------------------------------------------------------
// One warp's dot product of a weight row w[in] with x[in], fp32, returned in every lane. Rows of whole 16-byte chunks
// (in % 8 == 0, w and x 16-byte aligned) take the GEMV's streamed loads; other widths (a per-rank expert slice such as
// 702 / 2 = 351) a scalar loop. XS: x in shared memory (ld_x; the same arithmetic).
template <typename T, bool XS = false>
__device__ __forceinline__ float tl_moe_row_dot(const T* w, const T* x, int in) {
  const int lane = threadIdx.x & 31;
  float acc = 0.0f;
  if ((in & 7) == 0) {
    const uint4* wr = reinterpret_cast<const uint4*>(w);
    const uint4* xr = reinterpret_cast<const uint4*>(x);
    const int chunks = in >> 3;
    int c = lane;
    for (; c + 32 * (kGemvUnroll - 1) < chunks; c += 32 * kGemvUnroll) {
      uint4 wv[kGemvUnroll], xv[kGemvUnroll];
#pragma unroll
      for (int u = 0; u < kGemvUnroll; ++u) wv[u] = ld_stream(wr + c + 32 * u);
#pragma unroll
      for (int u = 0; u < kGemvUnroll; ++u) xv[u] = ld_x<XS>(xr + c + 32 * u);
#pragma unroll
      for (int u = 0; u < kGemvUnroll; ++u) acc = dot8<T>(wv[u], xv[u], acc);
    }
    for (; c < chunks; c += 32) acc = dot8<T>(ld_stream(wr + c), ld_x<XS>(xr + c), acc);
  } else {
    for (int c = lane; c < in; c += 32) acc = fmaf(ld(w, c), ld(x, c), acc);
  }
  return warp_sum(acc);
}

// The pairs' expert linears: y[p, o] = Y(w[ids[p], o, :] . x[p / xdiv, :]), fp32 accumulation; x [*, in] T, w [E, out,
// in] T. gate/up: x the tokens' rows (xdiv = k), Y = T; down: x the pairs' act rows (xdiv = 1), Y = fp32 (tl_moe_combine
// sums them). Launch: grid (pairs, ceil(out / kGemvWarps)), block kGemvWarps * 32 (one warp per output row of one pair).
template <typename T, typename Y>
__device__ __forceinline__ void tl_moe_pairs(const T* x, const T* w, Y* y, const int* ids, int xdiv, int in, int out) {
  const long long p = blockIdx.x;
  const int row = blockIdx.y * kGemvWarps + (threadIdx.x >> 5);
  if (row >= out) return;
  const long long e = ids[p];
  const float acc = tl_moe_row_dot<T>(w + (e * out + row) * in, x + (p / xdiv) * in, in);
  if ((threadIdx.x & 31) == 0) y[p * out + row] = Cv<Y>::t(acc);
}

// y[t, o] = T(sum over s < k, in slot order, of weights[t*k+s] * ys[r(t*k+s), o]) with r(p) = inv[p], or p when inv is
// null; ys [*, out] in Y (fp32 from tl_moe_pairs, or T from the grouped GEMMs). Launch: grid-stride over n*out
// elements, block 256.
template <typename T, typename Y>
__device__ __forceinline__ void tl_moe_combine(const Y* ys, const int* inv, const float* weights, T* y, int n, int k,
                                               int out) {
  const long long total = (long long)n * out;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += stride) {
    const long long t = idx / out, o = idx - t * out;
    float acc = 0.0f;
    for (int s = 0; s < k; ++s) {
      const long long p = t * k + s;
      const long long r = inv ? inv[p] : p;
      acc = fmaf(weights[p], ld(ys, r * out + o), acc);
    }
    y[idx] = Cv<T>::t(acc);
  }
}

// Groups the pairs by expert for the grouped GEMMs of long steps: counts[e] (E), offsets[e] = sum of counts below e
// (E + 1 entries), sorted_tok[j] = the token of the j-th pair in expert order (pairs of one expert in pair order: stable,
// so the result never depends on scheduling), inv[p] = where pair p went. Launch: one block of kMoeSortThreads; E <= 512.
// Each of the block's 16 warps owns one contiguous segment of the pairs (segments in pair order): it counts its pairs
// per expert (lanes of one expert found with __match_any_sync, their leader adds the group's size), thread e then turns
// the 16 counts of expert e into each segment's first slot, and each warp walks its segment again, 32 pairs at a time,
// placing a pair at its segment's slot for the expert plus its rank among the lanes of that expert below it. Every
// read of ids is coalesced and every pass is parallel over the segments (the first version scanned all pairs once per
// expert: 1.5 ms for 2,048 tokens x top-8 over 128 experts).
constexpr int kMoeSortThreads = 512;
constexpr int kMoeSortWarps = kMoeSortThreads / 32;
__device__ __forceinline__ void tl_moe_sort(const int* ids, int pairs, int E, int k, int* counts, int* offsets,
                                            int* sorted_tok, int* inv) {
  __shared__ int slot[kMoeSortWarps][kMoeSortThreads];  // per segment and expert: its count, then its first slot
  __shared__ int warp_sum[kMoeSortWarps];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int i = tid; i < kMoeSortWarps * kMoeSortThreads; i += blockDim.x) (&slot[0][0])[i] = 0;
  __syncthreads();
  const int seg = (pairs + kMoeSortWarps - 1) / kMoeSortWarps;
  const int begin = min(pairs, warp * seg), end = min(pairs, begin + seg);
  const unsigned below = (1u << lane) - 1u;
  for (int base = begin; base < end; base += 32) {
    const int p = base + lane;
    const int id = p < end ? ids[p] : -1;
    const int e = id < E ? id : -1;  // an id out of range (never written by tl_moe_route) is not placed
    const unsigned same = __match_any_sync(0xffffffffu, e);
    if (e >= 0 && (same & below) == 0) slot[warp][e] += __popc(same);  // the group's leader; one leader per expert
    __syncwarp();
  }
  __syncthreads();
  // thread e: the expert's total, then an exclusive scan of the totals over the block (warp scans, then their sums)
  const int e = tid;
  int c = 0;
  if (e < E) {
    for (int w = 0; w < kMoeSortWarps; ++w) c += slot[w][e];
    counts[e] = c;
  }
  int incl = c;
  for (int d = 1; d < 32; d <<= 1) {
    const int v = __shfl_up_sync(0xffffffffu, incl, d);
    if (lane >= d) incl += v;
  }
  if (lane == 31) warp_sum[warp] = incl;
  __syncthreads();
  int before = 0;
  for (int w = 0; w < warp; ++w) before += warp_sum[w];
  const int excl = before + incl - c;
  if (e < E) {
    offsets[e] = excl;
    if (e == E - 1) offsets[E] = excl + c;
    int run = excl;
    for (int w = 0; w < kMoeSortWarps; ++w) {
      const int n = slot[w][e];
      slot[w][e] = run;
      run += n;
    }
  }
  __syncthreads();
  for (int base = begin; base < end; base += 32) {
    const int p = base + lane;
    const int id = p < end ? ids[p] : -1;
    const int e2 = id < E ? id : -1;
    const unsigned same = __match_any_sync(0xffffffffu, e2);
    if (e2 >= 0) {
      const int j = slot[warp][e2] + __popc(same & below);
      sorted_tok[j] = p / k;
      inv[p] = j;
    }
    __syncwarp();
    if (e2 >= 0 && (same & below) == 0) slot[warp][e2] += __popc(same);
    __syncwarp();
  }
}

#define TL_MOE_ENTRIES(SUF, T)                                                                                     \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32)                                                    \
      tl_moe_gate_up_##SUF(const T* x, const T* w, T* y, const int* ids, int k, int in, int out) {                \
    tlpdl::enter();                                                                                               \
    tl_moe_pairs<T, T>(x, w, y, ids, k, in, out);                                                                  \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32)                                                    \
      tl_moe_down_##SUF(const T* act, const T* w, float* y, const int* ids, int in, int out) {                    \
    tlpdl::enter();                                                                                               \
    tl_moe_pairs<T, float>(act, w, y, ids, 1, in, out);                                                            \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(256)                                                                \
      tl_moe_combine_f32_##SUF(const float* ys, const int* inv, const float* weights, T* y, int n, int k, int out) { \
    tlpdl::enter();                                                                                                  \
    tl_moe_combine<T, float>(ys, inv, weights, y, n, k, out);                                                      \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(256)                                                                \
      tl_moe_combine_##SUF(const T* ys, const int* inv, const float* weights, T* y, int n, int k, int out) {      \
    tlpdl::enter();                                                                                               \
    tl_moe_combine<T, T>(ys, inv, weights, y, n, k, out);                                                          \
  }

extern "C" __global__ void __launch_bounds__(kMoeSortThreads)
    tl_moe_sort_i32(const int* ids, int pairs, int E, int k, int* counts, int* offsets, int* sorted_tok, int* inv) {
  tlpdl::enter();
  tl_moe_sort(ids, pairs, E, k, counts, offsets, sorted_tok, inv);
}

extern "C" __global__ void __launch_bounds__(kMoeRouteWarps * 32)
    tl_moe_route_f32(const float* logits, int n, int E, int k, int norm, int* ids, float* weights) {
  tlpdl::enter();
  tl_moe_route(logits, n, E, k, norm, ids, weights);
}
