package io.tensorlane.testkit.sim;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * What the simulated kubelet does with a pod's (first, or {@code container}-named) container.
 *
 * @param type           the behaviour
 * @param container      container to act on; null: the first one
 * @param phase          CudaOom: the allocation phase in the termination message (e.g. {@code ipc-buffers})
 * @param requestedBytes CudaOom: bytes the failed allocation asked for
 * @param freeBytes      CudaOom: bytes free on the GPU at the time
 * @param restarts       CrashLoopBackOff: the restart count shown
 * @param message        Succeed / Fail: the termination message
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SimAction(
        Type type,
        String container,
        String phase,
        Long requestedBytes,
        Long freeBytes,
        Integer restarts,
        String message) {

    /** Behaviours. */
    public enum Type {
        /** Running and Ready. */
        Run,
        /** Running, never Ready (a server stuck loading). */
        Hang,
        /** Killed by the kernel for host memory: reason OOMKilled, exit 137; then CrashLoopBackOff under restartPolicy Always. */
        OOMKilled,
        /** CUDA out of memory: exit 1, reason Error, JSON termination message; then CrashLoopBackOff under Always. */
        CudaOom,
        /** Waiting in CrashLoopBackOff with lastState terminated (Error, exit 1) and {@code restarts} restarts. */
        CrashLoopBackOff,
        /** All containers exit 0: phase Succeeded (Job pods). */
        Succeed,
        /** The container exits 1 with {@code message}: phase Failed under restartPolicy Never/OnFailure. */
        Fail
    }

    public SimAction {
        if (type == null) {
            throw new IllegalArgumentException(
                    "a simulator action needs a type (one of " + java.util.Arrays.toString(Type.values()) + ")");
        }
    }

    public static SimAction of(Type type) {
        return new SimAction(type, null, null, null, null, null, null);
    }

    public static SimAction run() {
        return of(Type.Run);
    }

    public static SimAction hang() {
        return of(Type.Hang);
    }

    public static SimAction oomKilled() {
        return of(Type.OOMKilled);
    }

    /** CUDA OOM while allocating {@code phase}, e.g. {@code cudaOom("ipc-buffers", 25165824, 1048576)}. */
    public static SimAction cudaOom(String phase, long requestedBytes, long freeBytes) {
        return new SimAction(Type.CudaOom, null, phase, requestedBytes, freeBytes, null, null);
    }

    /** CUDA OOM in the allreduce IPC buffers: 24 MiB requested, 4 MiB free. */
    public static SimAction cudaOom() {
        return cudaOom("ipc-buffers", 24L << 20, 4L << 20);
    }

    public static SimAction crashLoop(int restarts) {
        return new SimAction(Type.CrashLoopBackOff, null, null, null, null, restarts, null);
    }

    public static SimAction succeed() {
        return of(Type.Succeed);
    }

    /** Exit 0 with a termination message (e.g. a preflight result as JSON). */
    public static SimAction succeed(String message) {
        return new SimAction(Type.Succeed, null, null, null, null, null, message);
    }

    public static SimAction fail(String message) {
        return new SimAction(Type.Fail, null, null, null, null, null, message);
    }

    /** The same action on the named container. */
    public SimAction onContainer(String name) {
        return new SimAction(type, name, phase, requestedBytes, freeBytes, restarts, message);
    }
}
