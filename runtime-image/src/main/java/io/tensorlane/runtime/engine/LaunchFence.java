package io.tensorlane.runtime.engine;

import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Host barriers around the allreduce launch of virtual ranks (several ranks in one context on one GPU).
 *
 * <p>An allreduce kernel spins on the GPU until every rank's kernel has arrived. A driver call that synchronizes the
 * context (the first launch of a cuBLAS kernel for a new shape loads its module; the driver waits for the context to go
 * idle and holds its lock meanwhile) then waits for that spinning kernel, while the rank that would release it cannot
 * launch its own allreduce: the lock is taken. Seen on an H200 as rank 1 spinning in cublasGemmEx after its allreduce,
 * rank 0 blocked in the GEMM before its own. With every rank waiting here before and after its launch, no rank makes
 * any other driver call while an allreduce kernel is enqueued whose peers are not: every wait for the context to go
 * idle ends. Ranks on separate GPUs (separate contexts) need no fence.
 */
final class LaunchFence {
    private final CyclicBarrier barrier;
    private final long timeoutMillis;

    LaunchFence(int parties, long timeoutMillis) {
        this.barrier = new CyclicBarrier(parties);
        this.timeoutMillis = timeoutMillis;
    }

    /** Runs {@code launch} (the enqueue of this rank's allreduce) once every rank is ready to, and returns once all have. */
    void around(Runnable launch) {
        await("before");
        launch.run();
        await("after");
    }

    /** Releases ranks waiting here with an error (a peer failed and will not arrive); the fence is usable afterwards. */
    void breakAll() {
        barrier.reset();
    }

    private void await(String where) {
        try {
            barrier.await(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted at the allreduce launch fence (" + where + ")", e);
        } catch (BrokenBarrierException e) {
            throw new IllegalStateException("a peer rank failed before its allreduce launch (" + where + ")", e);
        } catch (TimeoutException e) {
            barrier.reset();
            throw new IllegalStateException(
                    "peer ranks did not reach the allreduce launch within " + timeoutMillis + " ms (" + where
                            + "): the ranks made different calls",
                    e);
        }
    }
}
