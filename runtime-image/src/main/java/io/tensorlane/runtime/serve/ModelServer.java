package io.tensorlane.runtime.serve;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tensorlane.contract.Algorithm;
import io.tensorlane.runtime.chat.ChatTemplateSources;
import io.tensorlane.runtime.chat.ChatTemplates;
import io.tensorlane.runtime.chat.ToolParsers;
import io.tensorlane.runtime.llm.EngineOptions;
import io.tensorlane.runtime.llm.LlmEngine;
import io.tensorlane.runtime.openai.ModelInfo;
import io.tensorlane.runtime.openai.Responses;
import io.tensorlane.runtime.sched.EngineMetrics;
import io.tensorlane.runtime.sched.FinishReason;
import io.tensorlane.runtime.sched.Scheduler;
import io.tensorlane.runtime.sched.SchedulerConfig;
import io.tensorlane.runtime.sched.SeqRequest;
import io.tensorlane.runtime.sched.SequenceListener;
import io.tensorlane.runtime.sched.StepExecutor;
import io.tensorlane.runtime.serve.http.HttpFront;
import io.tensorlane.runtime.text.ModelTokenizer;
import io.tensorlane.runtime.text.TopLogprobs;
import io.vertx.core.http.HttpMethod;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code serve} with a model: the tokenizer, the engine (or any {@link StepExecutor}), the scheduler, the OpenAI
 * endpoints, health and metrics on one port. Ready ({@code /health}, {@code /health/ready}) once the model is loaded and
 * a warm-up request has run a step; unready again when draining or when the engine failed (then {@code /health/live}
 * fails too, so the pod is restarted). {@link #drain} stops admitting (new requests get 503), lets running ones finish
 * within the grace period, then closes the HTTP server.
 */
public final class ModelServer implements AutoCloseable {
    /**
     * How the server is built; {@code prefixCaching}: automatic prefix caching (on unless switched off); {@code kvAudit}:
     * the block allocator's self-audit after every step (a debug switch, {@code --kv-audit}).
     */
    public record Options(
            String servedName,
            String host,
            int port,
            int maxWaiting,
            long maxBodyBytes,
            Duration drainTimeout,
            boolean prefixCaching,
            String toolCallParser,
            io.tensorlane.runtime.sched.SpeculativeConfig speculative,
            boolean kvAudit) {
        /** Options without speculative decoding. */
        public Options(
                String servedName,
                String host,
                int port,
                int maxWaiting,
                long maxBodyBytes,
                Duration drainTimeout,
                boolean prefixCaching,
                String toolCallParser) {
            this(
                    servedName,
                    host,
                    port,
                    maxWaiting,
                    maxBodyBytes,
                    drainTimeout,
                    prefixCaching,
                    toolCallParser,
                    null,
                    false);
        }

        /** Options with prefix caching on and the tool-call parser chosen from the model ({@link ToolParsers#choose}). */
        public Options(
                String servedName, String host, int port, int maxWaiting, long maxBodyBytes, Duration drainTimeout) {
            this(servedName, host, port, maxWaiting, maxBodyBytes, drainTimeout, true, null);
        }
    }

    private final Scheduler scheduler;
    private final HttpFront http;
    private final EngineMetrics metrics;
    private volatile boolean ready;

    private ModelServer(Scheduler scheduler, HttpFront http, EngineMetrics metrics) {
        this.scheduler = scheduler;
        this.http = http;
        this.metrics = metrics;
    }

    /** Serves {@code engine} (no draft model) until {@link #drain} (the caller closes the engine afterwards). */
    public static ModelServer start(Options o, ModelTokenizer tok, LlmEngine engine, PrintWriter log) {
        return start(o, tok, new io.tensorlane.runtime.llm.DraftModel.Engines(engine, null), log);
    }

    /**
     * Serves the loaded target of {@code engines} (and its draft model, with draft speculation) until {@link #drain}
     * (the caller closes them afterwards).
     */
    public static ModelServer start(
            Options o, ModelTokenizer tok, io.tensorlane.runtime.llm.DraftModel.Engines engines, PrintWriter log) {
        LlmEngine engine = engines.target();
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        LlmEngine.MemoryReport mem = engine.memory();
        Gauge.builder("tensorlane_memory_weights_bytes", mem, LlmEngine.MemoryReport::weightBytesPerRank)
                .description("model weights per rank")
                .register(registry);
        Gauge.builder("tensorlane_memory_kv_cache_bytes", mem, LlmEngine.MemoryReport::kvBytesPerRank)
                .description("KV cache per rank")
                .register(registry);
        Gauge.builder("tensorlane_memory_activations_bytes", mem, LlmEngine.MemoryReport::activationBytesPerRank)
                .register(registry);
        Gauge.builder("tensorlane_memory_allreduce_buffers_bytes", mem, LlmEngine.MemoryReport::allreduceBytesPerRank)
                .register(registry);
        Gauge.builder("tensorlane_memory_fraction", engine.options(), EngineOptions::memoryFraction)
                .register(registry);
        if (engines.draft() != null) {
            LlmEngine.MemoryReport dm = engines.draft().engine().memory();
            Gauge.builder("tensorlane_memory_draft_weights_bytes", dm, LlmEngine.MemoryReport::weightBytesPerRank)
                    .description("the draft model's weights (rank 0's GPU)")
                    .register(registry);
            Gauge.builder("tensorlane_memory_draft_kv_cache_bytes", dm, LlmEngine.MemoryReport::kvBytesPerRank)
                    .description("the draft model's KV cache (rank 0's GPU)")
                    .register(registry);
        }
        for (Algorithm a : Algorithm.values()) {
            FunctionCounter.builder("tensorlane_allreduce_calls", engine.allreduces(), c -> c.calls(a))
                    .tag("algorithm", a.name())
                    .description(
                            "allreduces run (two per layer, the embedding's and the logits gather per step; none at TP 1)")
                    .register(registry);
            FunctionCounter.builder("tensorlane_allreduce_bytes", engine.allreduces(), c -> c.bytes(a))
                    .tag("algorithm", a.name())
                    .baseUnit("bytes")
                    .description("bytes per rank reduced by allreduces")
                    .register(registry);
        }
        Map<Algorithm, Timer> latency = new EnumMap<>(Algorithm.class);
        for (Algorithm a : Algorithm.values()) {
            latency.put(
                    a,
                    ServeMetrics.allreduceLatency(a.name())
                            .description("GPU time of one allreduce on rank 0's stream (the calls of one step in "
                                    + LlmEngine.ALLREDUCE_SAMPLE_EVERY
                                    + "; an allreduce fused with the norm after it counts with the norm)")
                            .register(registry));
        }
        engine.allreduces().onSample((a, ns) -> latency.get(a).record(ns, TimeUnit.NANOSECONDS));
        EngineMetrics metrics = new EngineMetrics(registry, o.servedName(), mem.blockSize(), mem.kvBlocks());
        Scheduler scheduler = new Scheduler(
                engine,
                engine.blocks(),
                schedulerConfig(engine, o.maxWaiting())
                        .withPrefixCaching(o.prefixCaching(), kvIdentity(engine))
                        .withBlockAudit(o.kvAudit()),
                new HashSet<>(tok.eosTokenIds()),
                metrics,
                io.tensorlane.runtime.sched.Speculator.of(
                        o.speculative(),
                        engines.proposer(),
                        engine.options().maxLogitRows(),
                        engine.options().maxSeqs(),
                        metrics));
        ModelInfo info = new ModelInfo(
                o.servedName(), engine.maxModelLen(), engine.config().vocabSize(), Responses.now());
        return start(o, tok, scheduler, metrics, info, log);
    }

    /** The same over a scheduler built by the caller (tests use a fake executor). */
    public static ModelServer start(
            Options o,
            ModelTokenizer tok,
            Scheduler scheduler,
            EngineMetrics metrics,
            ModelInfo info,
            PrintWriter log) {
        ChatTemplateSources sources = ChatTemplateSources.read(tok.modelDir());
        ChatTemplates templates = ChatTemplates.compile(sources, tok.bosToken(), tok.eosToken());
        String toolParser = ToolParsers.choose(
                o.toolCallParser(), tok.modelDir(), sources.templates().values());
        OpenAiService api = new OpenAiService(info, tok, templates, scheduler, toolParser);
        AtomicReference<ModelServer> self = new AtomicReference<>();
        HttpFront.Routes routes = api.routes(new HttpFront.Routes())
                .add(HttpMethod.GET, "/health", (req, body, r) -> health(self.get(), r, true))
                .add(HttpMethod.GET, "/health/ready", (req, body, r) -> health(self.get(), r, true))
                .add(HttpMethod.GET, "/health/live", (req, body, r) -> health(self.get(), r, false))
                .add(
                        HttpMethod.GET,
                        "/metrics",
                        (req, body, r) -> r.text(200, HealthServer.PROMETHEUS_TEXT, metrics.scrape()));
        HttpFront http = HttpFront.start(o.host(), o.port(), routes, o.maxBodyBytes());
        ModelServer s = new ModelServer(scheduler, http, metrics);
        self.set(s);
        log.printf(
                "serve: %s on port %d (/v1/models, /v1/completions, /v1/chat/completions, /health, /metrics)%s%n",
                info.id(),
                http.port(),
                templates.isEmpty()
                        ? "; the model has no chat template: /v1/chat/completions answers 400"
                        : templates.names().size() > 1 ? "; chat templates " + templates.names() : "");
        log.printf(
                "serve: tool calls %s%n",
                toolParser == null
                        ? "off (no tool-call parser fits this model; --tool-call-parser names one)"
                        : "parsed as " + toolParser);
        log.flush();
        s.warmUp(tok, log);
        return s;
    }

    /** The engine's limits, with {@code maxWaiting} waiting requests. */
    /**
     * The scheduler's limits: the engine's. Its logits rows are the engine's buffer ({@code maxLogitRows}: the rows one
     * step returns), so a prompt-logprobs chunk ({@code echo} with {@code logprobs}) is cut to what that buffer leaves
     * and a prompt of any admissible length is scored over several steps, never more rows than the step can return.
     */
    static SchedulerConfig schedulerConfig(LlmEngine engine, int maxWaiting) {
        return new SchedulerConfig(
                        engine.options().maxSeqs(),
                        engine.options().maxBatchTokens(),
                        maxWaiting,
                        engine.maxModelLen(),
                        engine.maxBlocksPerSeq())
                .withMaxLogitRows(engine.options().maxLogitRows());
    }

    /**
     * What the KV depends on besides the tokens, the prefix cache's salt: the model directory and the weights' dtype.
     * One process serves one model, so today it keeps nothing apart; it is where a LoRA adapter or a per-request salt
     * would go.
     */
    static String kvIdentity(LlmEngine engine) {
        return engine.options().modelDir().toAbsolutePath().normalize() + "|"
                + engine.config().dtype() + "|kv " + engine.options().kvCacheDtype();
    }

    private static void health(ModelServer s, io.tensorlane.runtime.serve.http.Responder r, boolean readiness) {
        boolean failed = s == null || s.scheduler.failure() != null;
        boolean ok = readiness ? s != null && s.ready && !failed && !s.scheduler.isDraining() : !failed;
        r.text(ok ? 200 : 503, "text/plain", ok ? "ok\n" : failed ? "engine failed\n" : "not ready\n");
    }

    /** One token through the scheduler: the first step loads what is lazily loaded and proves the engine runs. */
    private void warmUp(ModelTokenizer tok, PrintWriter log) {
        int first = tok.bosTokenId().orElse(0);
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<FinishReason> how = new AtomicReference<>();
        scheduler.submit(SeqRequest.greedy("warm-up", new int[] {first}, 1), new SequenceListener() {
            @Override
            public boolean onToken(int token, TopLogprobs lp) {
                return true;
            }

            @Override
            public void onFinish(FinishReason reason, int promptTokens, int completionTokens) {
                how.set(reason);
                done.countDown();
            }
        });
        try {
            if (!done.await(300, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the warm-up request did not finish within 300 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted during warm-up", e);
        }
        if (how.get() != FinishReason.LENGTH && how.get() != FinishReason.STOP) {
            throw new IllegalStateException("the warm-up request ended with " + how.get()
                    + (scheduler.failure() != null ? ": " + scheduler.failure() : ""));
        }
        ready = true;
        log.println("serve: ready (warm-up step ran)");
        log.flush();
    }

    public int port() {
        return http.port();
    }

    public boolean ready() {
        return ready && scheduler.failure() == null && !scheduler.isDraining();
    }

    public Scheduler scheduler() {
        return scheduler;
    }

    public EngineMetrics metrics() {
        return metrics;
    }

    /** Unready, no new requests (503), running ones finish within {@code timeout}; true when all finished. */
    public boolean drain(Duration timeout) throws InterruptedException {
        ready = false;
        scheduler.drain();
        return scheduler.awaitIdle(timeout);
    }

    @Override
    public void close() {
        try {
            http.close();
        } finally {
            scheduler.close();
        }
    }
}
