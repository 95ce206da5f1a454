// Programmatic dependent launch (sm_90 and later): every entry point of the model module starts with
// tlpdl::enter(), so a CUDA graph may start its kernels before the kernel each depends on has finished
// (io.tensorlane.runtime.engine.GraphEdges turns a captured graph's kernel-to-kernel edges into programmatic
// ones). enter() waits until every grid the kernel depends on has completed and its writes are visible
// (griddepcontrol.wait: returns at once for a kernel launched without a programmatic dependency, i.e. every eager
// launch), then lets the next kernel of the graph launch (griddepcontrol.launch_dependents): its blocks take free SM
// slots and wait in their own enter() while this grid runs, so the launch latency between the two is hidden. Since
// a kernel triggers only after its own wait, at most one grid waits ahead of each running one (two where the first of
// them is tl_l2_prefetch, which triggers before its wait: trigger_then_enter()). Kernels that read
// nothing an earlier kernel writes (a weight stream) may issue those reads before enter() (prefetch_warp_row()).
// Before sm_90 both are no-ops (the host never asks for programmatic edges there).
#pragma once

namespace tlpdl {

__device__ __forceinline__ void enter() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// enter() with the trigger first, for a kernel that reads nothing a kernel writes and writes nothing (tl_l2_prefetch):
// the kernel after it launches at once, while this one waits, so that putting this one into the chain adds no launch
// latency. It still waits before it completes, and the kernel after it waits for it to complete, so that one sees
// everything before as if this one were not there.
__device__ __forceinline__ void trigger_then_enter() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// The 128-byte line at p toward L2.
__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

// Before enter(), in a one-warp-per-row kernel (row = blockIdx.x * warps + warp first): the first `bytes` of the
// weight row the calling warp reads first, a 128-byte line a lane, so that its first loads after the wait find them in
// L2 (the wait is where a programmatic launch spends the previous kernel's tail). Only for weights: nothing a kernel
// of the step writes may be read before enter().
__device__ __forceinline__ void prefetch_warp_row(const void* w, long long row_bytes, int rows, int warps,
                                                  int bytes) {
  const int row = blockIdx.x * warps + (threadIdx.x >> 5);
  const int off = (threadIdx.x & 31) * 128;
  if (row < rows && off < bytes && off < row_bytes) {
    prefetch_l2(static_cast<const char*>(w) + (long long)row * row_bytes + off);
  }
}

// [p, p + bytes) toward L2 (bytes a multiple of 16, p 16-byte aligned): one bulk prefetch on sm_90 and later (the
// copy engine of the issuing multiprocessor walks it; nothing waits for it), a line a loop step before.
__device__ __forceinline__ void prefetch_l2_bulk(const char* p, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#else
  for (unsigned o = 0; o < bytes; o += 128) prefetch_l2(p + o);
#endif
}

constexpr int kL2PrefetchThreads = 32;
constexpr long long kL2PrefetchChunk = 16 << 10;  // bytes a bulk prefetch

// Range [p, p + bytes) cut into kL2PrefetchChunk pieces strided over every thread of the grid.
__device__ __forceinline__ void prefetch_range(const char* p, long long bytes) {
  const long long stride = (long long)gridDim.x * blockDim.x * kL2PrefetchChunk;
  for (long long off = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * kL2PrefetchChunk; off < bytes;
       off += stride) {
    const long long n = bytes - off < kL2PrefetchChunk ? bytes - off : kL2PrefetchChunk;
    prefetch_l2_bulk(p + off, (unsigned)n);
  }
}

}  // namespace tlpdl
