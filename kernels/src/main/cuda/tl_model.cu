// Tensorlane forward-pass kernels of a Llama / Mistral / Qwen2 / Qwen3 decoder layer (FP8 weights: tl_fp8.cuh;
// Mixture-of-Experts layers of Qwen3-MoE / Mixtral: tl_moe.cuh).
//
// Built into its own fatbin (io/tensorlane/kernels/tl_model.fatbin) by build-fatbin.sh; launched by the Java class
// io.tensorlane.runtime.llm.ModelKernels, which chooses the grids and blocks documented on each kernel and checks
// the alignment preconditions stated here.
//
// Conventions shared by every kernel:
//   * T is __nv_bfloat16 (suffix _bf16) or __half (suffix _fp16); every kernel is instantiated for both.
//   * All arithmetic is fp32; each T output element is rounded once (round to nearest even) at the end.
//   * Tensors are row-major and densely packed; shapes are given as [rows, cols].
//   * Element offsets that can exceed 2^31 (caches, token x hidden products) are computed in 64 bits.
//   * Pointers documented as nullable may be 0.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <climits>

#include "tl_norm.cuh"
#include "tl_pdl.cuh"
#include "tl_kvcache.cuh"

namespace {

using tlnorm::block_sum;
using tlnorm::Cv;
using tlnorm::ld;
using tlnorm::warp_sum;

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

constexpr float kLog2e = 1.4426950408889634f;

}  // namespace

// ---- embedding ----------------------------------------------------------------------------------------------
// ids [n] int32; table [vocab_rows, hidden] (this rank's vocabulary shard, global rows
// [vocab_start, vocab_start + vocab_rows)); out [n, hidden].
// out[i,:] = table[ids[i] - vocab_start, :] when that row is inside the shard, else 0 (the engine allreduces the
// shards' outputs). Exact copy, no arithmetic.
// Launch: grid (n), block 256; threads stride over the row.
template <typename T>
__device__ __forceinline__ void tl_embed(const int* ids, int n, const T* table, int vocab_start, int vocab_rows,
                                         int hidden, T* out) {
  const int i = blockIdx.x;
  if (i >= n) return;
  const int r = ids[i] - vocab_start;
  const bool in = r >= 0 && r < vocab_rows;
  const T* src = table + (long long)(in ? r : 0) * hidden;
  T* dst = out + (long long)i * hidden;
  const T zero = Cv<T>::t(0.0f);
  for (int j = threadIdx.x; j < hidden; j += blockDim.x) dst[j] = in ? src[j] : zero;
}

// ---- residual add + RMSNorm -----------------------------------------------------------------------------------
// residual [n, hidden] fp32 (in/out); delta [n, hidden] T (unused in mode 2, may then be 0); weight [hidden] T;
// out [n, hidden] T.
//   mode 0: residual = float(delta)      (first layer: the embedding output starts the residual stream)
//   mode 1: residual += float(delta)     (attention / MLP output added to the stream)
//   mode 2: residual unchanged           (norm of the stream only)
// then out[i,j] = T(weight[j] * residual[i,j] * rsqrt(mean_j(residual[i,j]^2) + eps)).
// The row's work is tlnorm::add_rmsnorm_row (tl_norm.cuh), shared with the fused allreduce. Launch: grid (n), block
// 512 (one block per row). Shared: 32 floats.
template <typename T>
__device__ __forceinline__ void tl_add_rmsnorm(float* residual, const T* delta, const T* weight, T* out, int n,
                                               int hidden, float eps, int mode) {
  __shared__ float red[32];
  const int i = blockIdx.x;
  if (i >= n) return;
  tlnorm::add_rmsnorm_row<T>(residual + (long long)i * hidden, delta + (long long)i * hidden, weight,
                             out + (long long)i * hidden, hidden, eps, mode, red);
}

// ---- QKV bias + per-head norm + RoPE + paged-cache write -------------------------------------------------------
// qkv [n, (hq + 2hk) * hd], each row = [q heads | k heads | v heads] (head-major, hd contiguous);
// bias (nullable) [(hq + 2hk) * hd] in the same layout, added first (Qwen2);
// q_norm, k_norm (nullable, Qwen3) [hd]: per-head RMSNorm weights applied to every q / k head after the bias;
// cos, sin [max_positions, hd/2] fp32: cos[p*(hd/2) + i] = cos(p * inv_freq[i]);
// positions [n] int32; slots [n] int32 (cache slot of the token, < 0: do not write its k/v);
// q_out [n, hq, hd]; k_cache, v_cache [num_slots, hk, hd] of C: T, or e4m3 codes (C = uint8_t) written as
// tlkv::encode<T>(value, kv_scale[0] for k, kv_scale[1] for v) (tl_kvcache.cuh; kv_scale unused with C = T).
// RoPE (Hugging Face rotate_half) on q and k, for i < hd/2:
//   y[i] = x[i]*c - x[i+hd/2]*s,  y[i+hd/2] = x[i+hd/2]*c + x[i]*s   (c, s at row positions[t], column i; x*c rounded,
//   then one fma with the other product).
// v gets the bias only. Requires hd % 32 == 0 and hd <= 256.
// Launch: one warp per (token, head), head over hq + hk + hk; block 128 (4 warps), grid ceil(n*(hq+2hk)/4).
// Shared: 4 x 256 floats (each warp stages its head to read the rotation partner).
constexpr int kRopeWarps = 4;
// One warp's head h of a token's qkv row (at rowOff): lane l's elements e = l + 32k (k < hd / 32) with the bias; for a
// q or k head (rotate) also the optional per-head RMSNorm (weight nw, nullable) and RoPE at position pos. stage: hd
// floats of the warp's own (the rotation partner's values). tl_qkv_rope writes y; the attention kernel that computes
// its own rows (tl_attn_split with a RopeIn) keeps them, so both hold the same values.
template <typename T>
__device__ __forceinline__ void qkv_head(const T* qkv, const T* bias, const T* nw, float eps, const float* cos,
                                         const float* sin, long long pos, long long rowOff, int h, int hd, bool rotate,
                                         float* stage, float (&y)[8]) {
  const int lane = threadIdx.x & 31;
  const int per = hd >> 5;  // elements per lane (1..8)
  float x[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    if (k < per) {
      const int e = lane + 32 * k;
      float v = ld(qkv, rowOff + e);
      if (bias != nullptr) v += ld(bias, (long long)h * hd + e);
      x[k] = v;
    }
  }
  if (!rotate) {
#pragma unroll
    for (int k = 0; k < 8; ++k)
      if (k < per) y[k] = x[k];
    return;
  }
  if (nw != nullptr) {
    float ss = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; ++k)
      if (k < per) ss = __fmaf_rn(x[k], x[k], ss);
    const float inv = rsqrtf(warp_sum(ss) / (float)hd + eps);
#pragma unroll
    for (int k = 0; k < 8; ++k)
      if (k < per) x[k] = ld(nw, lane + 32 * k) * (x[k] * inv);
  }
#pragma unroll
  for (int k = 0; k < 8; ++k)
    if (k < per) stage[lane + 32 * k] = x[k];
  __syncwarp();
  const int half = hd >> 1;
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    if (k < per) {
      const int e = lane + 32 * k;
      const int i = e < half ? e : e - half;
      const float c = cos[pos * half + i], s = sin[pos * half + i];
      // rounded as written (x*c, then one fma with the partner), so no caller's inlining contracts it otherwise
      const float xc = __fmul_rn(x[k], c);
      y[k] = e < half ? __fmaf_rn(-stage[e + half], s, xc) : __fmaf_rn(stage[e - half], s, xc);
    }
  }
}
template <typename T, typename C = T>
__device__ __forceinline__ void tl_qkv_rope(const T* qkv, const T* bias, const T* q_norm, const T* k_norm, float eps,
                                            const float* cos, const float* sin, const int* positions,
                                            const int* slots, T* q_out, C* k_cache, C* v_cache, int n, int hq, int hk,
                                            int hd, const float* kv_scale = nullptr) {
  constexpr bool K8 = tlkv::kKv8<T, C>;
  __shared__ float stage[kRopeWarps][256];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int heads = hq + 2 * hk;
  const long long task = (long long)blockIdx.x * kRopeWarps + warp;
  if (task >= (long long)n * heads) return;  // whole warp leaves together
  const int t = (int)(task / heads), h = (int)(task % heads);
  const int per = hd >> 5;  // elements per lane (1..8): lane owns e = lane + 32*k
  const long long rowOff = (long long)t * heads * hd + (long long)h * hd;
  const bool isQ = h < hq, isK = !isQ && h < hq + hk;
  const int slot = isQ ? 0 : slots[t];
  if (slot < 0) return;  // nothing to write for this token's k and v heads
  float y[8];
  qkv_head<T>(qkv, bias, isQ ? q_norm : k_norm, eps, cos, sin, positions[t], rowOff, h, hd, isQ || isK, stage[warp],
              y);
  if (isQ) {
    T* qd = q_out + ((long long)t * hq + h) * hd;
#pragma unroll
    for (int k = 0; k < 8; ++k)
      if (k < per) qd[lane + 32 * k] = Cv<T>::t(y[k]);
  } else {
    const long long kvh = isK ? h - hq : h - hq - hk;
    C* dst = (isK ? k_cache : v_cache) + ((long long)slot * hk + kvh) * hd;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      if (k < per) {
        if constexpr (K8) {
          dst[lane + 32 * k] = tlkv::encode<T>(y[k], kv_scale[isK ? 0 : 1]);
        } else {
          dst[lane + 32 * k] = Cv<T>::t(y[k]);
        }
      }
    }
  }
}

// ---- paged causal attention (GQA, mixed prefill/decode batch) --------------------------------------------------
// q [n, hq, hd]; k_cache, v_cache [num_slots, hk, hd] (16-byte aligned base addresses);
// block_tables [num_seqs, max_blocks_per_seq] int32 (entries past a sequence's length are never read);
// token_seq [n], token_pos [n] int32: query t belongs to sequence token_seq[t] at position token_pos[t] and attends
// to that sequence's keys j = 0..token_pos[t], key j living in slot
//   block_tables[s * max_blocks_per_seq + j / block_size] * block_size + j % block_size.
// kv head of query head h = h / (hq / hk). out [n, hq, hd] = softmax_j(scale * q.k_j) v_j.
// All K/V of the step (including the query tokens' own) must be in the cache before launch.
// Requires hd % 32 == 0, hd <= 256, hq % hk == 0.
// Launch: grid (n, hq), block 128 = 4 warps. Warp w takes key tiles w, w+4, ... of 32 consecutive keys: lane l
// computes the score of key (tile*32 + l) (16-byte loads of its k row, q read from shared memory), the warp takes
// the tile max and rescales its running (max, sum, acc) state, then walks the tile's keys accumulating p_j * v_j
// with lane l owning output elements l + 32k (coalesced v reads). At the end the 4 warps' states are merged
// through shared memory. Online softmax in fp32, exp2 with log2(e) folded into the scale.
// Shared: q (256 floats) + per-warp acc (4 x 256 floats) + per-warp max/sum = ~5.1 KiB static.
// C = uint8_t: the cache holds e4m3 codes (tl_kvcache.cuh); k_scale multiplies the query's scale, v_scale the output.
constexpr int kAttnWarps = 4;
template <typename T, typename C = T>
__device__ __forceinline__ void tl_attention(const T* q, const C* k_cache, const C* v_cache, const int* block_tables,
                                             const int* token_seq, const int* token_pos, int max_blocks_per_seq,
                                             int block_size, T* out, int n, int hq, int hk, int hd, float scale,
                                             const float* kv_scale = nullptr) {
  constexpr bool K8 = tlkv::kKv8<T, C>;
  __shared__ float sq[256];
  __shared__ float sacc[kAttnWarps][256];
  __shared__ float sm[kAttnWarps], sl[kAttnWarps];
  const int t = blockIdx.x, h = blockIdx.y;
  if (t >= n) return;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int per = hd >> 5;
  const int kvh = h / (hq / hk);
  const int s = token_seq[t], p = token_pos[t];
  const int* bt = block_tables + (long long)s * max_blocks_per_seq;
  float sc = scale * kLog2e;  // scores in log2 units
  if constexpr (K8) sc *= kv_scale[0];
  for (int e = threadIdx.x; e < hd; e += blockDim.x) sq[e] = ld(q, ((long long)t * hq + h) * hd + e) * sc;
  __syncthreads();

  const long long headStride = (long long)hk * hd;  // elements per cache slot
  const long long kvOff = (long long)kvh * hd;
  const int nkeys = p + 1;
  const int ntiles = (nkeys + 31) >> 5;
  constexpr int V = 16 / sizeof(C);  // elements per 16-byte load

  float m = -INFINITY, l = 0.0f;
  float acc[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) acc[k] = 0.0f;

  for (int tile = warp; tile < ntiles; tile += kAttnWarps) {
    const int j = tile * 32 + lane;
    const bool valid = j < nkeys;
    long long slot = 0;
    float score = -INFINITY;
    if (valid) {
      slot = (long long)bt[j / block_size] * block_size + (j % block_size);
      const uint4* kr = reinterpret_cast<const uint4*>(k_cache + slot * headStride + kvOff);
      float dot = 0.0f;
      for (int c = 0; c < hd / V; ++c) {
        if constexpr (!K8) {
          union {
            uint4 raw;
            T e[V];
          } u;
          u.raw = __ldg(kr + c);
#pragma unroll
          for (int v = 0; v < V; ++v) dot = fmaf(Cv<T>::f(u.e[v]), sq[c * V + v], dot);
        } else {
          float f[V];
          tle4m3::unpack16(__ldg(kr + c), f);
#pragma unroll
          for (int v = 0; v < V; ++v) dot = fmaf(f[v], sq[c * V + v], dot);
        }
      }
      score = dot;
    }
    const float mt = warp_max(score);  // finite: lane 0 of every visited tile holds a valid key
    const float mn = fmaxf(m, mt);
    const float corr = exp2f(m - mn);  // m = -inf on the first tile: corr = 0
    const float pl = valid ? exp2f(score - mn) : 0.0f;
    l = l * corr + warp_sum(pl);
#pragma unroll
    for (int k = 0; k < 8; ++k) acc[k] *= corr;
    m = mn;
    const int cnt = min(32, nkeys - tile * 32);
    for (int jj = 0; jj < cnt; ++jj) {
      const float pj = __shfl_sync(0xffffffffu, pl, jj);
      const long long sj = __shfl_sync(0xffffffffu, slot, jj);
      const C* vr = v_cache + sj * headStride + kvOff;
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        if constexpr (!K8) {
          if (k < per) acc[k] = fmaf(pj, ld(vr, lane + 32 * k), acc[k]);
        } else {
          if (k < per) acc[k] = fmaf(pj, tlkv::decode(vr[lane + 32 * k]), acc[k]);
        }
      }
    }
  }
#pragma unroll
  for (int k = 0; k < 8; ++k)
    if (k < per) sacc[warp][lane + 32 * k] = acc[k];
  if (lane == 0) {
    sm[warp] = m;
    sl[warp] = l;
  }
  __syncthreads();
  float M = -INFINITY;
#pragma unroll
  for (int w = 0; w < kAttnWarps; ++w) M = fmaxf(M, sm[w]);
  float f[kAttnWarps];
  float L = 0.0f;
#pragma unroll
  for (int w = 0; w < kAttnWarps; ++w) {
    f[w] = exp2f(sm[w] - M);  // warps that saw no key: m = -inf, factor 0
    L += sl[w] * f[w];
  }
  float invL;
  if constexpr (K8) {
    invL = kv_scale[1] / L;
  } else {
    invL = 1.0f / L;
  }
  T* o = out + ((long long)t * hq + h) * hd;
  for (int e = threadIdx.x; e < hd; e += blockDim.x) {
    float v = 0.0f;
#pragma unroll
    for (int w = 0; w < kAttnWarps; ++w) v += sacc[w][e] * f[w];
    o[e] = Cv<T>::t(v * invL);
  }
}

// Merges the S (<= 32) slices of tl_attn_split for block row i and query head h: out[t, h, :] = sum_z f_z acc_z /
// sum_z f_z sum_z, f_z = 2^(max_z - max) (0 for a slice that held no key). The first warp reads every slice's (max,
// sum) at once (lane z: slice z) and leaves the factors in shared memory (sf, inv_l); then each thread sums its output
// elements over the slices with independent loads. Called by every thread of the block; ends with a barrier, so the
// scratch may be reused at once. FRESH: the slices were written by other blocks of the same launch (read through L2).
template <typename T, bool FRESH>
__device__ __forceinline__ void attn_merge(const float* ws, int i, int t, int h, T* out, int hq, int hd, int S,
                                           float* sf, float* inv_l) {
  const float* base = ws + ((long long)i * hq + h) * S * (hd + 2);
  auto ld_ws = [](const float* p) { return FRESH ? __ldcg(p) : *p; };
  if (threadIdx.x < 32) {
    const int z = threadIdx.x;
    const float mz = z < S ? ld_ws(base + (long long)z * (hd + 2)) : -INFINITY;
    const float lz = z < S ? ld_ws(base + (long long)z * (hd + 2) + 1) : 0.0f;
    const float M = warp_max(mz);  // finite: the slice holding key 0 saw a key
    const float f = mz == -INFINITY ? 0.0f : exp2f(mz - M);
    const float L = warp_sum(f == 0.0f ? 0.0f : lz * f);
    sf[z] = f;
    if (z == 0) *inv_l = 1.0f / L;
  }
  __syncthreads();
  const float invL = *inv_l;
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    float v = 0.0f;
#pragma unroll 8
    for (int z = 0; z < S; ++z) {
      const float f = sf[z];
      if (f != 0.0f) v += ld_ws(base + (long long)z * (hd + 2) + 2 + d) * f;
    }
    out[((long long)t * hq + h) * hd + d] = Cv<T>::t(v * invL);
  }
  __syncthreads();
}

// ---- paged causal attention, split keys (the fast path) -------------------------------------------------------
// Same inputs and output as tl_attention, for hd = 64 * NV (NV = 1, 2, 4). A block serves GH query heads that share a
// kv head (GH = 1, 2, 4, dividing hq / hk) for one query token and one of S = gridDim.z equal slices of its keys.
// The block's 16 groups of 8 lanes each walk keys group, group + 16, ... of the slice, two at a time: the 8 lanes of a
// group hold 8 * NV consecutive elements of the key's row (16-byte loads of K and V), so a score is 8 * NV fused
// multiply-adds per lane and three shuffles, and every group keeps its own online-softmax state (no cross-group
// traffic inside the loop). The groups of a warp merge through shuffles, the warps through shared memory.
// token_list (nullable) [n]: the block row i serves token token_list[i] (the tokens the prefill kernel leaves), else
// token i. S == 1: the block writes out. S > 1: it writes (max, sum, acc[hd]) to ws[((i * hq + h) * S + z) * (hd + 2)]
// and tl_attn_combine merges the slices, or, with tickets (int [n * gridDim.y], zero before the launch and after it),
// the last of the S blocks of (i, blockIdx.y) to finish merges them itself (attn_merge, the same arithmetic). S
// depends only on the launch (the host picks it from n and the heads), so a captured graph stays valid for any context
// length.
// C = uint8_t: the cache holds e4m3 codes (tl_kvcache.cuh): a lane's 8 * NV codes of a row are one 8-, 16- or
// 32-byte load; k_scale multiplies the query's scale, v_scale the block's output (or its slice's accumulators).
// Launch: grid (n, hk * (hq / hk / GH), S), block 128.
constexpr int kSplitWarps = 4;
// E (8, 16 or 32) e4m3 codes held in ceil(E / 16) 16-byte registers (E = 8: the low 8 bytes) -> E floats, exactly.
template <int E>
__device__ __forceinline__ void kv8_row(const uint4* raw, float* f) {
  if constexpr (E < 16) {
    const float2 a = tle4m3::e4m3x2(raw[0].x), b = tle4m3::e4m3x2(raw[0].x >> 16);
    const float2 c = tle4m3::e4m3x2(raw[0].y), d = tle4m3::e4m3x2(raw[0].y >> 16);
    f[0] = a.x, f[1] = a.y, f[2] = b.x, f[3] = b.y, f[4] = c.x, f[5] = c.y, f[6] = d.x, f[7] = d.y;
  } else {
#pragma unroll
    for (int c = 0; c < E / 16; ++c) tle4m3::unpack16(raw[c], f + 16 * c);
  }
}
// What tl_attn_split needs to compute the step's q, k and v rows itself (tl_qkv_rope's arithmetic, qkv_head), for a
// step in which every token is its sequence's only one (a decode step): the raw qkv [n, hq + 2 hk, hd] with its bias,
// q/k norms (all nullable), the RoPE tables, the tokens' cache slots (slot < 0: not written), the caches to write, and
// the block's shared row of the new key and value (2 x hd of C).
template <typename T, typename C>
struct RopeIn {
  const T* qkv;
  const T* bias;
  const T* q_norm;
  const T* k_norm;
  float eps;
  const float* cos;
  const float* sin;
  const int* slots;
  C* k_cache;
  C* v_cache;
  C* kv_row;
};
template <typename T, int GH, int NV, typename C = T, bool ROPE = false>
__device__ __forceinline__ void tl_attn_split(const T* q, const C* k_cache, const C* v_cache, const int* block_tables,
                                              const int* token_seq, const int* token_pos, int max_blocks_per_seq,
                                              int block_size, T* out, float* ws, int* tickets, const int* token_list,
                                              int n, int hq, int hk, float scale, const float* kv_scale = nullptr,
                                              RopeIn<T, C> rope = {}) {
  constexpr bool K8 = tlkv::kKv8<T, C>;
  constexpr int HD = 64 * NV;  // head dim
  constexpr int E = 8 * NV;    // elements per lane
  constexpr int V = 16 / sizeof(C);
  constexpr int NVEC = (E + V - 1) / V;  // 16-byte loads per lane per row (K8, NV = 1: one 8-byte load)
  __shared__ __align__(16) float sq[GH * HD];
  __shared__ float sacc[kSplitWarps][GH * HD];
  __shared__ float sml[kSplitWarps][GH][2];
  const int i = blockIdx.x;
  if (i >= n) return;
  const int t = token_list ? token_list[i] : i;
  const int G = hq / hk;
  const int hgroups = G / GH;
  const int kvh = blockIdx.y / hgroups;
  const int h0 = kvh * G + (blockIdx.y - kvh * hgroups) * GH;
  const int z = blockIdx.z, S = gridDim.z;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int grp = lane >> 3, r = lane & 7;
  const unsigned gmask = 0xffu << (grp * 8);
  const int s = token_seq[t], p = token_pos[t];
  const int* bt = block_tables + (long long)s * max_blocks_per_seq;
  const int nkeys = p + 1;
  const int chunk = (nkeys + S - 1) / S;
  const int k0 = z * chunk, k1 = min(nkeys, k0 + chunk);
  float sc = scale * kLog2e;
  if constexpr (K8) sc *= kv_scale[0];
  const long long qBase = ((long long)t * hq + h0) * HD;
  // ROPE: the slice holding the token's own key p takes it (and its value) from rope.kv_row after its other keys
  const bool ownKey = ROPE && p / chunk == z;
  if constexpr (!ROPE) {
    // sq[h][e][r] = q[h][r * E + e]: lane r of a group reads word r of a row, no bank conflicts
    for (int idx = threadIdx.x; idx < GH * HD; idx += blockDim.x) {
      const int h = idx / HD, d = idx - h * HD;
      sq[h * HD + (d % E) * 8 + d / E] = ld(q, qBase + idx) * sc;
    }
  } else {
    // the block's GH q heads (rounded to T, as tl_qkv_rope stores them) and, in the slice holding key p, its kv
    // head's k and v (as the cache holds them), a warp a head; the warps' sacc rows are free until after the keys
    const int heads = hq + 2 * hk;
    const long long rowOff = (long long)t * heads * HD;
    const int tasks = GH + (ownKey ? 2 : 0);
    for (int task = warp; task < tasks; task += kSplitWarps) {
      const bool isQ = task < GH, isK = task == GH;
      const int h = isQ ? h0 + task : (isK ? hq + kvh : hq + hk + kvh);
      float y[8];
      qkv_head<T>(rope.qkv, rope.bias, isQ ? rope.q_norm : rope.k_norm, rope.eps, rope.cos, rope.sin, p,
                  rowOff + (long long)h * HD, h, HD, isQ || isK, sacc[warp], y);
#pragma unroll
      for (int k = 0; k < 2 * NV; ++k) {
        const int d = lane + 32 * k;
        if (isQ) {
          sq[task * HD + (d % E) * 8 + d / E] = Cv<T>::f(Cv<T>::t(y[k])) * sc;
        } else if constexpr (K8) {
          rope.kv_row[(isK ? 0 : HD) + d] = tlkv::encode<T>(y[k], kv_scale[isK ? 0 : 1]);
        } else {
          rope.kv_row[(isK ? 0 : HD) + d] = Cv<T>::t(y[k]);
        }
      }
      __syncwarp();
    }
  }
  __syncthreads();
  if constexpr (ROPE) {
    // the first query head group of the kv head writes the new key and value to the cache
    const int slot = rope.slots[t];
    if (ownKey && blockIdx.y == kvh * hgroups && slot >= 0) {
      const long long dst = ((long long)slot * hk + kvh) * HD;
      for (int d = threadIdx.x; d < HD; d += blockDim.x) {
        rope.k_cache[dst + d] = rope.kv_row[d];
        rope.v_cache[dst + d] = rope.kv_row[HD + d];
      }
    }
  }

  const long long headStride = (long long)hk * HD;
  const long long kvOff = (long long)kvh * HD + r * E;
  float m[GH], l[GH], acc[GH][E];
#pragma unroll
  for (int h = 0; h < GH; ++h) {
    m[h] = -INFINITY;
    l[h] = 0.0f;
#pragma unroll
    for (int e = 0; e < E; ++e) acc[h][e] = 0.0f;
  }
  // one key's score and value into the group's online-softmax state (kr, vr: this lane's part of its K and V rows)
  auto consume = [&](const uint4* kr, const uint4* vr) {
    float d[GH];
#pragma unroll
    for (int h = 0; h < GH; ++h) d[h] = 0.0f;
    if constexpr (!K8) {
#pragma unroll
      for (int c = 0; c < NVEC; ++c) {
        union {
          uint4 raw;
          T e[V];
        } kk;
        kk.raw = kr[c];
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const float kf = Cv<T>::f(kk.e[v]);
#pragma unroll
          for (int h = 0; h < GH; ++h) d[h] = fmaf(kf, sq[h * HD + (c * V + v) * 8 + r], d[h]);
        }
      }
    } else {
      float kf[E];
      kv8_row<E>(kr, kf);
#pragma unroll
      for (int e = 0; e < E; ++e) {
#pragma unroll
        for (int h = 0; h < GH; ++h) d[h] = fmaf(kf[e], sq[h * HD + e * 8 + r], d[h]);
      }
    }
#pragma unroll
    for (int h = 0; h < GH; ++h) {
      d[h] += __shfl_xor_sync(gmask, d[h], 1);
      d[h] += __shfl_xor_sync(gmask, d[h], 2);
      d[h] += __shfl_xor_sync(gmask, d[h], 4);
    }
    float vf[E];
    if constexpr (!K8) {
#pragma unroll
      for (int c = 0; c < NVEC; ++c) {
        union {
          uint4 raw;
          T e[V];
        } vv;
        vv.raw = vr[c];
#pragma unroll
        for (int v = 0; v < V; ++v) vf[c * V + v] = Cv<T>::f(vv.e[v]);
      }
    } else {
      kv8_row<E>(vr, vf);
    }
#pragma unroll
    for (int h = 0; h < GH; ++h) {
      const float mn = fmaxf(m[h], d[h]);
      const float corr = exp2f(m[h] - mn);  // m = -inf before the first key: 0
      const float pj = exp2f(d[h] - mn);
      l[h] = l[h] * corr + pj;
#pragma unroll
      for (int e = 0; e < E; ++e) acc[h][e] = fmaf(pj, vf[e], acc[h][e] * corr);
      m[h] = mn;
    }
  };
  constexpr int STEP = kSplitWarps * 4;  // groups per block
  const int kend = ownKey ? p : k1;  // ROPE: key p after the loop
  for (int j = k0 + warp * 4 + grp; j < kend; j += 2 * STEP) {
    const bool two = j + STEP < kend;
    uint4 kraw[2][NVEC], vraw[2][NVEC];
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      if (u == 0 || two) {
        const int jj = j + u * STEP;
        const long long slot = (long long)bt[jj / block_size] * block_size + (jj % block_size);
        if constexpr (K8 && E < V) {
          const uint2 kh = __ldg(reinterpret_cast<const uint2*>(k_cache + slot * headStride + kvOff));
          const uint2 vh = __ldg(reinterpret_cast<const uint2*>(v_cache + slot * headStride + kvOff));
          kraw[u][0] = make_uint4(kh.x, kh.y, 0u, 0u);
          vraw[u][0] = make_uint4(vh.x, vh.y, 0u, 0u);
        } else {
          const uint4* kr = reinterpret_cast<const uint4*>(k_cache + slot * headStride + kvOff);
          const uint4* vr = reinterpret_cast<const uint4*>(v_cache + slot * headStride + kvOff);
#pragma unroll
          for (int c = 0; c < NVEC; ++c) {
            kraw[u][c] = __ldg(kr + c);
            vraw[u][c] = __ldg(vr + c);
          }
        }
      }
    }
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      if (u == 1 && !two) break;
      consume(kraw[u], vraw[u]);
    }
  }
  if constexpr (ROPE) {
    // key p is the last key of its group (the slice's last): from the block's row, after the group's other keys
    if (ownKey && (p - k0) % STEP == warp * 4 + grp) {
      uint4 kr[NVEC], vr[NVEC];
      if constexpr (K8 && E < V) {
        const uint2 kh = *reinterpret_cast<const uint2*>(rope.kv_row + r * E);
        const uint2 vh = *reinterpret_cast<const uint2*>(rope.kv_row + HD + r * E);
        kr[0] = make_uint4(kh.x, kh.y, 0u, 0u);
        vr[0] = make_uint4(vh.x, vh.y, 0u, 0u);
      } else {
#pragma unroll
        for (int c = 0; c < NVEC; ++c) {
          kr[c] = reinterpret_cast<const uint4*>(rope.kv_row + r * E)[c];
          vr[c] = reinterpret_cast<const uint4*>(rope.kv_row + HD + r * E)[c];
        }
      }
      consume(kr, vr);
    }
  }
  // the warp's four groups -> one state (shuffles across groups: xor 8 and 16)
#pragma unroll
  for (int h = 0; h < GH; ++h) {
    float M = m[h];
    M = fmaxf(M, __shfl_xor_sync(0xffffffffu, M, 8));
    M = fmaxf(M, __shfl_xor_sync(0xffffffffu, M, 16));
    const float f = m[h] == -INFINITY ? 0.0f : exp2f(m[h] - M);
    float L = l[h] * f;
    L += __shfl_xor_sync(0xffffffffu, L, 8);
    L += __shfl_xor_sync(0xffffffffu, L, 16);
#pragma unroll
    for (int e = 0; e < E; ++e) {
      float a = acc[h][e] * f;
      a += __shfl_xor_sync(0xffffffffu, a, 8);
      a += __shfl_xor_sync(0xffffffffu, a, 16);
      acc[h][e] = a;
    }
    if (grp == 0) {
#pragma unroll
      for (int e = 0; e < E; ++e) sacc[warp][h * HD + r * E + e] = acc[h][e];
      if (r == 0) {
        sml[warp][h][0] = M;
        sml[warp][h][1] = L;
      }
    }
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < GH * HD; idx += blockDim.x) {
    const int h = idx / HD, dd = idx - h * HD;
    float M = -INFINITY;
#pragma unroll
    for (int w = 0; w < kSplitWarps; ++w) M = fmaxf(M, sml[w][h][0]);
    float L = 0.0f, v = 0.0f;
    if (M != -INFINITY) {
#pragma unroll
      for (int w = 0; w < kSplitWarps; ++w) {
        const float f = sml[w][h][0] == -INFINITY ? 0.0f : exp2f(sml[w][h][0] - M);
        L += sml[w][h][1] * f;
        v += sacc[w][idx] * f;
      }
    }
    if constexpr (K8) v *= kv_scale[1];
    if (S == 1) {
      out[qBase + idx] = Cv<T>::t(v / L);
    } else {
      float* rec = ws + (((long long)i * hq + h0 + h) * S + z) * (HD + 2);
      rec[2 + dd] = v;
      if (dd == 0) {
        rec[0] = M;  // -inf: this slice held no key of the token
        rec[1] = L;
      }
    }
  }
  if (S > 1 && tickets != nullptr) {
    // the last of the S slices of (i, blockIdx.y) to finish merges them (attn_merge, the combine kernel's arithmetic):
    // each block's records are visible device-wide before it takes its ticket, and the last one resets the counter
    // for the next launch (every slice has counted by then)
    __shared__ int s_last;
    __shared__ float sf[32];
    __shared__ float s_inv_l;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
      int* tk = tickets + (long long)i * gridDim.y + blockIdx.y;
      const int ticket = atomicAdd(tk, 1);
      s_last = ticket == S - 1;
      if (ticket == S - 1) *tk = 0;
    }
    __syncthreads();
    if (s_last) {
      __threadfence();
#pragma unroll 1
      for (int h = 0; h < GH; ++h) attn_merge<T, true>(ws, i, t, h0 + h, out, hq, HD, S, sf, &s_inv_l);
    }
  }
}

// The slices' merge as a kernel of its own, t = token_list[i] (or i when token_list is null) for block row i.
// Launch: grid (n, hq), block 128.
template <typename T>
__device__ __forceinline__ void tl_attn_combine(const float* ws, const int* token_list, T* out, int n, int hq, int hd,
                                                int S) {
  __shared__ float sf[32];
  __shared__ float s_inv_l;
  const int i = blockIdx.x, h = blockIdx.y;
  if (i >= n) return;
  const int t = token_list ? token_list[i] : i;
  attn_merge<T, false>(ws, i, t, h, out, hq, hd, S, sf, &s_inv_l);
}

#include "tl_tensorcore.cuh"

// ---- SwiGLU ---------------------------------------------------------------------------------------------------
// gate_up [n, 2*inter], row = [gate (inter) | up (inter)]; out [n, inter] = silu(gate) * up, silu(x) = x/(1+e^-x).
// Launch: grid-stride over n*inter elements (64-bit index), block 256, grid min(ceil(n*inter/256), 65535).
template <typename T>
__device__ __forceinline__ void tl_silu_mul(const T* gate_up, T* out, int n, int inter) {
  const long long total = (long long)n * inter;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += stride) {
    const long long i = idx / inter, j = idx - i * inter;
    const float g = ld(gate_up, i * 2 * inter + j), u = ld(gate_up, i * 2 * inter + inter + j);
    out[idx] = Cv<T>::t(g / (1.0f + expf(-g)) * u);
  }
}

// ---- row gather -----------------------------------------------------------------------------------------------
// in [*, cols]; rows [m] int32; out [m, cols]: out[i,:] = in[rows[i],:] (exact copy, e.g. last token of each
// sequence before the LM head). Launch: grid (m), block 256.
template <typename T>
__device__ __forceinline__ void tl_gather_rows(const T* in, const int* rows, T* out, int m, int cols) {
  const int i = blockIdx.x;
  if (i >= m) return;
  const T* src = in + (long long)rows[i] * cols;
  T* dst = out + (long long)i * cols;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) dst[j] = src[j];
}

// ---- single-token linear (GEMV) -------------------------------------------------------------------------------
// x [in] T; w [out, in] T (an nn.Linear weight, rows = outputs); y [out] T: y[o] = T(sum_k x[k] * w[o,k]), fp32
// accumulation (summation order differs from cuBLAS'). For decode steps of one token, where reading the weight is the
// whole cost: one warp per output row, each lane reading 16 bytes of the row per load with kGemvUnroll loads in
// flight; the weight is streamed (evict-first), x is re-read by every warp through the read-only cache. (A version
// for 2..4 tokens, x re-read per token, was up to 25% slower than cuBLAS on the 8B geometry: cuBLAS keeps those.)
// Requires in % 8 == 0 and x, w 16-byte aligned. Launch: grid ceil(out / kGemvWarps), block kGemvWarps * 32.
constexpr int kGemvWarps = 8;
constexpr int kGemvUnroll = 4;  // 8 measured the same on the 8B geometry (H200, 2026-12-01)
template <typename T>
struct Pair;
template <>
struct Pair<__nv_bfloat16> {
  __device__ __forceinline__ static float2 f(uint32_t v) {
    return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&v));
  }
};
template <>
struct Pair<__half> {
  __device__ __forceinline__ static float2 f(uint32_t v) { return __half22float2(*reinterpret_cast<const __half2*>(&v)); }
};

template <typename T>
__device__ __forceinline__ float dot8(const uint4 a, const uint4 b, float acc) {
  const uint32_t av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 fa = Pair<T>::f(av[i]), fb = Pair<T>::f(bv[i]);
    acc = fmaf(fa.x, fb.x, acc);
    acc = fmaf(fa.y, fb.y, acc);
  }
  return acc;
}

// 16-byte loads as volatile asm: their order against the arithmetic stays as written, so all U loads of an iteration
// are in flight together (ptxas otherwise sinks each next to its use to save registers).
__device__ __forceinline__ uint4 ld_stream(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.cs.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
__device__ __forceinline__ uint4 ld_readonly(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// x from global memory through the read-only cache, or (XS) from shared memory (tl_gemv_fused.cuh's staged x).
template <bool XS>
__device__ __forceinline__ uint4 ld_x(const uint4* p) {
  if constexpr (XS) {
    return *p;
  } else {
    return ld_readonly(p);
  }
}

// w[row, :] . x summed over the warp (every lane gets it): lane l takes the 16-byte chunks l + 32 k, U loads in flight.
template <typename T, int U, bool XS = false>
__device__ __forceinline__ float tl_gemv_dot(const T* x, const T* w, int row, int in) {
  const int lane = threadIdx.x & 31;
  const uint4* wr = reinterpret_cast<const uint4*>(w + (long long)row * in);
  const uint4* xr = reinterpret_cast<const uint4*>(x);
  const int chunks = in >> 3;
  float acc = 0.0f;
  int c = lane;
  for (; c + 32 * (U - 1) < chunks; c += 32 * U) {
    uint4 wv[U], xv[U];
#pragma unroll
    for (int u = 0; u < U; ++u) wv[u] = ld_stream(wr + c + 32 * u);
#pragma unroll
    for (int u = 0; u < U; ++u) xv[u] = ld_x<XS>(xr + c + 32 * u);
#pragma unroll
    for (int u = 0; u < U; ++u) acc = dot8<T>(wv[u], xv[u], acc);
  }
  for (; c < chunks; c += 32) acc = dot8<T>(ld_stream(wr + c), ld_x<XS>(xr + c), acc);
  return warp_sum(acc);
}

template <typename T, int U>
__device__ __forceinline__ void tl_gemv(const T* x, const T* w, T* y, int in, int out) {
  const int row = blockIdx.x * kGemvWarps + (threadIdx.x >> 5);
  if (row >= out) return;
  const float acc = tl_gemv_dot<T, U>(x, w, row, in);
  if ((threadIdx.x & 31) == 0) y[row] = Cv<T>::t(acc);
}

#include "tl_fp8.cuh"
#include "tl_gemv_mma.cuh"
#include "tl_gemv_fused.cuh"
#include "tl_moe.cuh"
#include "tl_moe_fp8.cuh"
#include "tl_moe_gemm_fp8.cuh"  // the grouped FP8 GEMM of long MoE steps
#include "tl_moe_fused.cuh"  // the MoE decode kernels with fewer launches
#include "tl_attn_rope.cuh"  // decode attention with the rope and KV write folded in

// ---- instantiations -------------------------------------------------------------------------------------------
#define TL_MODEL_ENTRIES(SUF, T)                                                                                   \
  extern "C" __global__ void __launch_bounds__(256) tl_embed_##SUF(const int* ids, int n, const T* table,          \
                                                                   int vocab_start, int vocab_rows, int hidden,    \
                                                                   T* out) {                                        \
    tlpdl::enter();                                                                                                 \
    tl_embed<T>(ids, n, table, vocab_start, vocab_rows, hidden, out);                                              \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(512) tl_add_rmsnorm_##SUF(float* residual, const T* delta,         \
                                                                         const T* weight, T* out, int n,          \
                                                                         int hidden, float eps, int mode) {       \
    tlpdl::enter();                                                                                               \
    tl_add_rmsnorm<T>(residual, delta, weight, out, n, hidden, eps, mode);                                         \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kRopeWarps * 32) tl_qkv_rope_##SUF(                                 \
      const T* qkv, const T* bias, const T* q_norm, const T* k_norm, float eps, const float* cos, const float* sin, \
      const int* positions, const int* slots, T* q_out, T* k_cache, T* v_cache, int n, int hq, int hk, int hd) {    \
    tlpdl::enter();                                                                                                 \
    tl_qkv_rope<T>(qkv, bias, q_norm, k_norm, eps, cos, sin, positions, slots, q_out, k_cache, v_cache, n, hq, hk, \
                   hd);                                                                                            \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kAttnWarps * 32) tl_attention_##SUF(                                \
      const T* q, const T* k_cache, const T* v_cache, const int* block_tables, const int* token_seq,              \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, int n, int hq, int hk, int hd,        \
      float scale) {                                                                                               \
    tlpdl::enter();                                                                                                \
    tl_attention<T>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq, block_size, out,  \
                    n, hq, hk, hd, scale);                                                                         \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(128) tl_attn_split_g1_v1_##SUF(                            \
      const T* q, const T* k_cache, const T* v_cache, const int* block_tables, const int* token_seq,              \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, float* ws, int* tickets,               \
      const int* token_list,                                                                                     \
      int n, int hq, int hk, float scale) {                                                                       \
    tlpdl::enter();                                                                                               \
    tl_attn_split<T, 1, 1>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq,     \
                              block_size, out, ws, tickets, token_list, n, hq, hk, scale);                                  \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(128) tl_attn_split_g1_v2_##SUF(                            \
      const T* q, const T* k_cache, const T* v_cache, const int* block_tables, const int* token_seq,              \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, float* ws, int* tickets,               \
      const int* token_list,                                                                                     \
      int n, int hq, int hk, float scale) {                                                                       \
    tlpdl::enter();                                                                                               \
    tl_attn_split<T, 1, 2>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq,     \
                              block_size, out, ws, tickets, token_list, n, hq, hk, scale);                                  \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(128) tl_attn_split_g1_v4_##SUF(                            \
      const T* q, const T* k_cache, const T* v_cache, const int* block_tables, const int* token_seq,              \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, float* ws, int* tickets,               \
      const int* token_list,                                                                                     \
      int n, int hq, int hk, float scale) {                                                                       \
    tlpdl::enter();                                                                                               \
    tl_attn_split<T, 1, 4>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq,     \
                              block_size, out, ws, tickets, token_list, n, hq, hk, scale);                                  \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(128) tl_attn_split_g2_v1_##SUF(                            \
      const T* q, const T* k_cache, const T* v_cache, const int* block_tables, const int* token_seq,              \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, float* ws, int* tickets,               \
      const int* token_list,                                                                                     \
      int n, int hq, int hk, float scale) {                                                                       \
    tlpdl::enter();                                                                                               \
    tl_attn_split<T, 2, 1>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq,     \
                              block_size, out, ws, tickets, token_list, n, hq, hk, scale);                                  \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(128) tl_attn_split_g2_v2_##SUF(                            \
      const T* q, const T* k_cache, const T* v_cache, const int* block_tables, const int* token_seq,              \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, float* ws, int* tickets,               \
      const int* token_list,                                                                                     \
      int n, int hq, int hk, float scale) {                                                                       \
    tlpdl::enter();                                                                                               \
    tl_attn_split<T, 2, 2>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq,     \
                              block_size, out, ws, tickets, token_list, n, hq, hk, scale);                                  \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(128) tl_attn_split_g2_v4_##SUF(                            \
      const T* q, const T* k_cache, const T* v_cache, const int* block_tables, const int* token_seq,              \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, float* ws, int* tickets,               \
      const int* token_list,                                                                                     \
      int n, int hq, int hk, float scale) {                                                                       \
    tlpdl::enter();                                                                                               \
    tl_attn_split<T, 2, 4>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq,     \
                              block_size, out, ws, tickets, token_list, n, hq, hk, scale);                                  \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(128) tl_attn_split_g4_v1_##SUF(                            \
      const T* q, const T* k_cache, const T* v_cache, const int* block_tables, const int* token_seq,              \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, float* ws, int* tickets,               \
      const int* token_list,                                                                                     \
      int n, int hq, int hk, float scale) {                                                                       \
    tlpdl::enter();                                                                                               \
    tl_attn_split<T, 4, 1>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq,     \
                              block_size, out, ws, tickets, token_list, n, hq, hk, scale);                                  \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(128) tl_attn_split_g4_v2_##SUF(                            \
      const T* q, const T* k_cache, const T* v_cache, const int* block_tables, const int* token_seq,              \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, float* ws, int* tickets,               \
      const int* token_list,                                                                                     \
      int n, int hq, int hk, float scale) {                                                                       \
    tlpdl::enter();                                                                                               \
    tl_attn_split<T, 4, 2>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq,     \
                              block_size, out, ws, tickets, token_list, n, hq, hk, scale);                                  \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(128) tl_attn_combine_##SUF(const float* ws, const int* token_list,  \
                                                                         T* out, int n, int hq, int hd, int S) {  \
    tlpdl::enter();                                                                                               \
    tl_attn_combine<T>(ws, token_list, out, n, hq, hd, S);                                                         \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kPrefillWarps * 32) tl_attn_prefill_v1_##SUF(                       \
      const T* q, const T* k_cache, const T* v_cache, const int* block_tables, const int* token_seq,              \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, const int* tiles, int num_tiles,      \
      int hq, int hk, float scale) {                                                                              \
    tlpdl::enter();                                                                                               \
    tl_attn_prefill<T, 64>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq,           \
                           block_size, out, tiles, num_tiles, hq, hk, scale);                                     \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kPrefillWarps * 32) tl_attn_prefill_v2_##SUF(                       \
      const T* q, const T* k_cache, const T* v_cache, const int* block_tables, const int* token_seq,              \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, const int* tiles, int num_tiles,      \
      int hq, int hk, float scale) {                                                                              \
    tlpdl::enter();                                                                                               \
    tl_attn_prefill<T, 128>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq,          \
                            block_size, out, tiles, num_tiles, hq, hk, scale);                                    \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(256) tl_silu_mul_##SUF(const T* gate_up, T* out, int n, int inter) { \
    tlpdl::enter();                                                                                                 \
    tl_silu_mul<T>(gate_up, out, n, inter);                                                                        \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(256) tl_gather_rows_##SUF(const T* in, const int* rows, T* out,    \
                                                                         int m, int cols) {                       \
    tlpdl::enter();                                                                                               \
    tl_gather_rows<T>(in, rows, out, m, cols);                                                                     \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kGemvWarps * 32) tl_gemv_##SUF(const T* x, const T* w, T* y, int in, \
                                                                           int out) {                             \
    tlpdl::prefetch_warp_row(w, (long long)in * sizeof(T), out, kGemvWarps, 32 * kGemvUnroll * 16);               \
    tlpdl::enter();                                                                                               \
    tl_gemv<T, kGemvUnroll>(x, w, y, in, out);                                                                     \
  }                                                                                                                \
  TL_FUSE_ENTRIES(SUF, T)

// The FP8 KV cache's entries (tl_kvcache.cuh): the same kernels over e4m3 codes, one more argument kv_scale (the
// layer's {k_scale, v_scale}, fp32 on the device).
#define TL_KV8_ENTRIES(SUF, T)                                                                                     \
  extern "C" __global__ void __launch_bounds__(kRopeWarps * 32) tl_qkv_rope_kv8_##SUF(                             \
      const T* qkv, const T* bias, const T* q_norm, const T* k_norm, float eps, const float* cos, const float* sin, \
      const int* positions, const int* slots, T* q_out, uint8_t* k_cache, uint8_t* v_cache, int n, int hq, int hk, \
      int hd, const float* kv_scale) {                                                                             \
    tlpdl::enter();                                                                                                \
    tl_qkv_rope<T, uint8_t>(qkv, bias, q_norm, k_norm, eps, cos, sin, positions, slots, q_out, k_cache, v_cache, n, \
                            hq, hk, hd, kv_scale);                                                                 \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kAttnWarps * 32) tl_attention_kv8_##SUF(                            \
      const T* q, const uint8_t* k_cache, const uint8_t* v_cache, const int* block_tables, const int* token_seq,  \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, int n, int hq, int hk, int hd,        \
      float scale, const float* kv_scale) {                                                                        \
    tlpdl::enter();                                                                                                \
    tl_attention<T, uint8_t>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq,          \
                             block_size, out, n, hq, hk, hd, scale, kv_scale);                                     \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(128) tl_attn_split_g1_v1_kv8_##SUF(                            \
      const T* q, const uint8_t* k_cache, const uint8_t* v_cache, const int* block_tables, const int* token_seq,  \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, float* ws, int* tickets,               \
      const int* token_list,                                                                                     \
      int n, int hq, int hk, float scale, const float* kv_scale) {                                                \
    tlpdl::enter();                                                                                               \
    tl_attn_split<T, 1, 1, uint8_t>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq, \
                                    block_size, out, ws, tickets, token_list, n, hq, hk, scale, kv_scale);                \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(128) tl_attn_split_g1_v2_kv8_##SUF(                            \
      const T* q, const uint8_t* k_cache, const uint8_t* v_cache, const int* block_tables, const int* token_seq,  \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, float* ws, int* tickets,               \
      const int* token_list,                                                                                     \
      int n, int hq, int hk, float scale, const float* kv_scale) {                                                \
    tlpdl::enter();                                                                                               \
    tl_attn_split<T, 1, 2, uint8_t>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq, \
                                    block_size, out, ws, tickets, token_list, n, hq, hk, scale, kv_scale);                \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(128) tl_attn_split_g1_v4_kv8_##SUF(                            \
      const T* q, const uint8_t* k_cache, const uint8_t* v_cache, const int* block_tables, const int* token_seq,  \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, float* ws, int* tickets,               \
      const int* token_list,                                                                                     \
      int n, int hq, int hk, float scale, const float* kv_scale) {                                                \
    tlpdl::enter();                                                                                               \
    tl_attn_split<T, 1, 4, uint8_t>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq, \
                                    block_size, out, ws, tickets, token_list, n, hq, hk, scale, kv_scale);                \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(128) tl_attn_split_g2_v1_kv8_##SUF(                            \
      const T* q, const uint8_t* k_cache, const uint8_t* v_cache, const int* block_tables, const int* token_seq,  \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, float* ws, int* tickets,               \
      const int* token_list,                                                                                     \
      int n, int hq, int hk, float scale, const float* kv_scale) {                                                \
    tlpdl::enter();                                                                                               \
    tl_attn_split<T, 2, 1, uint8_t>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq, \
                                    block_size, out, ws, tickets, token_list, n, hq, hk, scale, kv_scale);                \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(128) tl_attn_split_g2_v2_kv8_##SUF(                            \
      const T* q, const uint8_t* k_cache, const uint8_t* v_cache, const int* block_tables, const int* token_seq,  \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, float* ws, int* tickets,               \
      const int* token_list,                                                                                     \
      int n, int hq, int hk, float scale, const float* kv_scale) {                                                \
    tlpdl::enter();                                                                                               \
    tl_attn_split<T, 2, 2, uint8_t>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq, \
                                    block_size, out, ws, tickets, token_list, n, hq, hk, scale, kv_scale);                \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(128) tl_attn_split_g2_v4_kv8_##SUF(                            \
      const T* q, const uint8_t* k_cache, const uint8_t* v_cache, const int* block_tables, const int* token_seq,  \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, float* ws, int* tickets,               \
      const int* token_list,                                                                                     \
      int n, int hq, int hk, float scale, const float* kv_scale) {                                                \
    tlpdl::enter();                                                                                               \
    tl_attn_split<T, 2, 4, uint8_t>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq, \
                                    block_size, out, ws, tickets, token_list, n, hq, hk, scale, kv_scale);                \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(128) tl_attn_split_g4_v1_kv8_##SUF(                            \
      const T* q, const uint8_t* k_cache, const uint8_t* v_cache, const int* block_tables, const int* token_seq,  \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, float* ws, int* tickets,               \
      const int* token_list,                                                                                     \
      int n, int hq, int hk, float scale, const float* kv_scale) {                                                \
    tlpdl::enter();                                                                                               \
    tl_attn_split<T, 4, 1, uint8_t>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq, \
                                    block_size, out, ws, tickets, token_list, n, hq, hk, scale, kv_scale);                \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(128) tl_attn_split_g4_v2_kv8_##SUF(                            \
      const T* q, const uint8_t* k_cache, const uint8_t* v_cache, const int* block_tables, const int* token_seq,  \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, float* ws, int* tickets,               \
      const int* token_list,                                                                                     \
      int n, int hq, int hk, float scale, const float* kv_scale) {                                                \
    tlpdl::enter();                                                                                               \
    tl_attn_split<T, 4, 2, uint8_t>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq, \
                                    block_size, out, ws, tickets, token_list, n, hq, hk, scale, kv_scale);                \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kPrefillWarps * 32) tl_attn_prefill_v1_kv8_##SUF(                   \
      const T* q, const uint8_t* k_cache, const uint8_t* v_cache, const int* block_tables, const int* token_seq,  \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, const int* tiles, int num_tiles,      \
      int hq, int hk, float scale, const float* kv_scale) {                                                       \
    tlpdl::enter();                                                                                               \
    tl_attn_prefill<T, 64, uint8_t>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq,  \
                                    block_size, out, tiles, num_tiles, hq, hk, scale, kv_scale);                  \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(kPrefillWarps * 32) tl_attn_prefill_v2_kv8_##SUF(                   \
      const T* q, const uint8_t* k_cache, const uint8_t* v_cache, const int* block_tables, const int* token_seq,  \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, const int* tiles, int num_tiles,      \
      int hq, int hk, float scale, const float* kv_scale) {                                                       \
    tlpdl::enter();                                                                                               \
    tl_attn_prefill<T, 128, uint8_t>(q, k_cache, v_cache, block_tables, token_seq, token_pos, max_blocks_per_seq, \
                                     block_size, out, tiles, num_tiles, hq, hk, scale, kv_scale);                 \
  }

TL_MODEL_ENTRIES(bf16, __nv_bfloat16)
TL_MODEL_ENTRIES(fp16, __half)
TL_KV8_ENTRIES(bf16, __nv_bfloat16)
TL_KV8_ENTRIES(fp16, __half)
TL_FP8_ENTRIES(bf16, __nv_bfloat16)
TL_FP8_ENTRIES(fp16, __half)
TL_GEMV_MMA_ENTRIES(bf16, __nv_bfloat16)
TL_GEMV_MMA_ENTRIES(fp16, __half)
TL_MOE_ENTRIES(bf16, __nv_bfloat16)
TL_MOE_ENTRIES(fp16, __half)
TL_MOE_FP8_ENTRIES(bf16, __nv_bfloat16)
TL_MOE_FP8_ENTRIES(fp16, __half)
TL_MOE_GEMM_FP8_ENTRIES(bf16, __nv_bfloat16)
TL_MOE_GEMM_FP8_ENTRIES(fp16, __half)
TL_MOE_FUSED_ENTRIES(bf16, __nv_bfloat16)
TL_MOE_FUSED_ENTRIES(fp16, __half)
TL_ATTN_ROPE_ENTRIES(bf16, __nv_bfloat16)
TL_ATTN_ROPE_ENTRIES(fp16, __half)

#include "tl_sample.cuh"
#include "tl_spec.cuh"  // speculative decoding: the rejection-sampling verify

// tl_l2_prefetch: weights later kernels of the step read, toward L2 while the kernels before them are latency-bound
// (io.tensorlane.runtime.llm.L2Prefetch: issued before a decode step's attention, whose few bytes leave DRAM idle: the
// layer's o projection, the first rows of its gate/up, the next layer's qkv). Up to four ranges (a zero length skips
// one), each a multiple of 16 bytes at a 16-byte aligned address. It lets the kernel after it launch first, then waits
// for the kernel before it (tlpdl::trigger_then_enter), so that the one after still sees everything before; the
// prefetches go out after the wait (DRAM is busy until then) and nothing waits for them. Launch: any grid (the
// caller: one block a multiprocessor), block tlpdl::kL2PrefetchThreads.
extern "C" __global__ void __launch_bounds__(tlpdl::kL2PrefetchThreads)
    tl_l2_prefetch(const char* a, long long an, const char* b, long long bn, const char* c, long long cn,
                   const char* d, long long dn) {
  tlpdl::trigger_then_enter();
  tlpdl::prefetch_range(a, an);
  tlpdl::prefetch_range(b, bn);
  tlpdl::prefetch_range(c, cn);
  tlpdl::prefetch_range(d, dn);
}
