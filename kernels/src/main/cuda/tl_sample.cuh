// Tensorlane token sampling on the GPU: greedy, temperature, top-k, top-p, min-p, seeded. Included by tl_model.cu.
#pragma once
#include <stdint.h>

// ---- sampling -------------------------------------------------------------------------------------------------
// logits: m rows of fp32, row i at logits + i*stride (stride >= vocab, in elements). params: the rows' parameters as
// one block of cap (>= m, even) entries per field, in this order: temperature[cap] f32, top_p[cap] f32, min_p[cap] f32,
// top_k[cap] i32, counter[cap] i32, seed[cap] u64, masked[cap] i32 (byte offsets 0, 4cap, 8cap, 12cap, 16cap, 20cap,
// 28cap), then the penalty fields presence[cap] f32, frequency[cap] f32, repetition[cap] f32, pen_start[cap] i32,
// pen_bias[cap] i32, pen_count[cap] i32 (byte offsets 32cap .. 52cap), then one token mask per row: row i's at byte
// 56cap + 4*i*words, words = (vocab + 31) / 32 uint32, bit (id & 31) of word id >> 5 set for an allowed id.
// pen: (token, value) int32 pairs; row i's are pen[pen_start, pen_start + pen_bias + pen_count). out_ids [m] int32.
// Penalties (issue #30; a row with pen_bias + pen_count == 0 reads neither pen nor its logits twice and samples exactly
// as before): the row's logits are rewritten in place before anything else, in vLLM v1's order. First its pen_bias
// "bias" pairs, value = fp32 bits added to the logit (logit_bias; -inf for the ids min_tokens or bad_words ban), then its
// pen_count "count" pairs, one per id seen in the prompt or the output (value = the id's count among the generated tokens):
// l = l > 0 ? l / repetition : l * repetition; l = l - frequency * count; l = l - presence if count > 0. Every
// operation is one IEEE round-to-nearest fp32 operation (no contraction into FMA), so the host reference
// (sched.PenaltyReference) gives the same bits. The host sends each id at most once per phase. So a row's logits
// (and the logprobs the host computes from them) are those after penalties, as vLLM's processed logits.
// A row with masked != 0 (structured output, forced tool calls) samples as if its disallowed ids were not there: they
// never win the argmax, never count in top-k/top-p/min-p and are never drawn; with masked == 0 the mask is not read and
// the row samples exactly as without masks.
// Row i: temperature <= 0 -> the index of the largest logit (ties to the lowest index, NaN never wins, a row with no
// non-NaN value gives 0; as torch.argmax). Else, in vLLM's order: z = (l - max) / temperature; top-k keeps the logits
// >= the k-th largest (k <= 0 or >= vocab: off; ties at the boundary are kept); top-p keeps the logits >= the largest
// threshold whose kept mass (of the top-k survivors) is >= top_p of their total (top_p >= 1: off; masses summed in
// 2^-40 fixed point, so the threshold does not depend on the order of the additions); min-p keeps probabilities
// >= min_p x the largest (min_p <= 0: off). The token is drawn by the Gumbel-max rule: argmax over the kept ids of
// z + G, G = -ln(-ln u), u in (0, 1) from a counter-based hash of (seed, counter, id) - an exact draw from the kept
// distribution, reproducible for a seed and counter (the engine passes the sequence's seed and its count of generated
// tokens). NaN logits count as -infinity.
// Launch: grid (m), block 1024. Shared: 256 x 8 bytes + reduction scratch.
namespace {

constexpr int kSampleThreads = 1024;

// Order-preserving map of a float to uint32 (larger float -> larger key); NaN maps to the key of -infinity.
__device__ __forceinline__ uint32_t sample_key(float v) {
  if (isnan(v)) v = -INFINITY;
  const uint32_t b = __float_as_uint(v);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

__device__ __forceinline__ uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Block-wide best (value, index): larger value wins, ties to the lower index. Every thread gets the result.
__device__ __forceinline__ void sample_best(float& bv, int& bi, float* sv, int* si) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
    const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
    if (ov > bv || (ov == bv && oi < bi)) {
      bv = ov;
      bi = oi;
    }
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  __syncthreads();
  if (lane == 0) {
    sv[warp] = bv;
    si[warp] = bi;
  }
  __syncthreads();
  bv = lane < warps ? sv[lane] : -INFINITY;
  bi = lane < warps ? si[lane] : INT_MAX;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
    const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
    if (ov > bv || (ov == bv && oi < bi)) {
      bv = ov;
      bi = oi;
    }
  }
}

__device__ __forceinline__ bool sample_allowed(const uint32_t* mask, int i) {
  return mask == nullptr || ((mask[i >> 5] >> (i & 31)) & 1u) != 0u;
}

// Radix select over the keys of the allowed ids of x[0, vocab) that are >= floor: the largest key K such that the weight of the keys
// >= K reaches `need` (weight 1 per id when by_mass is false, else the fixed-point probability). Four 8-bit passes.
__device__ uint32_t sample_select(const float* x, const uint32_t* allow, int vocab, uint32_t floor, bool by_mass, float mx,
                                  float scale2, uint64_t need, unsigned long long* hist, uint32_t* shared_word) {
  uint32_t prefix = 0, mask = 0;
  uint64_t above = 0;  // weight of the keys above the current prefix range
  for (int shift = 24; shift >= 0; shift -= 8) {
    for (int d = threadIdx.x; d < 256; d += blockDim.x) hist[d] = 0;
    __syncthreads();
    for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
      if (!sample_allowed(allow, i)) continue;
      const float v = x[i];
      const uint32_t k = sample_key(v);
      if (k >= floor && (k & mask) == prefix) {
        const unsigned long long w =
            by_mass ? (unsigned long long)(exp2f((v - mx) * scale2) * 1099511627776.0f) : 1ull;  // 2^40
        atomicAdd(&hist[(k >> shift) & 255u], w);
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      int chosen = -1, lowest = 0;
      uint64_t cum = above;
      for (int d = 255; d >= 0; --d) {
        if (hist[d] == 0) continue;
        lowest = d;
        if (cum + hist[d] >= need) {
          chosen = d;
          break;
        }
        cum += hist[d];
      }
      if (chosen < 0) {  // rounding left the target above the total: keep everything in range
        chosen = lowest;
        cum = above;
        for (int d = 255; d > lowest; --d) cum += hist[d];
      }
      shared_word[0] = (uint32_t)chosen;
      reinterpret_cast<unsigned long long*>(shared_word + 2)[0] = cum;
    }
    __syncthreads();
    const uint32_t d = shared_word[0];
    above = reinterpret_cast<unsigned long long*>(shared_word + 2)[0];
    prefix |= d << shift;
    mask |= 255u << shift;
    __syncthreads();
  }
  return prefix;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kSampleThreads) tl_sample_f32(float* logits, int m, int vocab,
                                                                           long long stride, const unsigned char* params,
                                                                           int cap, const int2* pen, int* out_ids) {
  tlpdl::enter();
  __shared__ unsigned long long hist[256];
  __shared__ float sv[32];
  __shared__ int si[32];
  __shared__ __align__(8) uint32_t word[4];
  __shared__ unsigned long long total;
  const int row = blockIdx.x;
  if (row >= m) return;
  float* const xw = logits + (long long)row * stride;
  const float* x = xw;
  const float temperature = reinterpret_cast<const float*>(params)[row];
  const float top_p = reinterpret_cast<const float*>(params + 4ll * cap)[row];
  const float min_p = reinterpret_cast<const float*>(params + 8ll * cap)[row];
  const int top_k = reinterpret_cast<const int*>(params + 12ll * cap)[row];
  const int counter = reinterpret_cast<const int*>(params + 16ll * cap)[row];
  const uint64_t seed = reinterpret_cast<const unsigned long long*>(params + 20ll * cap)[row];
  const int masked = reinterpret_cast<const int*>(params + 28ll * cap)[row];
  const uint32_t* mask =
      masked != 0 ? reinterpret_cast<const uint32_t*>(params + 56ll * cap + 4ll * row * ((vocab + 31) / 32)) : nullptr;
  const int pen_bias = reinterpret_cast<const int*>(params + 48ll * cap)[row];
  const int pen_count = reinterpret_cast<const int*>(params + 52ll * cap)[row];
  if (pen_bias > 0 || pen_count > 0) {
    const float presence = reinterpret_cast<const float*>(params + 32ll * cap)[row];
    const float frequency = reinterpret_cast<const float*>(params + 36ll * cap)[row];
    const float repetition = reinterpret_cast<const float*>(params + 40ll * cap)[row];
    const int2* e = pen + reinterpret_cast<const int*>(params + 44ll * cap)[row];
    for (int j = threadIdx.x; j < pen_bias; j += blockDim.x) {
      const int2 t = e[j];
      if (t.x >= 0 && t.x < vocab) xw[t.x] = __fadd_rn(xw[t.x], __int_as_float(t.y));
    }
    __syncthreads();  // a count pair may name an id a bias pair changed: the bias first (global writes, block scope)
    for (int j = threadIdx.x; j < pen_count; j += blockDim.x) {
      const int2 t = e[pen_bias + j];
      if (t.x < 0 || t.x >= vocab) continue;
      float v = xw[t.x];
      v = v > 0.0f ? __fdiv_rn(v, repetition) : __fmul_rn(v, repetition);
      v = __fsub_rn(v, __fmul_rn(frequency, (float)t.y));
      if (t.y > 0) v = __fsub_rn(v, presence);
      xw[t.x] = v;
    }
    __syncthreads();
  }

  float bv = -INFINITY;
  int bi = INT_MAX;
  constexpr int U = 8;  // independent loads in flight per thread (one block streams the whole row)
  for (int i0 = threadIdx.x; i0 < vocab; i0 += U * blockDim.x) {
    float v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int i = i0 + u * blockDim.x;
      v[u] = i < vocab && sample_allowed(mask, i) ? x[i] : NAN;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int i = i0 + u * blockDim.x;
      if (!isnan(v[u]) && (v[u] > bv || (v[u] == bv && i < bi))) {
        bv = v[u];
        bi = i;
      }
    }
  }
  sample_best(bv, bi, sv, si);
  if (!(temperature > 0.0f) || !(bv > -INFINITY)) {
    if (threadIdx.x == 0) out_ids[row] = bi == INT_MAX ? 0 : bi;
    return;
  }
  const float mx = bv;
  const float inv_t = 1.0f / temperature;
  const float scale2 = inv_t * 1.4426950408889634f;  // exp((l - mx) / T) = exp2((l - mx) * scale2)
  uint32_t floor = 0;
  if (top_k > 0 && top_k < vocab) {
    floor = sample_select(x, mask, vocab, 0u, false, mx, scale2, (uint64_t)top_k, hist, word);
  }
  if (top_p < 1.0f) {
    if (threadIdx.x == 0) total = 0;
    __syncthreads();
    unsigned long long part = 0;
    for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
      const float v = x[i];
      if (sample_key(v) >= floor && sample_allowed(mask, i)) part += (unsigned long long)(exp2f((v - mx) * scale2) * 1099511627776.0f);
    }
    atomicAdd(&total, part);  // integer sum: the same for any order
    __syncthreads();
    const uint64_t need = (uint64_t)((double)top_p * (double)total);
    const uint32_t fp = sample_select(x, mask, vocab, floor, true, mx, scale2, need > 0 ? need : 1, hist, word);
    floor = fp > floor ? fp : floor;
  }
  const float min_z = min_p > 0.0f ? logf(min_p) : -INFINITY;  // keep z >= ln(min_p): p >= min_p x p_max
  const uint64_t base = splitmix64(seed ^ ((uint64_t)(uint32_t)counter * 0xD1B54A32D192ED03ull));
  float best = -INFINITY;
  int besti = INT_MAX;
  for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
    const float v = x[i];
    if (sample_key(v) < floor || isnan(v) || !sample_allowed(mask, i)) continue;
    const float z = (v - mx) * inv_t;
    if (z < min_z || z == -INFINITY) continue;
    // 23 bits: (k + 0.5) / 2^23 is exact in fp32 for every k < 2^23, so u < 1 always (with 24 bits the top value
    // rounded to 1.0f, made the Gumbel score +inf and that id won: 1 in 2^24 ids a draw, ~0.9% of draws over 152k)
    const float u = ((float)(splitmix64(base + (uint64_t)i) >> 41) + 0.5f) * 1.1920928955078125e-7f;  // (0, 1)
    const float score = z - logf(-logf(u));
    if (score > best || (score == best && i < besti)) {
      best = score;
      besti = i;
    }
  }
  sample_best(best, besti, sv, si);
  if (threadIdx.x == 0) out_ids[row] = besti == INT_MAX ? bi : besti;
}
