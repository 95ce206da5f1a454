package io.tensorlane.runtime.serve;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The Prometheus metrics of {@code serve} (Micrometer): per allreduce {@value #ALLREDUCE_LATENCY} (a timer with a
 * histogram: {@code tensorlane_allreduce_latency_seconds_bucket/_count/_sum/_max}) and {@value #ALLREDUCE_CALLS}
 * ({@code tensorlane_allreduce_calls_total}), both tagged {@code algorithm} and {@code bytes}; gauges of the bytes held
 * in buffers ({@code tensorlane_allreduce_buffer_bytes{visibility=peer|local}}, {@code tensorlane_static_pool_bytes}),
 * {@code tensorlane_steps_total}, {@code tensorlane_ready} and {@code tensorlane_serve_info{mode="synthetic",...}}.
 */
public final class ServeMetrics {
    public static final String ALLREDUCE_LATENCY = "tensorlane.allreduce.latency";
    public static final String ALLREDUCE_CALLS = "tensorlane.allreduce.calls";
    public static final String BUFFER_BYTES = "tensorlane.allreduce.buffer.bytes";
    public static final String POOL_BYTES = "tensorlane.static.pool.bytes";
    public static final String STEPS = "tensorlane.steps";
    public static final String READY = "tensorlane.ready";
    public static final String INFO = "tensorlane.serve.info";

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final AtomicLong peerBytes = new AtomicLong();
    private final AtomicLong localBytes = new AtomicLong();
    private final AtomicLong poolBytes = new AtomicLong();
    private final AtomicLong ready = new AtomicLong();
    private final Counter steps;

    public ServeMetrics(ServeConfig config) {
        Gauge.builder(BUFFER_BYTES, peerBytes, AtomicLong::get)
                .baseUnit("bytes")
                .tag("visibility", "peer")
                .description("Device bytes of the custom allreduce's peer-visible (IPC) buffers, all ranks")
                .register(registry);
        Gauge.builder(BUFFER_BYTES, localBytes, AtomicLong::get)
                .baseUnit("bytes")
                .tag("visibility", "local")
                .description("Device bytes of the custom allreduce's local buffers, all ranks")
                .register(registry);
        Gauge.builder(POOL_BYTES, poolBytes, AtomicLong::get)
                .baseUnit("bytes")
                .description("Device bytes of the static memory pool (memory fraction x total), all devices")
                .register(registry);
        Gauge.builder(READY, ready, AtomicLong::get)
                .description("1 once the communicator is up")
                .register(registry);
        Gauge.builder(INFO, () -> 1)
                .tag("mode", "synthetic")
                .tag("allreduce", config.allreduce().name())
                .tag("world_size", Integer.toString(config.worldSize()))
                .description("serve runs the synthetic tensor-parallel step loop (no model)")
                .register(registry);
        steps = Counter.builder(STEPS).description("Synthetic steps completed").register(registry);
    }

    public void buffers(long peer, long local, long pool) {
        peerBytes.set(peer);
        localBytes.set(local);
        poolBytes.set(pool);
    }

    public void ready(boolean r) {
        ready.set(r ? 1 : 0);
    }

    public void allreduce(StepSource.AllreduceSample s) {
        String bytes = Long.toString(s.bytes());
        allreduceLatency(s.algorithm())
                .tag("bytes", bytes)
                .description("Latency of one allreduce (GPU time on rank 0's stream)")
                .register(registry)
                .record(s.nanos(), TimeUnit.NANOSECONDS);
        Counter.builder(ALLREDUCE_CALLS)
                .tag("algorithm", s.algorithm())
                .tag("bytes", bytes)
                .description("Allreduce calls")
                .register(registry)
                .increment();
    }

    /**
     * The allreduce latency histogram of {@code algorithm} ({@value #ALLREDUCE_LATENCY}, 1 us to 1 s), one shape for the
     * synthetic loop and the model server; callers add their description and tags.
     */
    public static Timer.Builder allreduceLatency(String algorithm) {
        return Timer.builder(ALLREDUCE_LATENCY)
                .tag("algorithm", algorithm)
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(1000))
                .maximumExpectedValue(Duration.ofSeconds(1));
    }

    public void step() {
        steps.increment();
    }

    /** The Prometheus text exposition. */
    public String scrape() {
        return registry.scrape();
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }
}
