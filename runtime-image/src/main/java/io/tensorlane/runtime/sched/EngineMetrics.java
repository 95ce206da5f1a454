package io.tensorlane.runtime.sched;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * The serving metrics, shaped like vLLM v1's ({@code vllm/v1/metrics/loggers.py}) with the prefix {@value #PREFIX}
 * instead of {@code vllm:}, so that dashboards, KEDA triggers and the Gateway API Inference Extension work by changing
 * the prefix. Every series has the labels {@code model_name} and {@code engine="0"}, as vLLM's. See
 * {@code runtime-image/METRICS.md}.
 *
 * <p>These families are written by {@link #render()} itself, not by Micrometer: Micrometer's Prometheus registry
 * (1.16, client_java 1.x) renames a gauge ending in {@code _info} ({@code cache_config_info} comes out as
 * {@code cache_config}), adds a {@code _max} gauge to every histogram, and a DistributionSummary bins values below 1
 * wrongly — and these names are a contract with other people's tools. The registry passed in carries the process's
 * other metrics (and two of the scheduler's, under Micrometer's names: {@code tensorlane_scheduler_steps_total},
 * {@code tensorlane_scheduler_failed}); {@link #scrape()} returns both.
 */
public final class EngineMetrics {
    public static final String PREFIX = "tensorlane:";

    /** vLLM's time_to_first_token_seconds buckets. */
    static final double[] TTFT_BUCKETS = {
        0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
        160.0, 640.0, 2560.0
    };
    /** vLLM's time_per_output_token_seconds / inter_token_latency_seconds buckets. */
    static final double[] TPOT_BUCKETS = {
        0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0
    };
    /** vLLM's request latency buckets (e2e, queue). */
    static final double[] REQUEST_BUCKETS = {
        0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0,
        1920.0, 7680.0
    };

    private final PrometheusMeterRegistry registry;
    private final Map<String, String> labels;
    private final int blockSize;
    private final int numGpuBlocks;
    private final AtomicReference<Supplier<SchedulerStats>> stats = new AtomicReference<>();
    private final AtomicReference<Supplier<Throwable>> failure = new AtomicReference<>(() -> null);
    private final LongAdder promptTokens = new LongAdder();
    private final LongAdder generationTokens = new LongAdder();
    private final LongAdder preemptions = new LongAdder();
    private final LongAdder prefixQueries = new LongAdder();
    private final LongAdder prefixHits = new LongAdder();
    private final LongAdder specDrafts = new LongAdder();
    private final LongAdder specDraftTokens = new LongAdder();
    private final LongAdder specAccepted = new LongAdder();
    /** Accepted guesses per position (0..k-1); null until {@link #speculation} (then the spec_decode families render). */
    private volatile LongAdder[] specAcceptedAt;

    private final Map<FinishReason, LongAdder> finished = new EnumMap<>(FinishReason.class);
    private final Histogram ttft = new Histogram(TTFT_BUCKETS);
    private final Histogram itl = new Histogram(TPOT_BUCKETS);
    private final Histogram e2e = new Histogram(REQUEST_BUCKETS);
    private final Histogram queue = new Histogram(REQUEST_BUCKETS);

    /**
     * @param modelName    the served model name ({@code model_name} label)
     * @param blockSize    tokens per KV block ({@code cache_config_info})
     * @param numGpuBlocks KV blocks ({@code cache_config_info})
     */
    public EngineMetrics(PrometheusMeterRegistry registry, String modelName, int blockSize, int numGpuBlocks) {
        this.registry = Objects.requireNonNull(registry, "registry");
        Map<String, String> l = new LinkedHashMap<>();
        l.put("model_name", Objects.requireNonNull(modelName, "modelName"));
        l.put("engine", "0");
        this.labels = java.util.Collections.unmodifiableMap(l);
        this.blockSize = blockSize;
        this.numGpuBlocks = numGpuBlocks;
        for (FinishReason r : FinishReason.values()) {
            finished.put(r, new LongAdder());
        }
        FunctionCounter.builder(
                        "tensorlane.scheduler.steps", this, m -> m.current().steps())
                .description("Scheduler steps run")
                .register(registry);
        Gauge.builder("tensorlane.scheduler.failed", this, m -> m.failure.get().get() == null ? 0 : 1)
                .description("1 once a step failure stopped serving")
                .register(registry);
    }

    /** Where the gauges read from (the scheduler calls it). */
    void bind(Supplier<SchedulerStats> source) {
        stats.set(source);
    }

    /** Where {@code tensorlane_scheduler_failed} reads from. */
    void bindFailure(Supplier<Throwable> source) {
        failure.set(source);
    }

    private SchedulerStats current() {
        Supplier<SchedulerStats> s = stats.get();
        return s == null ? SchedulerStats.idle(numGpuBlocks) : s.get();
    }

    // --- recording (scheduler thread) ---

    void preempted() {
        preemptions.increment();
    }

    /** A request's first token: its prompt counts as processed (once, also when it is recomputed after a preemption). */
    void firstToken(int prompt, double ttftSeconds) {
        promptTokens.add(prompt);
        ttft.observe(ttftSeconds);
    }

    /**
     * A request's first lookup in the prefix cache (at its first admission, as vLLM counts: a preempted request's
     * lookup again is not counted): {@code queried} prompt tokens, {@code hits} of them found cached.
     */
    void prefixCache(int queried, int hits) {
        prefixQueries.add(queried);
        prefixHits.add(hits);
    }

    /** Speculative decoding with up to {@code k} guesses per step is on: the spec_decode families are rendered. */
    void speculation(int k) {
        LongAdder[] a = new LongAdder[k];
        for (int i = 0; i < k; i++) {
            a[i] = new LongAdder();
        }
        specAcceptedAt = a;
    }

    /** One verified draft of {@code guesses} tokens, of which the first {@code accepted} were kept. */
    void speculated(int guesses, int accepted) {
        specDrafts.increment();
        specDraftTokens.add(guesses);
        specAccepted.add(accepted);
        LongAdder[] at = specAcceptedAt;
        for (int i = 0; i < accepted && at != null && i < at.length; i++) {
            at[i].increment();
        }
    }

    void interToken(double seconds) {
        itl.observe(seconds);
    }

    void generationTokens(int n) {
        generationTokens.add(n);
    }

    void finished(RequestTimings t) {
        finished.get(t.reason()).increment();
        e2e.observe(t.e2eSeconds());
        if (t.queueSeconds() >= 0) {
            queue.observe(t.queueSeconds());
        }
    }

    // --- exposition ---

    /** The vLLM-shaped families, in the Prometheus text format 0.0.4. */
    public String render() {
        SchedulerStats s = current();
        String p = PREFIX;
        PromText t = new PromText();
        t.family(p + "num_requests_running", "gauge", "Number of requests in model execution batches.")
                .sample(p + "num_requests_running", labels, s.running());
        t.family(p + "num_requests_waiting", "gauge", "Number of requests waiting to be processed.")
                .sample(p + "num_requests_waiting", labels, s.waiting());
        t.family(p + "kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.")
                .sample(p + "kv_cache_usage_perc", labels, s.kvUsage());
        t.family(
                        p + "gpu_cache_usage_perc",
                        "gauge",
                        "GPU KV-cache usage. 1 means 100 percent usage. DEPRECATED: Use " + p
                                + "kv_cache_usage_perc instead.")
                .sample(p + "gpu_cache_usage_perc", labels, s.kvUsage());
        Map<String, String> info = new LinkedHashMap<>();
        info.put("block_size", Integer.toString(blockSize));
        info.put("num_gpu_blocks", Integer.toString(numGpuBlocks));
        info.put("engine", "0");
        t.family(p + "cache_config_info", "gauge", "Information of the LLMEngine CacheConfig")
                .sample(p + "cache_config_info", info, 1);
        renderBlocks(t, s);
        t.family(p + "num_preemptions_total", "counter", "Cumulative number of preemption from the engine.")
                .sample(p + "num_preemptions_total", labels, preemptions.sum());
        t.family(
                        p + "prefix_cache_queries_total",
                        "counter",
                        "Prefix cache queries, in terms of number of queried tokens.")
                .sample(p + "prefix_cache_queries_total", labels, prefixQueries.sum());
        t.family(p + "prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.")
                .sample(p + "prefix_cache_hits_total", labels, prefixHits.sum());
        t.family(p + "prompt_tokens_total", "counter", "Number of prefill tokens processed.")
                .sample(p + "prompt_tokens_total", labels, promptTokens.sum());
        t.family(p + "generation_tokens_total", "counter", "Number of generation tokens processed.")
                .sample(p + "generation_tokens_total", labels, generationTokens.sum());
        t.family(p + "request_success_total", "counter", "Count of successfully processed requests.");
        for (FinishReason r : FinishReason.values()) {
            Map<String, String> l = new LinkedHashMap<>(labels);
            l.put("finished_reason", r.label());
            t.sample(p + "request_success_total", l, finished.get(r).sum());
        }
        renderSpeculation(t);
        Histogram.Snapshot itlSnap = itl.snapshot();
        t.family(p + "time_to_first_token_seconds", "histogram", "Histogram of time to first token in seconds.")
                .histogram(p + "time_to_first_token_seconds", labels, ttft.snapshot());
        t.family(p + "inter_token_latency_seconds", "histogram", "Histogram of inter-token latency in seconds.")
                .histogram(p + "inter_token_latency_seconds", labels, itlSnap);
        t.family(
                        p + "time_per_output_token_seconds",
                        "histogram",
                        "Histogram of time per output token in seconds. DEPRECATED: Use " + p
                                + "inter_token_latency_seconds instead.")
                .histogram(p + "time_per_output_token_seconds", labels, itlSnap);
        t.family(p + "e2e_request_latency_seconds", "histogram", "Histogram of e2e request latency in seconds.")
                .histogram(p + "e2e_request_latency_seconds", labels, e2e.snapshot());
        t.family(p + "request_queue_time_seconds", "histogram", "Histogram of time spent in WAITING phase for request.")
                .histogram(p + "request_queue_time_seconds", labels, queue.snapshot());
        return t.toString();
    }

    /**
     * Ours, beside vLLM's: the KV blocks by state (free / in use partition {@code num_gpu_blocks}; cached ones are held
     * or free), the prefix cache's evictions and, with the debug audit on, the audits run.
     */
    private void renderBlocks(PromText t, SchedulerStats s) {
        String p = PREFIX;
        t.family(
                        p + "kv_cache_free_blocks",
                        "gauge",
                        "KV-cache blocks no request holds (never used, or cached and evictable); all when idle.")
                .sample(p + "kv_cache_free_blocks", labels, s.freeBlocks());
        t.family(p + "kv_cache_in_use_blocks", "gauge", "KV-cache blocks held by requests.")
                .sample(p + "kv_cache_in_use_blocks", labels, numGpuBlocks - s.freeBlocks());
        t.family(
                        p + "kv_cache_cached_blocks",
                        "gauge",
                        "KV-cache blocks registered in the prefix cache (held or evictable).")
                .sample(p + "kv_cache_cached_blocks", labels, s.cachedBlocks());
        t.family(p + "prefix_cache_evictions_total", "counter", "Cached KV blocks evicted to make room.")
                .sample(p + "prefix_cache_evictions_total", labels, s.evictions());
        if (s.audits() > 0) {
            t.family(p + "kv_cache_audits_total", "counter", "Block allocator self-audits run (serve --kv-audit).")
                    .sample(p + "kv_cache_audits_total", labels, s.audits());
        }
    }

    /** vLLM v1's spec_decode counters (only with speculation on, as vLLM renders them only then). */
    private void renderSpeculation(PromText t) {
        LongAdder[] at = specAcceptedAt;
        if (at == null) {
            return;
        }
        String p = PREFIX;
        t.family(p + "spec_decode_num_drafts_total", "counter", "Number of spec decoding drafts.")
                .sample(p + "spec_decode_num_drafts_total", labels, specDrafts.sum());
        t.family(p + "spec_decode_num_draft_tokens_total", "counter", "Number of draft tokens.")
                .sample(p + "spec_decode_num_draft_tokens_total", labels, specDraftTokens.sum());
        t.family(p + "spec_decode_num_accepted_tokens_total", "counter", "Number of accepted tokens.")
                .sample(p + "spec_decode_num_accepted_tokens_total", labels, specAccepted.sum());
        t.family(p + "spec_decode_num_accepted_tokens_per_pos_total", "counter", "Accepted tokens per draft position.");
        for (int i = 0; i < at.length; i++) {
            Map<String, String> l = new LinkedHashMap<>(labels);
            l.put("position", Integer.toString(i));
            t.sample(p + "spec_decode_num_accepted_tokens_per_pos_total", l, at[i].sum());
        }
    }

    /** {@link #render()} followed by the registry's own scrape: what {@code /metrics} serves. */
    public String scrape() {
        return render() + registry.scrape();
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }
}
