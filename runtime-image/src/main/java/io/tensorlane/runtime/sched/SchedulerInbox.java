package io.tensorlane.runtime.sched;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The {@link Scheduler}'s lock-guarded front door between request threads and the scheduler thread: the sequences
 * submitted since the last step, the counts behind admission (queue full, retry hint, idle), and the drain, close and
 * wake-up flags the scheduler thread waits on.
 */
final class SchedulerInbox {
    private final SchedulerConfig config;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    private final Condition idle = lock.newCondition();
    // Guarded by lock.
    private final List<Sequence> inbox = new ArrayList<>();
    private int active;
    private int waitingCount;
    private boolean draining;
    private boolean closed;
    private boolean wakeup;
    private double avgE2eSeconds;

    SchedulerInbox(SchedulerConfig config) {
        this.config = config;
    }

    /** Runs {@code r} holding the lock (its submits are reentrant): the scheduler thread sees all it queues at once. */
    void holding(Runnable r) {
        lock.lock();
        try {
            r.run();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Queues the sequence {@code create} makes, unless the scheduler has {@code failure}d, is closed or draining
     * (IllegalStateException) or {@code maxWaiting} requests already wait ({@link QueueFullException}).
     */
    Sequence submit(Supplier<Throwable> failure, Supplier<Sequence> create) {
        lock.lock();
        try {
            Throwable failed = failure.get();
            if (failed != null) {
                throw new IllegalStateException("the scheduler failed: " + failed, failed);
            }
            if (closed || draining) {
                throw new IllegalStateException(closed ? "the scheduler is closed" : "the scheduler is draining");
            }
            if (waitingCount >= config.maxWaiting()) {
                int hint = (int) Math.ceil(Math.max(1.0, avgE2eSeconds) * (waitingCount + 1) / config.maxSeqs());
                throw new QueueFullException(waitingCount, Math.max(1, Math.min(60, hint)));
            }
            Sequence s = create.get();
            inbox.add(s);
            active++;
            waitingCount++;
            work.signalAll();
            return s;
        } finally {
            lock.unlock();
        }
    }

    /** Stops admitting requests; those already in finish. */
    void drain() {
        lock.lock();
        try {
            draining = true;
        } finally {
            lock.unlock();
        }
    }

    boolean isDraining() {
        lock.lock();
        try {
            return draining;
        } finally {
            lock.unlock();
        }
    }

    /** Waits until no sequence is queued or running; false on timeout. */
    boolean awaitIdle(Duration timeout) throws InterruptedException {
        long left = timeout.toNanos();
        lock.lock();
        try {
            while (active > 0) {
                if (left <= 0) {
                    return false;
                }
                left = idle.awaitNanos(left);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Refuses further submissions and wakes the scheduler thread to end. */
    void close() {
        lock.lock();
        try {
            closed = true;
            work.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Wakes the scheduler thread (a sequence was cancelled). */
    void wake() {
        lock.lock();
        try {
            wakeup = true;
            work.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Scheduler thread: waits until there is work (a submission, a wake-up, or {@code busy}: sequences running or waiting
     * already), then moves the submissions to {@code waiting}; false once closed.
     */
    boolean awaitWork(boolean busy, Collection<Sequence> waiting) {
        lock.lock();
        try {
            while (!closed && inbox.isEmpty() && !wakeup && !busy) {
                work.awaitUninterruptibly();
            }
            if (closed) {
                return false;
            }
            wakeup = false;
            waiting.addAll(inbox);
            inbox.clear();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Scheduler thread: moves the submissions to {@code waiting} (to end them all). */
    void drainTo(Collection<Sequence> waiting) {
        lock.lock();
        try {
            waiting.addAll(inbox);
            inbox.clear();
        } finally {
            lock.unlock();
        }
    }

    /** A sequence ended after {@code e2eSeconds}; the last one wakes {@link #awaitIdle}. */
    void finished(FinishReason reason, double e2eSeconds) {
        lock.lock();
        try {
            active--;
            if (reason != FinishReason.ABORT && reason != FinishReason.ERROR) {
                avgE2eSeconds = avgE2eSeconds == 0 ? e2eSeconds : 0.9 * avgE2eSeconds + 0.1 * e2eSeconds;
            }
            if (active == 0) {
                idle.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Scheduler thread: {@code waiting} sequences wait besides the submissions (the count {@link #submit} checks). */
    void updateWaitingCount(int waiting) {
        lock.lock();
        try {
            waitingCount = waiting + inbox.size();
        } finally {
            lock.unlock();
        }
    }
}
