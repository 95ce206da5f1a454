// OneStage's push variant: a one-shot allreduce with no barrier, for bf16 and fp16 messages that fit the push buffer.
//
// OneStage pulls: a start barrier (the peers' inputs are ready), every rank reads every peer's input, an end barrier
// (no rank overwrites its input while a peer still reads it): two round trips over the link per call. Here every rank
// instead *stores* its input into a region of every peer's push buffer, and reads only its own buffer, polling each
// 16-byte pack until it holds data. The data is its own signal, so there is no flag and no barrier: one one-way trip
// per call, and stores are posted writes on PCIe as on NVLink (no remote read waits for an answer).
//
// Layout (rank-data slot TL_PUSH_SLOT holds every rank's push buffer): region (phase, writer) of rank q's buffer is
// packs [(phase * world + writer) * slot_bytes / 16, ...). Call k of a rank writes into phase k % 2 of its peers.
//
// "Empty" is the bit pattern 0x8000 (-0.0 in bf16 and fp16) in any 16-bit element of a pack: a writer replaces -0.0
// by +0.0 in every element it sends (and in its own contribution alike), so a pack that arrived holds no such element,
// and a reader takes a pack only when all 8 of its elements arrived, however the link splits the 16-byte store (at
// element boundaries or coarser: NVLink and PCIe write whole 4-byte words at least). A reader puts the empty pattern
// back into every pack it took, so the region is empty again before its next use.
//
// Why two phases suffice: a rank can start call k + 2 only after call k + 1 finished on it, which needed every peer's
// call k + 1 data, which a peer sends only after its call k kernel completed, including emptying its phase-k region.
// So writes into phase k % 2 for call k + 2 always land in a region its owner has emptied. A peer may be one call
// ahead (writing the other phase) but never two.
//
// The call counter is one word in the rank's state (all ranks make the same sequence of push calls, so it agrees on
// every rank), read by every block at its start; the block that finishes last (a local atomic count) advances it, so
// no block of the same kernel can read an advanced value, and the next kernel on the stream sees it. A CUDA graph's
// replay advances it too (frozen arguments). The element sum is OneStage's: fp32 in rank order 0..world-1, rounded
// once, so the output has OneStage's bits on every rank (except that an all -0.0 column sums to +0.0).
//
// Every wait is bounded by %globaltimer as in tl_allreduce.cuh (TlError slot TL_WAIT_PUSH, algorithm OneStage).
#pragma once

#include "tl_allreduce.cuh"

#define TL_PUSH_EMPTY ((TL_PUSH_EMPTY_ELEMENT << 16) | TL_PUSH_EMPTY_ELEMENT)  // two empty elements, one 32-bit word

__device__ __forceinline__ uint32_t tl_push_canon(uint32_t w) {
  if ((w & 0xFFFFu) == TL_PUSH_EMPTY_ELEMENT) w &= 0xFFFF0000u;
  if ((w >> 16) == TL_PUSH_EMPTY_ELEMENT) w &= 0x0000FFFFu;
  return w;
}

__device__ __forceinline__ uint4 tl_push_canon(uint4 v) {
  return make_uint4(tl_push_canon(v.x), tl_push_canon(v.y), tl_push_canon(v.z), tl_push_canon(v.w));
}

__device__ __forceinline__ bool tl_push_missing(uint32_t w) {
  return (w & 0xFFFFu) == TL_PUSH_EMPTY_ELEMENT || (w >> 16) == TL_PUSH_EMPTY_ELEMENT;
}

__device__ __forceinline__ bool tl_push_missing(uint4 v) {
  return tl_push_missing(v.x) || tl_push_missing(v.y) || tl_push_missing(v.z) || tl_push_missing(v.w);
}

// Volatile 16-byte load and store: no L1, seen by (and seeing) the other GPU's accesses at system scope.
__device__ __forceinline__ uint4 tl_ld_volatile16(const uint4* p) {
  uint4 v;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

__device__ __forceinline__ void tl_st_volatile16(uint4* p, uint4 v) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

struct TlPush {
  const TlRankPtrs* bufs;  // every rank's push buffer
  uint32_t* state;         // [0] call counter, [1] finished blocks of the current call
  TlError* err;
  long long slot_bytes;    // bytes of one (phase, writer) region
  unsigned long long timeout_ns;
  uint32_t call;           // state[0] at the start of this call
  int rank;
  int world;
};

// Reads the call counter (thread 0; the previous kernel on this stream wrote it) and builds the context.
__device__ __forceinline__ TlPush tl_push_ctx(const TlRankPtrs* rank_data, uint32_t* state, TlError* err,
                                              long long slot_bytes, unsigned long long timeout_ns, int rank, int world,
                                              uint32_t* s_call) {
  if (threadIdx.x == 0) *s_call = state[0];
  __syncthreads();
  TlPush c;
  c.bufs = rank_data + TL_PUSH_SLOT;
  c.state = state;
  c.err = err;
  c.slot_bytes = slot_bytes;
  c.timeout_ns = timeout_ns;
  c.call = *s_call;
  c.rank = rank;
  c.world = world;
  return c;
}

__device__ __forceinline__ uint4* tl_push_region(const TlPush& c, int owner, int writer) {
  const long long offset = ((long long)(c.call & 1u) * c.world + writer) * c.slot_bytes;
  return reinterpret_cast<uint4*>(reinterpret_cast<char*>(c.bufs->ptr[owner]) + offset);
}

// This rank's pack i, with -0.0 made +0.0 (what it sends, and what it adds itself).
__device__ __forceinline__ uint4 tl_push_own(const void* input, long long i) {
  return tl_push_canon(__ldcg(reinterpret_cast<const uint4*>(input) + i));
}

// Stores pack i of this rank into its region of every peer's buffer.
__device__ __forceinline__ void tl_push_send(const TlPush& c, long long i, uint4 v) {
#pragma unroll
  for (int p = 0; p < TL_MAX_RANKS; ++p)
    if (p < c.world && p != c.rank) tl_st_volatile16(tl_push_region(c, p, c.rank) + i, v);
}

// The slow path of tl_push_reduce: waits until every peer's pack at `base` (writer p's at base + p * slot_bytes) has
// arrived. False on the watchdog's timeout or when a sibling block gave up. Out of line, so the fast path keeps its
// registers; the caller loads the packs again afterwards.
__device__ __noinline__ bool tl_push_await(TlPush c, const char* base) {
  for (int p = 0; p < c.world; ++p) {
    if (p == c.rank) continue;
    const uint4* at = reinterpret_cast<const uint4*>(base + p * c.slot_bytes);
    uint4 v = tl_ld_volatile16(at);
    if (!tl_push_missing(v)) continue;
    const uint64_t t0 = tl_globaltimer();
    for (uint32_t spins = 1;; ++spins) {
      v = tl_ld_volatile16(at);
      if (!tl_push_missing(v)) break;
      if ((spins & 63u) == 0u) {
        const uint64_t waited = tl_globaltimer() - t0;
        if (waited > c.timeout_ns) {
          tl_record_error(c.err, c.rank, c.world, TL_ALGO_ONESTAGE, p, TL_WAIT_PUSH, c.call + 1u, waited,
                          c.timeout_ns, v.x);
          return false;
        }
        if (*reinterpret_cast<volatile uint32_t*>(&c.err->magic) != 0u) return false;
      }
    }
  }
  return true;
}

// Pack i summed over the ranks in fp32 in rank order (OneStage's order, so OneStage's bits); `own` is this rank's. The
// peers' packs are taken from this rank's buffer and their slots made empty again.
template <typename T>
__device__ __forceinline__ bool tl_push_reduce(const TlPush& c, uint4 own, long long i, float (&acc)[TlPack<T>::N]) {
  constexpr int N = TlPack<T>::N;
  const char* base = reinterpret_cast<const char*>(tl_push_region(c, c.rank, 0) + i);
  TlPack<T> v[TL_MAX_RANKS];
  bool missing = false;
#pragma unroll
  for (int p = 0; p < TL_MAX_RANKS; ++p)
    if (p < c.world && p != c.rank) {  // every peer's load in flight before any is used
      v[p].raw = tl_ld_volatile16(reinterpret_cast<const uint4*>(base + p * c.slot_bytes));
      missing = missing || tl_push_missing(v[p].raw);
    }
  if (missing) {
    if (!tl_push_await(c, base)) return false;
#pragma unroll
    for (int p = 0; p < TL_MAX_RANKS; ++p)
      if (p < c.world && p != c.rank) v[p].raw = tl_ld_volatile16(reinterpret_cast<const uint4*>(base + p * c.slot_bytes));
  }
#pragma unroll
  for (int p = 0; p < TL_MAX_RANKS; ++p)
    if (p < c.world && p != c.rank)
      __stcg(reinterpret_cast<uint4*>(const_cast<char*>(base + p * c.slot_bytes)),
             make_uint4(TL_PUSH_EMPTY, TL_PUSH_EMPTY, TL_PUSH_EMPTY, TL_PUSH_EMPTY));
  // (a select, not v[c.rank] = own: a dynamic index would put v in local memory)
#pragma unroll
  for (int p = 0; p < TL_MAX_RANKS; ++p)
    if (p < c.world) {
      TlPack<T> x;
      x.raw = p == c.rank ? own : v[p].raw;
#pragma unroll
      for (int j = 0; j < N; ++j) acc[j] = p == 0 ? TlConv<T>::to_f(x.e[j]) : acc[j] + TlConv<T>::to_f(x.e[j]);
    }
  return true;
}

// The block that finishes last advances the call counter (see the head comment). Must be called by all threads.
__device__ __forceinline__ void tl_push_finish(const TlPush& c) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&c.state[1], 1u) == gridDim.x - 1u) {
      c.state[1] = 0u;
      c.state[0] = c.call + 1u;
    }
  }
}

// The plain allreduce: count elements (a multiple of 16 / sizeof(T)), out 16-byte aligned and no rank's input.
template <typename T>
__device__ void tl_push_allreduce(const T* input, T* out, const TlRankPtrs* rank_data, uint32_t* state, TlError* err,
                                  long long count, int rank, int world, unsigned long long timeout_ns,
                                  long long slot_bytes) {
  constexpr int N = TlPack<T>::N;
  __shared__ uint32_t s_call;
  const TlPush c = tl_push_ctx(rank_data, state, err, slot_bytes, timeout_ns, rank, world, &s_call);
  const long long npacks = count / N;
  const long long stride = (long long)gridDim.x * blockDim.x;
  const long long t0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (long long i = t0; i < npacks; i += stride) tl_push_send(c, i, tl_push_own(input, i));
  for (long long i = t0; i < npacks; i += stride) {
    float acc[N];
    if (!tl_push_reduce<T>(c, tl_push_own(input, i), i, acc)) break;
    TlPack<T> o;
#pragma unroll
    for (int j = 0; j < N; ++j) o.e[j] = TlConv<T>::from_f(acc[j]);
    __stcg(reinterpret_cast<uint4*>(out) + i, o.raw);
  }
  tl_push_finish(c);
}

// The push variant of tl_onestage_rmsnorm (tl_allreduce.cuh): block b sends rows b, b + grid, ..., then sums each of
// them, rounds it to T into shared memory and hands it to tlnorm::add_rmsnorm_row, as the pull variant does.
template <typename T>
__device__ void tl_push_rmsnorm(const T* input, const TlRankPtrs* rank_data, uint32_t* state, TlError* err, int rank,
                                int world, unsigned long long timeout_ns, long long slot_bytes, float* residual,
                                const T* weight, T* out, int n, int hidden, float eps, int mode) {
  constexpr int N = TlPack<T>::N;
  extern __shared__ uint4 s_row[];
  __shared__ uint32_t s_call;
  __shared__ int s_ok;
  __shared__ float red[32];
  const TlPush c = tl_push_ctx(rank_data, state, err, slot_bytes, timeout_ns, rank, world, &s_call);
  const int row_packs = hidden / N;
  for (int row = blockIdx.x; row < n; row += gridDim.x)
    for (int k = threadIdx.x; k < row_packs; k += blockDim.x) {
      const long long i = (long long)row * row_packs + k;
      tl_push_send(c, i, tl_push_own(input, i));
    }
  if (threadIdx.x == 0) s_ok = 1;
  __syncthreads();
  for (int row = blockIdx.x; row < n; row += gridDim.x) {
    for (int k = threadIdx.x; k < row_packs; k += blockDim.x) {
      const long long i = (long long)row * row_packs + k;
      float acc[N];
      if (!tl_push_reduce<T>(c, tl_push_own(input, i), i, acc)) {
        s_ok = 0;
        break;
      }
      TlPack<T> v;
#pragma unroll
      for (int j = 0; j < N; ++j) v.e[j] = TlConv<T>::from_f(acc[j]);
      s_row[k] = v.raw;
    }
    __syncthreads();
    if (!s_ok) break;
    tlnorm::add_rmsnorm_row<T, 4>(residual + (long long)row * hidden, reinterpret_cast<const T*>(s_row), weight,
                               out + (long long)row * hidden, hidden, eps, mode, red);
    __syncthreads();  // the next row rewrites s_row
  }
  tl_push_finish(c);
}
