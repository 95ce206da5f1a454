// Mixture-of-Experts kernels (Qwen3-MoE, Mixtral), included by tl_model.cu after the GEMV (uses its dot helpers).
//
// A MoE layer on one tensor-parallel rank: the router (x · router^T into fp32 logits, a cuBLAS GEMM launched by the
// engine), tl_moe_route (softmax + top-k + renormalise on the GPU), tl_moe_gate_up (each (token, slot) pair's gate/up
// projection through its expert's weight shard), tl_silu_mul over the pairs, tl_moe_down (each token's down
// projections of its k experts, weighted and summed into one row). Expert selection stays on the device, so a decode
// step with MoE layers is captured in a CUDA graph like a dense one, and a step reads only the routed experts' rows.
//
// Layouts (every expert's shard stacked, expert-major, as nn.Linear weights):
//   w_gate_up [E, 2*inter, hidden]: expert e's gate rows then its up rows (this rank's columns of the intermediate);
//   w_down    [E, hidden, inter]:   expert e's down_proj columns of this rank;
//   ids [n*k] int32 and weights [n*k] fp32: token t's slots t*k .. t*k+k-1, in descending router probability.
// Pair p = t*k + s is the token's slot s; gate_up [n*k, 2*inter] and act [n*k, inter] hold one row per pair.

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

__device__ __forceinline__ void tl_moe_route(const float* logits, int n, int E, int k, int norm, int* ids,
                                             float* weights) {
  const int t = blockIdx.x * kMoeRouteWarps + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (t >= n) return;
  const float* row = logits + (long long)t * E;
  float v[kMoeMaxPerLane];
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < kMoeMaxPerLane; ++j) {
    const int e = lane + 32 * j;
    v[j] = e < E ? row[e] : -INFINITY;
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
    const long long o = (long long)t * k + lane;
    ids[o] = mineId;
    weights[o] = norm ? (chosen > 0.0f ? mine / chosen : 1.0f / k) : (s > 0.0f ? mine / s : 0.0f);
  }
}

// ---- expert linears -------------------------------------------------------------------------------------------
// One warp's dot product of a weight row w[in] with x[in], fp32, returned in every lane. Rows of whole 16-byte chunks
// (in % 8 == 0, w and x 16-byte aligned) take the GEMV's streamed loads; other widths (a per-rank expert slice such as
// 702 / 2 = 351) a scalar loop.
template <typename T>
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
      for (int u = 0; u < kGemvUnroll; ++u) xv[u] = ld_readonly(xr + c + 32 * u);
#pragma unroll
      for (int u = 0; u < kGemvUnroll; ++u) acc = dot8<T>(wv[u], xv[u], acc);
    }
    for (; c < chunks; c += 32) acc = dot8<T>(ld_stream(wr + c), ld_readonly(xr + c), acc);
  } else {
    for (int c = lane; c < in; c += 32) acc = fmaf(ld(w, c), ld(x, c), acc);
  }
  return warp_sum(acc);
}

// x [n, in] T (token rows); w [E, out, in] T; y [n*k, out] T: y[p, o] = T(w[ids[p], o, :] · x[p / k, :]).
// Launch: grid (n*k, ceil(out / kGemvWarps)), block kGemvWarps * 32 (one warp per output row of one pair).
template <typename T>
__device__ __forceinline__ void tl_moe_gate_up(const T* x, const T* w, T* y, const int* ids, int k, int in,
                                               int out) {
  const long long p = blockIdx.x;
  const int row = blockIdx.y * kGemvWarps + (threadIdx.x >> 5);
  if (row >= out) return;
  const long long e = ids[p];
  const float acc = tl_moe_row_dot<T>(w + (e * out + row) * in, x + (p / k) * in, in);
  if ((threadIdx.x & 31) == 0) y[p * out + row] = Cv<T>::t(acc);
}

// act [n*k, in] T (pair rows); w [E, out, in] T; weights [n*k] fp32; y [n, out] T:
// y[t, o] = T(sum over s < k of weights[t*k+s] * (w[ids[t*k+s], o, :] · act[t*k+s, :])), fp32 throughout, slots in
// order. Launch: grid (n, ceil(out / kGemvWarps)), block kGemvWarps * 32.
template <typename T>
__device__ __forceinline__ void tl_moe_down(const T* act, const T* w, T* y, const int* ids, const float* weights,
                                            int k, int in, int out) {
  const long long t = blockIdx.x;
  const int row = blockIdx.y * kGemvWarps + (threadIdx.x >> 5);
  if (row >= out) return;
  float acc = 0.0f;
  for (int s = 0; s < k; ++s) {
    const long long p = t * k + s;
    const long long e = ids[p];
    acc = fmaf(weights[p], tl_moe_row_dot<T>(w + (e * out + row) * in, act + p * in, in), acc);
  }
  if ((threadIdx.x & 31) == 0) y[t * out + row] = Cv<T>::t(acc);
}

#define TL_MOE_ENTRIES(SUF, T)                                                                                     \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32)                                                    \
      tl_moe_gate_up_##SUF(const T* x, const T* w, T* y, const int* ids, int k, int in, int out) {                \
    tl_moe_gate_up<T>(x, w, y, ids, k, in, out);                                                                   \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32)                                                    \
      tl_moe_down_##SUF(const T* act, const T* w, T* y, const int* ids, const float* weights, int k, int in,      \
                        int out) {                                                                                 \
    tl_moe_down<T>(act, w, y, ids, weights, k, in, out);                                                           \
  }

extern "C" __global__ void __launch_bounds__(kMoeRouteWarps * 32)
    tl_moe_route_f32(const float* logits, int n, int E, int k, int norm, int* ids, float* weights) {
  tl_moe_route(logits, n, E, k, norm, ids, weights);
}
