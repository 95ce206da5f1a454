// Tensorlane custom allreduce: shared structures, barriers and the three algorithms.
//
// Ranks are GPUs (or "virtual ranks": several streams of one GPU). Every rank owns, per the Java class
// io.tensorlane.kernels.BufferLayout (the single source of these sizes; constants below MIRROR it):
//   signal  (peer-visible)  uint32 flags[blocks][TL_FLAG_SLOTS][TL_MAX_RANKS]
//   staging (peer-visible)  eager inputs are copied here so that peers can read them
//   scratch (peer-visible)  TwoStage reduce-scatter results; Ring receive slots
//   push    (peer-visible)  packs[TL_PUSH_PHASES][world][push slot bytes / 16]: OneStage's push variant (tl_push.cuh)
//   state   (local)         uint32 counters[blocks], then (64-byte aligned) one TlError record, then the push
//                           variant's call counter and its count of finished blocks (2 x uint32)
//   rank-data (local)       TlRankPtrs slots: 0 = staging, 1 = scratch, 2 = signal, 3 = push, 4.. registered inputs
//
// Synchronisation model (no peer atomics, so it is valid over PCIe P2P as well as NVLink):
//   * Rank p tells rank q "I reached point X of call E" by storing E into flags[b][X][p] of q's signal buffer.
//     Each (block, slot, writer) word has exactly one writer, so plain stores suffice; no read-modify-write.
//   * E (the epoch) is a per-block counter kept in local memory (state), read at kernel start and written
//     back at the end. It increases by one per call and is never reset, so flags never need clearing, and it
//     lives on the device so a CUDA graph replay (frozen kernel arguments) still advances it. All ranks make
//     the same sequence of calls with the same grid, so block b's counter agrees on every rank.
//   * Readers compare with (int32)(flag - E) >= 0: wrap-safe, and a flag already at a later epoch (a fast peer
//     that went on) also proves the earlier point was passed.
//   * Every wait is bounded by %globaltimer; on expiry the block records who it waited for in the TlError
//     record (first error wins, by atomicCAS on the local magic word) and the kernel returns. The host reads
//     the record after synchronising and throws "rank r did not arrive ...". No infinite spin.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "tl_norm.cuh"

#define TL_MAX_RANKS 8      // mirrors BufferLayout.MAX_RANKS
#define TL_FLAG_SLOTS 16    // mirrors BufferLayout.FLAG_SLOTS
#define TL_THREADS 512      // mirrors BufferLayout.THREADS_PER_BLOCK
#define TL_FIXED_SLOTS 4    // mirrors BufferLayout.FIXED_POINTER_SLOTS
#define TL_PUSH_SLOT 3      // rank-data slot of the peers' push buffers (mirrors BufferLayout.PUSH_POINTER_SLOT)
#define TL_PUSH_PHASES 2    // mirrors BufferLayout.PUSH_PHASES
#define TL_PUSH_EMPTY_ELEMENT 0x8000  // mirrors BufferLayout.PUSH_EMPTY_ELEMENT: a push pack's "not arrived" element
#define TL_WAIT_PUSH 16     // the watchdog record's slot for "waited for a peer's pushed pack" (no flag slot)
#define TL_ERROR_MAGIC 0x544C4552u  // "TLER"

// Flag slots. OneStage uses START and END, TwoStage START, MID and END. Ring uses START for a handshake with
// its neighbours, then 1 + s for reduce-scatter step s and world + s for all-gather step s (s < world - 1):
// at most 2 * TL_MAX_RANKS - 2 = 14 < TL_FLAG_SLOTS.
#define TL_SLOT_START 0
#define TL_SLOT_MID 1
#define TL_SLOT_END 2

#define TL_ALGO_ONESTAGE 0
#define TL_ALGO_TWOSTAGE 1
#define TL_ALGO_RING 2

// One rank-data slot: the same buffer's address on every rank.
struct TlRankPtrs {
  void* ptr[TL_MAX_RANKS];
};

// The watchdog's record; 64 bytes (mirrors BufferLayout.ERROR_RECORD_BYTES and the Java decoder).
struct TlError {
  uint32_t magic;       // 0 = no error, TL_ERROR_MAGIC once recorded
  int32_t rank;         // the rank that gave up waiting
  int32_t peer;         // the rank it waited for
  int32_t slot;         // flag slot (stage) it waited at
  int32_t block;        // block index
  uint32_t epoch;       // the call's epoch
  int32_t algo;         // TL_ALGO_*
  int32_t world;
  uint64_t waited_ns;
  uint64_t timeout_ns;
  uint32_t seen;        // the flag value seen last
  uint32_t pad[3];
};
static_assert(sizeof(TlError) == 64, "TlError must stay 64 bytes");

struct TlCtx {
  const TlRankPtrs* in;    // peers' inputs
  const TlRankPtrs* scr;   // peers' scratch
  const TlRankPtrs* sig;   // peers' signal
  void* out;
  uint32_t* counters;
  TlError* err;
  long long count;
  int rank;
  int world;
  unsigned long long timeout_ns;
  int algo;
};

// ---- memory-ordering primitives -------------------------------------------------------------------------

// Release store at system scope: every write this thread performed or *observed* before (including the other
// threads' writes ordered before it by the __syncthreads that always precedes a signal, by cumulativity) is
// visible to whoever acquires this value, on any GPU and over PCIe. Requires sm_70+.
__device__ __forceinline__ void tl_st_release_sys(uint32_t* p, uint32_t v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Acquire load at system scope: reads issued after it (by this thread, and by the block after the following
// __syncthreads) observe everything the releasing peer published.
__device__ __forceinline__ uint32_t tl_ld_acquire_sys(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ uint64_t tl_globaltimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ uint32_t* tl_flag(void* signal, int block, int slot, int writer) {
  return reinterpret_cast<uint32_t*>(signal) + ((size_t)block * TL_FLAG_SLOTS + slot) * TL_MAX_RANKS + writer;
}

// Records the first timeout of this rank (atomicCAS on a local word: a same-device atomic, not a peer one).
__device__ __noinline__ void tl_record_error(TlError* err, int rank, int world, int algo, int peer, int slot,
                                              uint32_t epoch, uint64_t waited, uint64_t timeout, uint32_t seen) {
  if (atomicCAS(&err->magic, 0u, 0xFFFFFFFFu) == 0u) {
    err->rank = rank;
    err->peer = peer;
    err->slot = slot;
    err->block = blockIdx.x;
    err->epoch = epoch;
    err->algo = algo;
    err->world = world;
    err->waited_ns = waited;
    err->timeout_ns = timeout;
    err->seen = seen;
    __threadfence_system();  // fields before the magic: the host must never see a magic with stale fields
    atomicExch(&err->magic, TL_ERROR_MAGIC);
  }
}

// Waits (one thread) until the flag written by `peer` reaches `epoch`. Returns false on timeout or when
// another block of this rank already gave up (its record is set), so the whole rank unwinds quickly.
__device__ __forceinline__ bool tl_wait(const TlCtx& c, const uint32_t* f, int peer, int slot, uint32_t epoch) {
  uint32_t v = tl_ld_acquire_sys(f);
  if ((int32_t)(v - epoch) >= 0) return true;
  const uint64_t t0 = tl_globaltimer();
  for (uint32_t spins = 1;; ++spins) {
    v = tl_ld_acquire_sys(f);
    if ((int32_t)(v - epoch) >= 0) return true;
    if ((spins & 63u) == 0u) {
      const uint64_t waited = tl_globaltimer() - t0;
      if (waited > c.timeout_ns) {
        tl_record_error(c.err, c.rank, c.world, c.algo, peer, slot, epoch, waited, c.timeout_ns, v);
        return false;
      }
      // volatile: a relaxed poll of a local word written by a sibling block; no data depends on it.
      if (*reinterpret_cast<volatile uint32_t*>(&c.err->magic) != 0u) return false;
    }
  }
}

// Full barrier of block b with the same block on every rank, at `slot`. Must be called by all threads.
// Returns false (for every thread) when the watchdog fired.
__device__ __forceinline__ bool tl_barrier_all(const TlCtx& c, int slot, uint32_t epoch, int* s_ok) {
  // (1) All of this block's earlier global writes and reads happen-before thread p's release below.
  __syncthreads();
  if (threadIdx.x == 0) *s_ok = 1;
  __syncthreads();
  const int p = threadIdx.x;
  if (p < c.world) {
    // (2) Publish "block b of rank `rank` reached `slot`" in peer p's signal (release, system scope).
    tl_st_release_sys(tl_flag(c.sig->ptr[p], blockIdx.x, slot, c.rank), epoch);
    // (3) Wait for peer p's matching word in our own signal (acquire, system scope).
    if (!tl_wait(c, tl_flag(c.sig->ptr[c.rank], blockIdx.x, slot, p), p, slot, epoch)) *s_ok = 0;
  }
  // (4) Every thread's later accesses are ordered after the acquires of threads 0..world-1.
  __syncthreads();
  return *s_ok != 0;
}

// ---- 16-byte packs ----------------------------------------------------------------------------------------

template <typename T>
struct TlConv;
template <>
struct TlConv<float> {
  __device__ static float to_f(float v) { return v; }
  __device__ static float from_f(float v) { return v; }
};
template <>
struct TlConv<__nv_bfloat16> {
  __device__ static float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 from_f(float v) { return __float2bfloat16_rn(v); }
};
template <>
struct TlConv<__half> {
  __device__ static float to_f(__half v) { return __half2float(v); }
  __device__ static __half from_f(float v) { return __float2half_rn(v); }
};

template <typename T>
struct TlPack {
  static constexpr int N = 16 / sizeof(T);
  union {
    uint4 raw;
    T e[N];
  };
};

// Loads pack i of `base` as floats. Full packs are one 16-byte ld.global.cg (cached in L2 only: the data may
// have been written by a peer during this kernel, and L1 is not coherent; for peer memory it is a remote read
// anyway). The last, partial pack is read element by element so user buffers are never over-read.
template <typename T>
__device__ __forceinline__ void tl_load(const void* base, long long i, long long count, float (&f)[TlPack<T>::N]) {
  constexpr int N = TlPack<T>::N;
  const long long first = i * N;
  TlPack<T> p;
  if (first + N <= count) {
    p.raw = __ldcg(reinterpret_cast<const uint4*>(base) + i);
#pragma unroll
    for (int j = 0; j < N; ++j) f[j] = TlConv<T>::to_f(p.e[j]);
  } else {
    const T* b = reinterpret_cast<const T*>(base) + first;
#pragma unroll
    for (int j = 0; j < N; ++j) f[j] = (first + j < count) ? TlConv<T>::to_f(b[j]) : 0.0f;
  }
}

// Loads pack i raw (for the 1-stage fast path: issue all peers' loads before converting).
template <typename T>
__device__ __forceinline__ bool tl_full(long long i, long long count) {
  return (i + 1) * TlPack<T>::N <= count;
}

template <typename T>
__device__ __forceinline__ void tl_store(void* base, long long i, long long count, const float (&f)[TlPack<T>::N]) {
  constexpr int N = TlPack<T>::N;
  const long long first = i * N;
  TlPack<T> p;
#pragma unroll
  for (int j = 0; j < N; ++j) p.e[j] = TlConv<T>::from_f(f[j]);
  if (first + N <= count) {
    // st.global.cg: the line may be read next by a peer (scratch) or by the host/next kernel (output).
    __stcg(reinterpret_cast<uint4*>(base) + i, p.raw);
  } else {
    T* b = reinterpret_cast<T*>(base) + first;
#pragma unroll
    for (int j = 0; j < N; ++j)
      if (first + j < count) b[j] = p.e[j];
  }
}

__device__ __forceinline__ long long tl_part_begin(long long npacks, int part, int parts) {
  return (long long)part * npacks / parts;
}

// Pack i of every rank's input summed in fp32 in rank order 0..world-1: the one reduction OneStage and TwoStage
// share, so both give the same bits on every rank. A full pack issues every peer's 16-byte load before using any (up
// to 8 independent loads in flight per thread); the tail pack (fewer than N elements left) goes element-wise in the
// same order.
template <typename T>
__device__ __forceinline__ void tl_reduce_pack(const TlCtx& c, const void* const (&src)[TL_MAX_RANKS], long long i,
                                              float (&acc)[TlPack<T>::N]) {
  constexpr int N = TlPack<T>::N;
  if (tl_full<T>(i, c.count)) {
    TlPack<T> v[TL_MAX_RANKS];
#pragma unroll
    for (int p = 0; p < TL_MAX_RANKS; ++p)
      if (p < c.world) v[p].raw = __ldcg(reinterpret_cast<const uint4*>(src[p]) + i);
#pragma unroll
    for (int j = 0; j < N; ++j) acc[j] = TlConv<T>::to_f(v[0].e[j]);
#pragma unroll
    for (int p = 1; p < TL_MAX_RANKS; ++p)
      if (p < c.world) {
#pragma unroll
        for (int j = 0; j < N; ++j) acc[j] += TlConv<T>::to_f(v[p].e[j]);
      }
  } else {
    tl_load<T>(src[0], i, c.count, acc);
    for (int p = 1; p < c.world; ++p) {
      float f[N];
      tl_load<T>(src[p], i, c.count, f);
#pragma unroll
      for (int j = 0; j < N; ++j) acc[j] += f[j];
    }
  }
}

// ---- OneStage ---------------------------------------------------------------------------------------------
// start barrier (peers' inputs are ready: their copy into staging preceded their kernel on their stream),
// every rank reads every peer's pack and sums in fp32 in rank order 0..world-1 (identical on every rank, so
// the outputs are bitwise equal), end barrier (no rank may overwrite its staging for the next call while a
// peer still reads it).
template <typename T>
__device__ void tl_onestage(const TlCtx& c, uint32_t epoch, int* s_ok) {
  constexpr int N = TlPack<T>::N;
  if (!tl_barrier_all(c, TL_SLOT_START, epoch, s_ok)) return;
  const long long npacks = (c.count + N - 1) / N;
  const long long stride = (long long)gridDim.x * blockDim.x;
  const void* src[TL_MAX_RANKS];
#pragma unroll
  for (int p = 0; p < TL_MAX_RANKS; ++p) src[p] = p < c.world ? c.in->ptr[p] : nullptr;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < npacks; i += stride) {
    float acc[N];
    tl_reduce_pack<T>(c, src, i, acc);
    tl_store<T>(c.out, i, c.count, acc);
  }
  tl_barrier_all(c, TL_SLOT_END, epoch, s_ok);
}

// ---- TwoStage ---------------------------------------------------------------------------------------------
// Rank r owns packs [begin(r), begin(r+1)). Stage 1: r reduces its part from all peers' inputs (fp32, rank
// order) into its own scratch. MID barrier (release publishes the scratch writes; acquire makes the peers'
// scratch visible). Stage 2: r copies every part from its owner's scratch into its output. Block b reads in
// stage 2 exactly the packs block b of the owner wrote in stage 1 (same index mapping inside each part), so
// the per-block barrier suffices. END barrier: nobody overwrites staging/scratch while a peer still reads.
template <typename T>
__device__ void tl_twostage(const TlCtx& c, uint32_t epoch, int* s_ok) {
  constexpr int N = TlPack<T>::N;
  if (!tl_barrier_all(c, TL_SLOT_START, epoch, s_ok)) return;
  const long long npacks = (c.count + N - 1) / N;
  const long long stride = (long long)gridDim.x * blockDim.x;
  const long long t0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const void* src[TL_MAX_RANKS];
#pragma unroll
  for (int p = 0; p < TL_MAX_RANKS; ++p) src[p] = p < c.world ? c.in->ptr[p] : nullptr;
  void* mine = c.scr->ptr[c.rank];
  {
    const long long b = tl_part_begin(npacks, c.rank, c.world), e = tl_part_begin(npacks, c.rank + 1, c.world);
    for (long long i = b + t0; i < e; i += stride) {
      float acc[N];
      tl_reduce_pack<T>(c, src, i, acc);
      tl_store<T>(mine, i, c.count, acc);
    }
  }
  if (!tl_barrier_all(c, TL_SLOT_MID, epoch, s_ok)) return;
  for (int q = 0; q < c.world; ++q) {
    // Start with our own part's neighbour so ranks do not all read the same owner at once.
    const int p = (c.rank + q) % c.world;
    const void* from = c.scr->ptr[p];
    const long long b = tl_part_begin(npacks, p, c.world), e = tl_part_begin(npacks, p + 1, c.world);
    for (long long i = b + t0; i < e; i += stride) {
      if (tl_full<T>(i, c.count)) {
        __stcg(reinterpret_cast<uint4*>(c.out) + i, __ldcg(reinterpret_cast<const uint4*>(from) + i));
      } else {
        float f[N];
        tl_load<T>(from, i, c.count, f);
        tl_store<T>(c.out, i, c.count, f);
      }
    }
  }
  tl_barrier_all(c, TL_SLOT_END, epoch, s_ok);
}

// ---- Ring -------------------------------------------------------------------------------------------------
// For PCIe trees: each rank writes only into its right neighbour (r+1) and reads only its own memory, so every
// GPU has one outbound and one inbound P2P stream. Chunk k = packs [begin(k), begin(k+1)).
//   handshake: r writes START into left's signal and waits for right's START (right has begun this call, so it
//              finished reading its scratch in the previous call and may be written).
//   reduce-scatter step s (0..w-2): chunk k = r-1-s; partial = own input (+ what left pushed at step s-1)
//              pushed to right's scratch[k] in the data type; signal right at slot 1+s.
//   after w-1 steps r holds chunk r's full sum: out[k] = own + received; all-gather pushes it on, then every
//              received final chunk is copied to out and forwarded (slots w+s).
// Reuse of a scratch slot is safe without extra barriers: chunk k's final value exists only after its partial
// passed through every rank, so a rank has read its RS slot k before anyone can push final chunk k into it.
// The partial sums are rounded to the data type at each hop (as NCCL's ring does); the final chunk is
// computed once by its owner and copied, so every rank's output is bitwise equal.
template <typename T>
__device__ void tl_ring(const TlCtx& c, uint32_t epoch, int* s_ok) {
  constexpr int N = TlPack<T>::N;
  const int w = c.world, r = c.rank;
  const int right = (r + 1) % w, left = (r + w - 1) % w;
  const long long npacks = (c.count + N - 1) / N;
  const long long stride = (long long)gridDim.x * blockDim.x;
  const long long t0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const void* own_in = c.in->ptr[r];
  void* own_scr = c.scr->ptr[r];
  void* right_scr = c.scr->ptr[right];
  uint32_t* right_sig = reinterpret_cast<uint32_t*>(c.sig->ptr[right]);
  uint32_t* own_sig = reinterpret_cast<uint32_t*>(c.sig->ptr[r]);

  __syncthreads();
  if (threadIdx.x == 0) {
    *s_ok = 1;
    tl_st_release_sys(tl_flag(c.sig->ptr[left], blockIdx.x, TL_SLOT_START, r), epoch);
    // right wrote its START into *our* signal (slot START, writer = right), exactly as we wrote ours into left's.
    if (!tl_wait(c, tl_flag(own_sig, blockIdx.x, TL_SLOT_START, right), right, TL_SLOT_START, epoch)) *s_ok = 0;
  }
  __syncthreads();
  if (!*s_ok) return;

  // Waits for left's push at `slot` (thread 0), then lets the whole block read it.
  auto recv = [&](int slot) -> bool {
    if (threadIdx.x == 0 && !tl_wait(c, tl_flag(own_sig, blockIdx.x, slot, left), left, slot, epoch)) *s_ok = 0;
    __syncthreads();
    return *s_ok != 0;
  };
  // Publishes this block's pushes to right at `slot`.
  auto send = [&](int slot) {
    __syncthreads();  // all threads' pushes precede thread 0's release (cumulativity)
    if (threadIdx.x == 0) tl_st_release_sys(tl_flag(right_sig, blockIdx.x, slot, r), epoch);
  };

  for (int s = 0; s < w - 1; ++s) {
    const int k = ((r - 1 - s) % w + w) % w;
    if (s > 0 && !recv(1 + s - 1)) return;
    const long long b = tl_part_begin(npacks, k, w), e = tl_part_begin(npacks, k + 1, w);
    for (long long i = b + t0; i < e; i += stride) {
      float a[N];
      tl_load<T>(own_in, i, c.count, a);
      if (s > 0) {
        float f[N];
        tl_load<T>(own_scr, i, c.count, f);
#pragma unroll
        for (int j = 0; j < N; ++j) a[j] = f[j] + a[j];
      }
      tl_store<T>(right_scr, i, c.count, a);
    }
    send(1 + s);
  }
  // Own chunk r: final sum, write to output and push as all-gather step 0.
  if (!recv(1 + w - 2)) return;
  {
    const long long b = tl_part_begin(npacks, r, w), e = tl_part_begin(npacks, r + 1, w);
    for (long long i = b + t0; i < e; i += stride) {
      float a[N], f[N];
      tl_load<T>(own_in, i, c.count, a);
      tl_load<T>(own_scr, i, c.count, f);
#pragma unroll
      for (int j = 0; j < N; ++j) a[j] = f[j] + a[j];
      // Round once, then write the same rounded value locally and to the right: all ranks get identical bits.
      float rounded[N];
#pragma unroll
      for (int j = 0; j < N; ++j) rounded[j] = TlConv<T>::to_f(TlConv<T>::from_f(a[j]));
      tl_store<T>(c.out, i, c.count, rounded);
      if (w > 1) tl_store<T>(right_scr, i, c.count, rounded);
    }
    send(w);
  }
  for (int s = 1; s < w; ++s) {
    if (!recv(w + s - 1)) return;
    const int k = ((r - s) % w + w) % w;
    const bool forward = s < w - 1;
    const long long b = tl_part_begin(npacks, k, w), e = tl_part_begin(npacks, k + 1, w);
    for (long long i = b + t0; i < e; i += stride) {
      if (tl_full<T>(i, c.count)) {
        const uint4 v = __ldcg(reinterpret_cast<const uint4*>(own_scr) + i);
        __stcg(reinterpret_cast<uint4*>(c.out) + i, v);
        if (forward) __stcg(reinterpret_cast<uint4*>(right_scr) + i, v);
      } else {
        float f[N];
        tl_load<T>(own_scr, i, c.count, f);
        tl_store<T>(c.out, i, c.count, f);
        if (forward) tl_store<T>(right_scr, i, c.count, f);
      }
    }
    if (forward) send(w + s);
  }
}

// ---- OneStage fused with the residual add + RMSNorm ---------------------------------------------------------
// in: every rank's [n, hidden] T (count = n * hidden); residual [n, hidden] fp32 (in/out), weight [hidden] T, out
// [n, hidden] T: the allreduce followed by tlnorm::add_rmsnorm_row (tl_norm.cuh) of each reduced row, in one kernel.
// A row is summed exactly as OneStage sums it (tl_reduce_pack: fp32 in rank order 0..world-1), rounded to T into
// shared memory (as OneStage's store rounds it) and handed to the row function, so residual and out get the bits of
// OneStage + tl_add_rmsnorm, on every rank alike. Block b takes rows b, b + grid, ...; one start barrier (the peers'
// inputs are ready) and one end barrier (no rank overwrites its input while a peer still reads it), as OneStage.
// Requires hidden % (16 / sizeof(T)) == 0; dynamic shared memory hidden * sizeof(T) bytes. The row function keeps 4
// elements per thread in registers (2,048 of the row; the rest re-read): the kernel must fit two blocks of 512 threads
// per multiprocessor (64 registers), and with 8 ptxas spilled 56 bytes (sm_90, nvcc 13). Same bits either way.
template <typename T>
__device__ void tl_onestage_rmsnorm(const TlCtx& c, uint32_t epoch, int* s_ok, float* residual, const T* weight,
                                    T* out, int n, int hidden, float eps, int mode, uint4* s_row, float* red) {
  constexpr int N = TlPack<T>::N;
  if (!tl_barrier_all(c, TL_SLOT_START, epoch, s_ok)) return;
  const void* src[TL_MAX_RANKS];
#pragma unroll
  for (int p = 0; p < TL_MAX_RANKS; ++p) src[p] = p < c.world ? c.in->ptr[p] : nullptr;
  const int row_packs = hidden / N;
  for (int row = blockIdx.x; row < n; row += gridDim.x) {
    for (int k = threadIdx.x; k < row_packs; k += blockDim.x) {
      float acc[N];
      tl_reduce_pack<T>(c, src, (long long)row * row_packs + k, acc);
      TlPack<T> v;
#pragma unroll
      for (int j = 0; j < N; ++j) v.e[j] = TlConv<T>::from_f(acc[j]);
      s_row[k] = v.raw;
    }
    __syncthreads();
    tlnorm::add_rmsnorm_row<T, 4>(residual + (long long)row * hidden, reinterpret_cast<const T*>(s_row), weight,
                               out + (long long)row * hidden, hidden, eps, mode, red);
    __syncthreads();  // the next row rewrites s_row
  }
  tl_barrier_all(c, TL_SLOT_END, epoch, s_ok);
}

// ---- entry ------------------------------------------------------------------------------------------------
// The call's context: rank-data slot 1 holds the peers' scratch, slot 2 their signal buffers.
__device__ __forceinline__ TlCtx tl_ctx(const TlRankPtrs* in, const TlRankPtrs* rank_data, void* out,
                                        uint32_t* counters, TlError* err, long long count, int rank, int world,
                                        unsigned long long timeout_ns, int algo) {
  TlCtx c;
  c.in = in;
  c.scr = rank_data + 1;
  c.sig = rank_data + 2;
  c.out = out;
  c.counters = counters;
  c.err = err;
  c.count = count;
  c.rank = rank;
  c.world = world;
  c.timeout_ns = timeout_ns;
  c.algo = algo;
  return c;
}

template <typename T, int ALGO>
__device__ __forceinline__ void tl_allreduce(const TlRankPtrs* in, const TlRankPtrs* rank_data, void* out,
                                             uint32_t* counters, TlError* err, long long count, int rank,
                                             int world, unsigned long long timeout_ns) {
  __shared__ int s_ok;
  __shared__ uint32_t s_epoch;
  const TlCtx c = tl_ctx(in, rank_data, out, counters, err, count, rank, world, timeout_ns, ALGO);
  // The counter is only touched by thread 0 of block b on this rank; the previous call's write completed with
  // the previous kernel on this stream (stream order), so a plain load sees it.
  if (threadIdx.x == 0) s_epoch = counters[blockIdx.x] + 1u;
  __syncthreads();
  const uint32_t epoch = s_epoch;
  if (ALGO == TL_ALGO_ONESTAGE) tl_onestage<T>(c, epoch, &s_ok);
  if (ALGO == TL_ALGO_TWOSTAGE) tl_twostage<T>(c, epoch, &s_ok);
  if (ALGO == TL_ALGO_RING) tl_ring<T>(c, epoch, &s_ok);
  __syncthreads();
  // Advance only on success: after a timeout the communicator is broken and must be rebuilt anyway.
  if (threadIdx.x == 0 && s_ok) counters[blockIdx.x] = epoch;
}

// The fused OneStage + residual add + RMSNorm (tl_onestage_rmsnorm): the same epochs, flags and watchdog as every
// allreduce, so it may stand between any two of them in a rank's call sequence.
template <typename T>
__device__ __forceinline__ void tl_allreduce_rmsnorm(const TlRankPtrs* in, const TlRankPtrs* rank_data,
                                                     uint32_t* counters, TlError* err, int rank, int world,
                                                     unsigned long long timeout_ns, float* residual, const T* weight,
                                                     T* out, int n, int hidden, float eps, int mode) {
  extern __shared__ uint4 s_row[];
  __shared__ int s_ok;
  __shared__ uint32_t s_epoch;
  __shared__ float red[32];
  const TlCtx c =
      tl_ctx(in, rank_data, out, counters, err, (long long)n * hidden, rank, world, timeout_ns, TL_ALGO_ONESTAGE);
  if (threadIdx.x == 0) s_epoch = counters[blockIdx.x] + 1u;
  __syncthreads();
  const uint32_t epoch = s_epoch;
  tl_onestage_rmsnorm<T>(c, epoch, &s_ok, residual, weight, out, n, hidden, eps, mode, s_row, red);
  __syncthreads();
  if (threadIdx.x == 0 && s_ok) counters[blockIdx.x] = epoch;
}
