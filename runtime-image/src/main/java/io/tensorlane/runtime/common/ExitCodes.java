package io.tensorlane.runtime.common;

/** Process exit codes of the runtime CLI (the operator and scripts rely on them). */
public final class ExitCodes {
    public static final int OK = 0;
    /** A check failed (wrong result, ranks not bitwise equal, a performance check in --strict mode). */
    public static final int CHECK_FAILED = 1;
    /** Bad arguments. */
    public static final int USAGE = 2;
    /** CUDA out of memory while allocating; the JSON termination message was written. */
    public static final int CUDA_OOM = 3;
    /** The allreduce watchdog fired (a rank did not arrive). */
    public static final int WATCHDOG = 4;
    /** Any other runtime failure (CUDA error, missing library). */
    public static final int RUNTIME = 5;

    private ExitCodes() {}
}
