package io.tensorlane.runtime.engine;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Hand-offs between the stepping thread and the rank threads without the wake-up of a parked thread on the critical
 * path. A decode step is a few milliseconds of GPU work with a few hundred microseconds of host work around it; each
 * park/unpark pair (a submit to a sleeping executor, a {@code Future.get} woken at completion) costs tens of
 * microseconds on a VM. So a rank thread spins for a while after each task before it parks, and a caller spins on the
 * task's completion before it parks: the way inference engines poll the GPU (CUDA's spin scheduling, which the rank
 * threads' stream synchronization already uses). Spinning is bounded: an idle engine parks its threads.
 */
public final class SpinHandoff {
    /** How long a rank thread polls for its next task after one (the host work between two decode steps fits). */
    static final long WORKER_SPIN_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    /** How long a caller polls for a task's completion before parking (a decode step fits; a prefill may not). */
    static final long CALLER_SPIN_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private SpinHandoff() {}

    /** A single-thread executor whose thread polls its queue for {@code spinNanos} before it blocks on it. */
    public static ExecutorService singleThread(ThreadFactory threads, long spinNanos) {
        return new ThreadPoolExecutor(1, 1, 0L, TimeUnit.MILLISECONDS, new SpinQueue(spinNanos), threads);
    }

    /** {@link Future#get()}, after polling {@link Future#isDone()} for up to {@code spinNanos}. */
    public static <T> T get(Future<T> f, long spinNanos) throws InterruptedException, ExecutionException {
        if (!f.isDone()) {
            long deadline = System.nanoTime() + spinNanos;
            while (!f.isDone() && System.nanoTime() - deadline < 0) {
                Thread.onSpinWait();
            }
        }
        return f.get();
    }

    /** A work queue whose {@link #take} polls before it blocks. */
    static final class SpinQueue extends LinkedBlockingQueue<Runnable> {
        private final long spinNanos;

        SpinQueue(long spinNanos) {
            this.spinNanos = spinNanos;
        }

        @Override
        public Runnable take() throws InterruptedException {
            long deadline = System.nanoTime() + spinNanos;
            do {
                Runnable r = poll();
                if (r != null) {
                    return r;
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                Thread.onSpinWait();
            } while (System.nanoTime() - deadline < 0);
            return super.take();
        }
    }
}
