package io.tensorlane.runtime.llm;

import com.sun.jna.Library;
import com.sun.jna.Native;

/**
 * CUDA's lazy module loading (the default since CUDA 12) may synchronize the context when a kernel is first launched.
 * Virtual ranks share one context and their allreduce kernels spin waiting for each other, so a rank whose next kernel
 * (a cuBLAS GEMM for a new shape, say) needs loading would wait for spinning peers that wait for it: a deadlock, seen on
 * the H200 as an allreduce watchdog timeout at 4 and 8 virtual ranks. Eager loading, set before the driver initializes,
 * avoids it. Ranks on separate GPUs have separate contexts and keep lazy loading.
 */
final class ModuleLoading {
  static final String ENV = "CUDA_MODULE_LOADING";

  interface LibC extends Library {
    int setenv(String name, String value, int overwrite);
  }

  private ModuleLoading() {}

  /** Sets CUDA_MODULE_LOADING=EAGER for this process unless the user set it; true when it is EAGER afterwards. */
  static boolean eagerUnlessSet() {
    String v = System.getenv(ENV);
    if (v != null && !v.isBlank()) {
      return v.equalsIgnoreCase("EAGER");
    }
    return Native.load("c", LibC.class).setenv(ENV, "EAGER", 0) == 0;
  }
}
