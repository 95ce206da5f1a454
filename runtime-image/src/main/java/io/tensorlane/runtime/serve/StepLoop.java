package io.tensorlane.runtime.serve;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Brings a {@link StepSource} up, flips readiness only after it started, then runs steps and records every allreduce
 * in the metrics until {@code maxSteps} (0: forever), {@code maxDuration} or {@link #stop}.
 */
public final class StepLoop {
    private final StepSource source;
    private final ServeMetrics metrics;
    private final AtomicBoolean ready = new AtomicBoolean();
    private final AtomicBoolean stop = new AtomicBoolean();
    private volatile long stepsDone;

    public StepLoop(StepSource source, ServeMetrics metrics) {
        this.source = source;
        this.metrics = metrics;
    }

    public boolean ready() {
        return ready.get();
    }

    public long stepsDone() {
        return stepsDone;
    }

    public void stop() {
        stop.set(true);
    }

    /** Starts the source (CUDA OOM propagates: readiness never flips), then loops. */
    public void run(long maxSteps, Duration maxDuration, PrintWriter out) {
        source.start();
        metrics.buffers(source.ipcBufferBytes(), source.localBufferBytes(), source.staticPoolBytes());
        ready.set(true);
        metrics.ready(true);
        out.printf(
                "serve: ready (static pool %d bytes, allreduce buffers %d peer-visible + %d local bytes)%n",
                source.staticPoolBytes(), source.ipcBufferBytes(), source.localBufferBytes());
        out.flush();
        long deadline = maxDuration == null ? Long.MAX_VALUE : System.nanoTime() + maxDuration.toNanos();
        while (!stop.get() && (maxSteps <= 0 || stepsDone < maxSteps) && System.nanoTime() < deadline) {
            List<StepSource.AllreduceSample> samples = source.step();
            samples.forEach(metrics::allreduce);
            metrics.step();
            stepsDone++;
        }
        out.printf("serve: %d steps done%n", stepsDone);
        out.flush();
    }
}
