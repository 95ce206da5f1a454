// Entry points of the Tensorlane custom allreduce (see tl_allreduce.cuh for the design and memory ordering).
// Names are tl_allreduce_<algo>_<dtype>; the Java engine builds them from Algorithm and DType.
//
// Parameters (all ranks launch the same kernel with the same grid, one block count <= BufferLayout.blocks):
//   in        device pointer to the rank-data slot holding every rank's input address (slot 0 = staging)
//   rank_data device pointer to this rank's rank-data buffer (slot 1 = scratch, slot 2 = signal)
//   out       this rank's output (16-byte aligned); never an input of any rank (peers may still read inputs)
//   counters  this rank's state buffer (per-block epochs), err: the TlError record inside it
#include "tl_allreduce.cuh"
#include "tl_push.cuh"

#define TL_ENTRY(NAME, T, ALGO)                                                                                   \
  extern "C" __global__ void __launch_bounds__(TL_THREADS, 2)                                                     \
      NAME(const TlRankPtrs* in, const TlRankPtrs* rank_data, void* out, uint32_t* counters, TlError* err,       \
           long long count, int rank, int world, unsigned long long timeout_ns) {                                  \
    tl_allreduce<T, ALGO>(in, rank_data, out, counters, err, count, rank, world, timeout_ns);                      \
  }

TL_ENTRY(tl_allreduce_onestage_fp32, float, TL_ALGO_ONESTAGE)
TL_ENTRY(tl_allreduce_onestage_bf16, __nv_bfloat16, TL_ALGO_ONESTAGE)
TL_ENTRY(tl_allreduce_onestage_fp16, __half, TL_ALGO_ONESTAGE)
TL_ENTRY(tl_allreduce_twostage_fp32, float, TL_ALGO_TWOSTAGE)
TL_ENTRY(tl_allreduce_twostage_bf16, __nv_bfloat16, TL_ALGO_TWOSTAGE)
TL_ENTRY(tl_allreduce_twostage_fp16, __half, TL_ALGO_TWOSTAGE)
TL_ENTRY(tl_allreduce_ring_fp32, float, TL_ALGO_RING)
TL_ENTRY(tl_allreduce_ring_bf16, __nv_bfloat16, TL_ALGO_RING)
TL_ENTRY(tl_allreduce_ring_fp16, __half, TL_ALGO_RING)

// The allreduce fused with the residual add + RMSNorm of the model's layers (tl_onestage_rmsnorm): names
// tl_allreduce_rmsnorm_<dtype>, bf16 and fp16. Parameters as above (no out, no count), then residual [n, hidden] fp32,
// weight [hidden], out [n, hidden], n rows of hidden elements, eps, mode (0: residual = sum, 1: residual += sum).
// Grid: at most min(n, BufferLayout.blocks) blocks, the same on every rank; dynamic shared memory hidden * sizeof(T).
#define TL_NORM_ENTRY(NAME, T)                                                                                    \
  extern "C" __global__ void __launch_bounds__(TL_THREADS, 2)                                                     \
      NAME(const TlRankPtrs* in, const TlRankPtrs* rank_data, uint32_t* counters, TlError* err, int rank,        \
           int world, unsigned long long timeout_ns, float* residual, const T* weight, T* out, int n, int hidden,   \
           float eps, int mode) {                                                                                  \
    tl_allreduce_rmsnorm<T>(in, rank_data, counters, err, rank, world, timeout_ns, residual, weight, out, n,       \
                            hidden, eps, mode);                                                                    \
  }

TL_NORM_ENTRY(tl_allreduce_rmsnorm_bf16, __nv_bfloat16)
TL_NORM_ENTRY(tl_allreduce_rmsnorm_fp16, __half)

// OneStage's push variant (tl_push.cuh), bf16 and fp16: tl_allreduce_push_<dtype> takes this rank's input directly
// (count a multiple of 16 / sizeof(T), count * sizeof(T) <= slot_bytes), rank_data (slot TL_PUSH_SLOT: every rank's
// push buffer), push_state (the two words after the TlError record), err, and slot_bytes, the bytes of one (phase,
// writer) region; tl_allreduce_push_rmsnorm_<dtype> is the fused allreduce + RMSNorm on it (parameters as
// TL_NORM_ENTRY's after timeout_ns). Any grid, the same on every rank within a call.
#define TL_PUSH_ENTRY(NAME, T)                                                                                    \
  extern "C" __global__ void __launch_bounds__(TL_THREADS, 2)                                                     \
      NAME(const T* input, T* out, const TlRankPtrs* rank_data, uint32_t* push_state, TlError* err,               \
           long long count, int rank, int world, unsigned long long timeout_ns, long long slot_bytes) {           \
    tl_push_allreduce<T>(input, out, rank_data, push_state, err, count, rank, world, timeout_ns, slot_bytes);     \
  }

#define TL_PUSH_NORM_ENTRY(NAME, T)                                                                               \
  extern "C" __global__ void __launch_bounds__(TL_THREADS, 2)                                                     \
      NAME(const T* input, const TlRankPtrs* rank_data, uint32_t* push_state, TlError* err, int rank, int world,   \
           unsigned long long timeout_ns, long long slot_bytes, float* residual, const T* weight, T* out, int n,    \
           int hidden, float eps, int mode) {                                                                      \
    tl_push_rmsnorm<T>(input, rank_data, push_state, err, rank, world, timeout_ns, slot_bytes, residual, weight,   \
                       out, n, hidden, eps, mode);                                                                 \
  }

TL_PUSH_ENTRY(tl_allreduce_push_bf16, __nv_bfloat16)
TL_PUSH_ENTRY(tl_allreduce_push_fp16, __half)
TL_PUSH_NORM_ENTRY(tl_allreduce_push_rmsnorm_bf16, __nv_bfloat16)
TL_PUSH_NORM_ENTRY(tl_allreduce_push_rmsnorm_fp16, __half)

// A plain streaming copy, used by the bench as the "device copy ceiling" next to cuMemcpyDtoD: 16-byte
// loads and stores, grid-stride, n16 = number of 16-byte units.
extern "C" __global__ void __launch_bounds__(TL_THREADS) tl_copy16(const uint4* src, uint4* dst, long long n16) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n16; i += stride) dst[i] = src[i];
}
