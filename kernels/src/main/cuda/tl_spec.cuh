// Speculative decoding: the rejection-sampling verify of guessed tokens (Leviathan et al. 2023, Chen et al. 2023).
// Included by tl_model.cu; launched by io.tensorlane.runtime.llm.SpecKernels. The host reference of the same rule is
// io.tensorlane.runtime.sched.SpecRule.verify; kernelcheck compares the two and tests the output distribution.
//
// The n-gram proposer does not need this kernel (its guess is a point mass: the ordinary sampler's draw per row,
// accepted while it equals the guess, is the same rule); a draft model does.
//
// tl_spec_verify_f32: one block of kSpecThreads threads per sequence s.
//   p        fp32 target probabilities (rows sum to 1), row stride `stride` floats; sequence s's k[s] + 1 rows start
//            at row p_row[s] (row i: the distribution of the token after guess i - 1; row k[s]: the bonus row)
//   q        fp32 proposal probabilities, the same stride; sequence s's k[s] rows start at row q_row[s]
//   draft    int32 guesses, sequence s's k[s] at draft[q_row[s] ..]
//   k        int32 guesses per sequence (0..: 0 means a plain draw from p's first row)
//   seed     uint64 per sequence, counter int32 per sequence: with them the uniforms are fixed (a counter-based hash,
//            splitmix64), so the same inputs always give the same verdict
//   vocab    ids per row (<= stride)
//   accepted int32 out: how many leading guesses are kept (0..k[s])
//   next     int32 out: the token after them: drawn from max(0, p_a - q_a) normalised at the first rejection a (p_a
//            itself when that residual is all zero: a rejection then had probability 0), from p_k when all are kept;
//            -1 when the row has no positive weight
// Rule: guess i (token d) is kept iff u_i * q_i(d) < p_i(d), u_i uniform in (0, 1): probability min(1, p/q).
// The draw is exact for the weights w: argmax over ids of log(w_v) + Gumbel_v (Gumbel-max), ties to the lower id.
#pragma once
#include <stdint.h>
#include <climits>
#include <math.h>

namespace tlspec {

constexpr int kSpecThreads = 256;

__device__ __forceinline__ uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// (0, 1) from the top 23 bits: (h + 0.5) / 2^23 is exact in fp32, its largest value 1 - 2^-24 (24 bits would round
// the largest up to 1.0).
__device__ __forceinline__ float unit(uint64_t h) { return ((float)(h >> 41) + 0.5f) * 1.1920928955078125e-7f; }

// The weight of id v in the draw: the residual at a rejected row, else (bonus row, or an all-zero residual) p.
__device__ __forceinline__ float weight(const float* pr, const float* qr, bool residual, int v) {
  return residual ? fmaxf(pr[v] - qr[v], 0.f) : pr[v];
}

}  // namespace tlspec

extern "C" __global__ void __launch_bounds__(tlspec::kSpecThreads)
    tl_spec_verify_f32(const float* __restrict__ p, const float* __restrict__ q, long long stride,
                       const int* __restrict__ draft, const int* __restrict__ k_of, const int* __restrict__ p_row,
                       const int* __restrict__ q_row, const unsigned long long* __restrict__ seed,
                       const int* __restrict__ counter, int vocab, int* __restrict__ accepted,
                       int* __restrict__ next) {
  tlpdl::enter();
  using namespace tlspec;
  const int s = blockIdx.x;
  const int k = k_of[s];
  const float* ps = p + (long long)p_row[s] * stride;
  const float* qs = q + (long long)q_row[s] * stride;
  const int* ds = draft + q_row[s];
  // the sequence's two streams: one uniform per guess, one per id for the draw
  const uint64_t base = mix64((uint64_t)seed[s] ^ ((uint64_t)(uint32_t)counter[s] * 0xD1B54A32D192ED03ull));
  const uint64_t draw_base = mix64(base ^ 0x5851F42D4C957F2Dull);
  __shared__ int s_acc;
  __shared__ float s_sum[kSpecThreads / 32];
  __shared__ float s_key[kSpecThreads / 32];
  __shared__ int s_id[kSpecThreads / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

  if (threadIdx.x == 0) {
    int a = 0;
    for (; a < k; ++a) {
      const int d = ds[a];
      const float pd = ps[(long long)a * stride + d];
      const float qd = qs[(long long)a * stride + d];
      const float u = unit(mix64(base + (uint64_t)a));
      if (!(u * qd < pd)) break;
    }
    s_acc = a;
  }
  __syncthreads();
  const int a = s_acc;
  const float* pr = ps + (long long)a * stride;
  const float* qr = qs + (long long)a * stride;
  bool residual = a < k;
  if (residual) {  // is the residual all zero? (then p itself)
    float part = 0.f;
    for (int v = threadIdx.x; v < vocab; v += kSpecThreads) part += fmaxf(pr[v] - qr[v], 0.f);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) part += __shfl_xor_sync(0xffffffffu, part, o);
    if (lane == 0) s_sum[warp] = part;
    __syncthreads();
    float total = 0.f;
#pragma unroll
    for (int w = 0; w < kSpecThreads / 32; ++w) total += s_sum[w];
    residual = total > 0.f;
  }
  float best = -INFINITY;
  int bi = INT_MAX;
  for (int v = threadIdx.x; v < vocab; v += kSpecThreads) {
    const float w = weight(pr, qr, residual, v);
    if (w > 0.f) {
      const float g = -logf(-logf(unit(mix64(draw_base + (uint64_t)v))));
      const float key = logf(w) + g;
      if (key > best) {  // v rises per thread: the first of equal keys (the lower id) stays
        best = key;
        bi = v;
      }
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float ok = __shfl_xor_sync(0xffffffffu, best, o);
    const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
    if (ok > best || (ok == best && oi < bi)) {
      best = ok;
      bi = oi;
    }
  }
  if (lane == 0) {
    s_key[warp] = best;
    s_id[warp] = bi;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kSpecThreads / 32; ++w) {
      if (s_key[w] > best || (s_key[w] == best && s_id[w] < bi)) {
        best = s_key[w];
        bi = s_id[w];
      }
    }
    accepted[s] = a;
    next[s] = bi == INT_MAX ? -1 : bi;
  }
}

// tl_chain_advance_i32: the draft-model proposer's greedy steps chained on the GPU (io.tensorlane.runtime.llm.ChainedSteps):
// after a step of one sequence whose greedy ids are in out_ids, it records out_ids[ids_index] (the id after the step's
// last token) as chain_out[j] and, unless `last`, makes the step inputs those of a one-token step of that id at the
// next position: ids[0] = the id, positions[0] = positions[pos_index] + 1, slots[0] = its cache slot in row 0 of the
// block tables (block * block_size + position % block_size, StepBatch's rule), token_row[0] = logit_tokens[0] = 0. The
// next step (a replay of the one-token graph) then reads them where the host's upload would have put them, so k
// greedy draft steps need one read-back instead of k. The caller guarantees that row 0's table covers the positions.
// One thread; launched between graph replays (not captured).
extern "C" __global__ void tl_chain_advance_i32(const int* out_ids, int ids_index, int pos_index, int* ids,
                                                int* positions, int* slots, int* token_row, int* logit_tokens,
                                                const int* tables, int block_size, int* chain_out, int j, int last) {
  tlpdl::enter();
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  const int id = out_ids[ids_index];
  chain_out[j] = id;
  if (last) return;
  const int pos = positions[pos_index] + 1;
  ids[0] = id;
  positions[0] = pos;
  slots[0] = tables[pos / block_size] * block_size + pos % block_size;
  token_row[0] = 0;
  logit_tokens[0] = 0;
}
