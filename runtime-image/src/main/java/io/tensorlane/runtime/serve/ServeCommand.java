package io.tensorlane.runtime.serve;

import io.tensorlane.contract.Allreduce;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.runtime.common.EngineSettings;
import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.llm.EngineOptions;
import io.tensorlane.runtime.options.EngineArgs;
import io.tensorlane.runtime.options.EngineCommand;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code serve}. With {@code --synthetic}: a tensor-parallel server without a model. It starts the engine exactly as a
 * model server would (the plan from the environment, the static memory pool by the planned fraction, the communicator
 * with its buffers from the layout) and then runs a synthetic step loop (bf16 GEMMs with cuBLAS + one allreduce per
 * layer) so that readiness, metrics and CUDA OOM behave as in production; the preflight and tests use it. Without it,
 * {@code serve} needs a model directory ({@code --model} or {@value io.tensorlane.contract.EngineEnv#MODEL_DIR}).
 * CUDA OOM at start-up ends with the JSON termination message (phase static-pool or ipc-buffers) and exit code 3.
 */
@Command(
        name = "serve",
        mixinStandardHelpOptions = true,
        description = {
            "Tensorlane serving: reads the plan from TENSORLANE_* environment variables. --synthetic runs the "
                    + "synthetic step loop (no model: static memory pool, communicator, GEMM + allreduce steps, /health/ready, "
                    + "/health/live, /metrics).",
            "Exit codes: 0 done, 2 bad plan/arguments, 3 CUDA out of memory (termination message written), 4 allreduce "
                    + "watchdog, 5 other runtime failure."
        })
public final class ServeCommand implements Callable<Integer>, EngineCommand {
    @Spec
    CommandSpec spec;

    @Option(names = "--synthetic", description = "Run the synthetic step loop (no model) instead of serving a model.")
    boolean synthetic;

    @Mixin
    EngineArgs engine = new EngineArgs();

    @Option(
            names = "--served-model-name",
            description = "Model name in the API (default: " + EngineEnv.MODEL + ", else the directory's name).")
    String servedModelName;

    /** The environment twin of {@code --tool-call-parser}. */
    static final String TOOL_CALL_PARSER_ENV = "TENSORLANE_TOOL_CALL_PARSER";

    @Option(
            names = "--tool-call-parser",
            description = "How the model writes tool calls: hermes, llama3_json, mistral, or auto (default: "
                    + TOOL_CALL_PARSER_ENV + ", else auto: chosen from config.json and the chat template).")
    String toolCallParser;

    @Option(
            names = "--max-seqs",
            defaultValue = "64",
            description = "Most sequences per step (default ${DEFAULT-VALUE}).")
    int maxSeqs;

    @Option(
            names = "--max-waiting",
            defaultValue = "256",
            description = "Waiting requests before 429 (default ${DEFAULT-VALUE}).")
    int maxWaiting;

    @Option(
            names = "--no-prefix-caching",
            description = "Turn automatic prefix caching off (default: on, or " + EngineSettings.PREFIX_CACHING
                    + "=false): every prompt is computed from its first token.")
    boolean noPrefixCaching;

    @Option(
            names = "--kv-audit",
            description = "Debug: after every step audit the KV block allocator against the block tables (reference "
                    + "counts, free lists, cached blocks' tokens) and stop serving at the first inconsistency (default: "
                    + "off, or " + EngineSettings.KV_AUDIT + "=true).")
    boolean kvAudit;

    @Option(
            names = "--max-body-bytes",
            defaultValue = "16777216",
            description = "Largest request body; larger ones get 413 (default ${DEFAULT-VALUE}).")
    long maxBodyBytes;

    @Option(
            names = "--drain-seconds",
            defaultValue = "30",
            description = "On SIGTERM: how long running requests may take to finish (default ${DEFAULT-VALUE}).")
    int drainSeconds;

    @Option(names = "--port", description = "HTTP port (default: TENSORLANE_PORT or 8080).")
    Integer port;

    @Option(
            names = "--max-message-bytes",
            description = "Custom allreduce buffer size (default: TENSORLANE_MAX_MESSAGE_BYTES or 8 MiB).")
    Long maxMessageBytes;

    @Option(
            names = "--allreduce",
            description = "Custom, NCCL or None (default: TENSORLANE_ALLREDUCE; --nccl is --allreduce NCCL).")
    String allreduce;

    @Option(
            names = "--layers",
            defaultValue = "4",
            description = "Layers per synthetic step (default ${DEFAULT-VALUE}).")
    int layers;

    @Option(names = "--hidden", defaultValue = "5376", description = "Hidden size (default ${DEFAULT-VALUE}).")
    int hidden;

    @Option(
            names = "--tokens",
            split = ",",
            defaultValue = "4,32,256",
            description =
                    "Token counts per step; each layer allreduces tokens x hidden bf16 values (default ${DEFAULT-VALUE}: "
                            + "4 tokens at hidden 5376 is the 42 KiB attention allreduce).")
    List<Integer> tokens = new ArrayList<>();

    @Option(
            names = "--steps",
            defaultValue = "0",
            description = "Stop after this many steps (default 0: run until stopped).")
    long steps;

    @Option(
            names = "--duration",
            description = "Stop after this long, e.g. 30s or 5m (default: run until stopped).",
            converter = DurationConverter.class)
    Duration duration;

    @Option(names = "--gemm", defaultValue = "cublas", description = "cublas (default) or none (allreduces only).")
    String gemm;

    @Option(
            names = "--static-pool-leave-bytes",
            defaultValue = "0",
            paramLabel = "BYTES",
            description =
                    "Testing: size the static pool to leave BYTES free on each GPU instead of by the fraction, so the "
                            + "allreduce buffers themselves run out of memory (phase ipc-buffers) as in the seed's incident.")
    long poolLeaveBytes;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        java.util.Map<String, String> env = System.getenv();
        EngineArgs.Resolved eng = engine.resolve(env, null, spec.commandLine().getErr());
        if (!synthetic) {
            if (eng.model() == null) {
                throw new IllegalArgumentException("no model to serve: give --model DIR or set " + EngineEnv.MODEL_DIR
                        + " (--synthetic runs the synthetic step loop without a model)");
            }
            io.tensorlane.runtime.fetch.ModelMarker.checkComplete(eng.model());
            ServeConfig config = ServeConfig.from(env, overrides(eng));
            return serveModel(eng, config, engineOptions(eng, config), env, out);
        }
        ServeConfig config = ServeConfig.from(env, overrides(eng));
        StepShape shape = new StepShape(layers, hidden, tokens.isEmpty() ? StepShape.DEFAULT.tokens() : tokens);
        if (!"cublas".equals(gemm) && !"none".equals(gemm)) {
            throw new IllegalArgumentException("--gemm must be cublas or none, got '" + gemm + "'");
        }
        List<Integer> devices = new ArrayList<>();
        for (int r = 0; r < config.worldSize(); r++) {
            devices.add(eng.virtualRanks() ? 0 : r);
        }
        out.printf(
                "serve (synthetic mode: no model): world size %d%s, allreduce %s, memory fraction %s, port %d, "
                        + "%d layers x tokens %s at hidden %d (messages %s bytes)%n",
                config.worldSize(),
                eng.virtualRanks() ? " (virtual ranks on GPU 0)" : "",
                config.allreduce(),
                config.memoryFraction(),
                config.port(),
                shape.layers(),
                shape.tokens(),
                shape.hidden(),
                shape.tokens().stream().map(shape::messageBytes).toList());
        out.flush();
        return run(
                config,
                new GpuSteps(config, shape, devices, eng.ncclLib(), "cublas".equals(gemm), out)
                        .leavingFree(poolLeaveBytes),
                steps,
                duration,
                out);
    }

    /**
     * The plan's command-line part: {@code --tp} (or the deprecated {@code --virtual-ranks N}) over
     * {@link EngineEnv#WORLD_SIZE} (and then the operator's algorithm table is not used), {@code --allreduce} or
     * {@code --nccl}/{@code --no-nccl} over {@link EngineEnv#ALLREDUCE}, {@code --memory-fraction}.
     */
    private ServeConfig.Overrides overrides(EngineArgs.Resolved eng) {
        String mode = allreduce;
        if (eng.ncclGiven() != null) {
            String nccl = eng.ncclGiven() ? Allreduce.NCCL.name() : Allreduce.Custom.name();
            if (mode != null
                    && !Allreduce.find(mode).map(a -> a.name().equals(nccl)).orElse(false)) {
                throw new IllegalArgumentException("--allreduce " + mode + " and --" + (eng.ncclGiven() ? "" : "no-")
                        + "nccl disagree: give one of them");
            }
            mode = nccl;
        }
        return new ServeConfig.Overrides(eng.tpGiven(), mode, maxMessageBytes, eng.memoryFraction(), port);
    }

    /** The engine's options for {@code serve}: the shared engine options with the plan's ranks and allreduce. */
    private EngineOptions engineOptions(EngineArgs.Resolved eng, ServeConfig config) {
        return new EngineOptions(
                        eng.requireModel(),
                        config.worldSize(),
                        eng.virtualRanks(),
                        Math.min(maxSeqs, eng.maxBatchTokens()),
                        eng.maxBatchTokens(),
                        eng.maxModelLen(),
                        eng.kvCacheTokens(),
                        config.memoryFraction(),
                        eng.logitRows(Math.min(maxSeqs, eng.maxBatchTokens()), maxSeqs),
                        eng.graphs(),
                        config.allreduce() == Allreduce.NCCL,
                        eng.ncclLib(),
                        EngineSettings.BLOCK_SIZE)
                .withAllreducePlan(
                        config.allreduce() == Allreduce.Custom ? config.table() : null, config.maxMessageBytes())
                .withBaselineKernels(eng.baselineKernels())
                .withKvCacheDtype(eng.kvCacheDtype())
                .withVerifyTokens(eng.verifyTokens(Math.min(maxSeqs, eng.maxBatchTokens())));
    }

    @Override
    public EngineOptions engineOptions(java.util.Map<String, String> env, PrintWriter err) {
        EngineArgs.Resolved eng = engine.resolve(env, null, err);
        return engineOptions(eng, ServeConfig.from(env, overrides(eng)));
    }

    /** The block audit switch: {@code --kv-audit}, else {@link EngineSettings#KV_AUDIT}, else off. */
    static boolean kvAudit(boolean flag, java.util.Map<String, String> env) {
        return flag || EngineSettings.envBoolean(env, EngineSettings.KV_AUDIT, false);
    }

    private int serveModel(
            EngineArgs.Resolved eng,
            ServeConfig config,
            EngineOptions opts,
            java.util.Map<String, String> env,
            PrintWriter out)
            throws Exception {
        java.nio.file.Path dir = opts.modelDir();
        boolean prefixCaching = !noPrefixCaching && EngineSettings.envBoolean(env, EngineSettings.PREFIX_CACHING, true);
        boolean audit = kvAudit(kvAudit, env);
        String parser = toolCallParser != null ? toolCallParser : env.get(TOOL_CALL_PARSER_ENV);
        io.tensorlane.runtime.chat.ToolParsers.choose(parser, dir, java.util.List.of()); // refuse a bad name early
        String name = servedModelName != null
                ? servedModelName
                : env.getOrDefault(
                        EngineEnv.MODEL,
                        dir.toAbsolutePath().normalize().getFileName().toString());
        out.printf(
                "serve: model %s (%s), %d rank(s)%s, allreduce %s, memory fraction %s, KV cache %s, port %d, "
                        + "prefix caching %s%s, speculative %s%n",
                name,
                dir,
                config.worldSize(),
                eng.virtualRanks() ? " (virtual ranks on GPU 0)" : "",
                config.allreduce(),
                config.memoryFraction(),
                opts.kvCacheDtype(),
                config.port(),
                prefixCaching ? "on" : "off",
                audit ? ", KV block audit after every step (debug)" : "",
                eng.speculative() == null ? "off" : eng.speculative().toString());
        out.flush();
        try (io.tensorlane.runtime.text.ModelTokenizer tok = io.tensorlane.runtime.text.ModelTokenizer.load(dir);
                io.tensorlane.runtime.llm.DraftModel.Engines engines =
                        io.tensorlane.runtime.llm.DraftModel.load(opts, eng.speculative(), out)) {
            ModelServer server = ModelServer.start(
                    new ModelServer.Options(
                            name,
                            "0.0.0.0",
                            config.port(),
                            maxWaiting,
                            maxBodyBytes,
                            Duration.ofSeconds(drainSeconds),
                            prefixCaching,
                            parser,
                            eng.speculative(),
                            audit),
                    tok,
                    engines,
                    out);
            java.util.concurrent.CountDownLatch drained = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch cleaned = new java.util.concurrent.CountDownLatch(1);
            Thread hook = new Thread(
                    () -> {
                        try {
                            boolean all = server.drain(Duration.ofSeconds(drainSeconds));
                            out.println("serve: drained ("
                                    + (all ? "every request finished" : "grace period over, requests cut") + ")");
                            out.flush();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        } finally {
                            server.close();
                            drained.countDown();
                            try {
                                cleaned.await(20, java.util.concurrent.TimeUnit.SECONDS);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }
                    },
                    "tensorlane-serve-drain");
            Runtime.getRuntime().addShutdownHook(hook);
            try {
                drained.await();
            } finally {
                cleaned.countDown();
            }
            return ExitCodes.OK;
        }
    }

    /** Serves HTTP while the loop runs (tests call this with a fake source). */
    static int run(ServeConfig config, StepSource source, long steps, Duration duration, PrintWriter out)
            throws Exception {
        ServeMetrics metrics = new ServeMetrics(config);
        StepLoop loop = new StepLoop(source, metrics);
        Thread hook = new Thread(loop::stop, "tensorlane-serve-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        try (HealthServer http = HealthServer.start(config.port(), loop::ready, metrics::scrape);
                source) {
            out.printf("serve: HTTP on port %d (/health/live, /health/ready, /metrics)%n", http.port());
            out.flush();
            loop.run(steps, duration, out);
            return ExitCodes.OK;
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // already shutting down
            }
        }
    }

    /** "30s", "5m", "1h" or an ISO-8601 duration. */
    static final class DurationConverter implements picocli.CommandLine.ITypeConverter<Duration> {
        @Override
        public Duration convert(String v) {
            var m = java.util.regex.Pattern.compile("(\\d+)(ms|s|m|h)").matcher(v.trim());
            if (m.matches()) {
                long n = Long.parseLong(m.group(1));
                return switch (m.group(2)) {
                    case "ms" -> Duration.ofMillis(n);
                    case "s" -> Duration.ofSeconds(n);
                    case "m" -> Duration.ofMinutes(n);
                    default -> Duration.ofHours(n);
                };
            }
            return Duration.parse(v);
        }
    }
}
