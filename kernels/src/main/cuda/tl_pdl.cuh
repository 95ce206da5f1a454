// Programmatic dependent launch (sm_90 and later): every entry point of the model module starts with
// tlpdl::enter(), so a CUDA graph may start its kernels before the kernel each depends on has finished
// (io.tensorlane.runtime.engine.GraphEdges turns a captured graph's kernel-to-kernel edges into programmatic
// ones). enter() waits until every grid the kernel depends on has completed and its writes are visible
// (griddepcontrol.wait: returns at once for a kernel launched without a programmatic dependency, i.e. every eager
// launch), then lets the next kernel of the graph launch (griddepcontrol.launch_dependents): its blocks take free SM
// slots and wait in their own enter() while this grid runs, so the launch latency between the two is hidden. Since
// a kernel triggers only after its own wait, at most one grid waits ahead of each running one. Kernels that read
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

}  // namespace tlpdl
