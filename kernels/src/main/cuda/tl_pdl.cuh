// Programmatic dependent launch (sm_90 and later): every entry point of the model module starts with
// tlpdl::enter(), so a CUDA graph may start its kernels before the kernel each depends on has finished
// (io.tensorlane.runtime.engine.GraphEdges turns a captured graph's kernel-to-kernel edges into programmatic
// ones). enter() waits until every grid the kernel depends on has completed and its writes are visible
// (griddepcontrol.wait: returns at once for a kernel launched without a programmatic dependency, i.e. every eager
// launch), then lets the next kernel of the graph launch (griddepcontrol.launch_dependents): its blocks take free SM
// slots and wait in their own enter() while this grid runs, so the launch latency between the two is hidden. Since
// a kernel triggers only after its own wait, at most one grid waits ahead of each running one. Kernels that read
// nothing an earlier kernel writes (a weight stream) may issue those reads before enter() (prefetch()).
// Before sm_90 both are no-ops (the host never asks for programmatic edges there).
#pragma once

namespace tlpdl {

__device__ __forceinline__ void enter() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Pulls [p, p + bytes) toward L2 before enter(): only for data no kernel of the step writes (weights).
__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

}  // namespace tlpdl
