package io.tensorlane.runtime.engine;

import jcuda.Pointer;

/**
 * One kernel parameter each, for cuLaunchKernel's parameter array, named by the C type it must match: a device address
 * ({@code p}, a raw 64-bit address, 0 for null), a {@code long long} ({@code l}), an {@code int} ({@code i}), a
 * {@code float} ({@code f}). The allreduce entries and the model kernels use the same four.
 */
public final class KernelArgs {
    private KernelArgs() {}

    public static Pointer p(long address) {
        return Pointer.to(new long[] {address});
    }

    public static Pointer l(long v) {
        return Pointer.to(new long[] {v});
    }

    public static Pointer i(int v) {
        return Pointer.to(new int[] {v});
    }

    public static Pointer f(float v) {
        return Pointer.to(new float[] {v});
    }
}
