package io.tensorlane.runtime.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tensorlane.runtime.cli.ModelBenchSteps.DecodeResult;
import io.tensorlane.runtime.cli.ModelBenchSteps.PrefillResult;
import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.llm.EngineOptions;
import io.tensorlane.runtime.llm.HostPhases;
import io.tensorlane.runtime.llm.LlmEngine;
import io.tensorlane.runtime.model.ModelConfig;
import io.tensorlane.runtime.options.EngineArgs;
import io.tensorlane.runtime.options.EngineCommand;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code bench-model}: loads a model like {@code generate} and times the engine's steps on random token ids.
 *
 * <p>Per batch size B: B sequences of {@code --context} minus {@code --warmup} random ids are prefilled (packed into
 * steps within the token budget), then {@code --warmup} + {@code --iters} decode steps run, one token per sequence per
 * step, each at the next position (the sequences grow; KV blocks are added as needed and all freed after the batch
 * size), so the timed steps are at positions {@code --context} to {@code --context + --iters - 1}. The first decode
 * step of a batch size runs eagerly and captures the CUDA graph; the warm-up steps cover it, so every timed step is a
 * graph replay (counted in the output), and they let the JVM compile the step's host code (with 5 warm-up steps the
 * host part of a batch-1 8B step was ~140 us, with 300 ~50 us; H200, 2026-12-01). Per timed step: the wall time
 * around {@link LlmEngine#timedStep} (input upload, graph replay, synchronization, argmax read-back), the GPU time
 * between CUDA events on rank 0's stream around the replay, and where the host's part went ({@link HostPhases}).
 * Prefill: one sequence of {@code --prefill-tokens} ids, chunked by {@code --max-batch-tokens}, timed as a whole (sum
 * of its steps). The KV cache is sized to what the run needs unless {@code --kv-cache-tokens} (or {@code TENSORLANE_KV_CACHE_TOKENS}) is given. Prints a
 * table (stdout) and writes {@code --json} (rewritten after each measurement, {@code complete} true at the end).
 */
@Command(
        name = "bench-model",
        mixinStandardHelpOptions = true,
        description =
                "Time the model engine on random token ids: decode step per batch size at a given context (CUDA graphs), "
                        + "prefill tokens/s, load time; a table on stdout and a JSON file.")
public final class ModelBenchCommand implements Callable<Integer>, EngineCommand {
    @Spec
    CommandSpec spec;

    @Mixin
    EngineArgs eng = new EngineArgs();

    @Option(
            names = "--batches",
            split = ",",
            defaultValue = "1,8,32,128",
            description = "Decode batch sizes (default ${DEFAULT-VALUE}).")
    List<Integer> batches;

    @Option(
            names = "--context",
            defaultValue = "512",
            description = "Tokens per sequence before the first timed decode step (default ${DEFAULT-VALUE}).")
    int context;

    @Option(
            names = "--prefill-tokens",
            defaultValue = "2048",
            description = "Tokens of the prefill measurement; 0 = none (default ${DEFAULT-VALUE}).")
    int prefillTokens;

    @Option(
            names = "--warmup",
            defaultValue = "300",
            description = "Untimed decode steps first, less than --context (>= 1: the first decode step captures the "
                    + "graph; the others let the JVM compile the step's host code, as in a running server; the "
                    + "sequences are prefilled to --context minus these, so the timed steps start at --context; "
                    + "default ${DEFAULT-VALUE}).")
    int warmup;

    @Option(
            names = "--iters",
            defaultValue = "50",
            description = "Timed decode steps per batch size (default ${DEFAULT-VALUE}).")
    int iters;

    @Option(names = "--prefill-iters", defaultValue = "0", description = "Timed prefills; 0 = --iters.")
    int prefillIters;

    @Option(names = "--seed", defaultValue = "0", description = "Seed of the random token ids.")
    long seed;

    @Option(
            names = "--max-seconds",
            defaultValue = "0",
            description = "Skip the measurements that would start after this many seconds "
                    + "from the start (0 = no limit); the JSON says which were skipped.")
    double maxSeconds;

    @Option(
            names = "--op-breakdown",
            description = "After each measurement, one more eager pass with a CUDA event after every operation: "
                    + "GPU ms per operation (attention, each GEMM, norms, allreduces, ...), printed and in the JSON.")
    boolean opBreakdown;

    @Option(
            names = "--verify-ks",
            split = ",",
            paramLabel = "K",
            description = "Also time a speculative verify step (k + 1 tokens per sequence, logits for all) for each k "
                    + "(1.." + io.tensorlane.runtime.sched.SpeculativeConfig.MAX_K + ") at each --batches size "
                    + "against a plain decode step at --context, and print the ratios (e.g. 1,2,3,4,5,6,7,8).")
    List<Integer> verifyKs;

    @Option(names = "--label", description = "Free text copied into the JSON (e.g. 'tp2-custom').")
    String label;

    @Option(names = "--json", description = "Write the results as JSON to this file.")
    Path json;

    /** Checks the options against each other and the model's config (every problem before any GPU work). */
    ModelBenchPlan plan() {
        return plan(System.getenv(), spec != null ? spec.commandLine().getErr() : new PrintWriter(System.err, true));
    }

    /** {@link #plan()} with the environment {@code env}. */
    ModelBenchPlan plan(Map<String, String> env, PrintWriter err) {
        return ModelBenchPlan.of(this, eng.resolve(env, EngineArgs.DEFAULT_MEMORY_FRACTION, err));
    }

    @Override
    public EngineOptions engineOptions(Map<String, String> env, PrintWriter err) {
        return plan(env, err).options();
    }

    private final long startNanos = System.nanoTime();

    @Override
    public Integer call() throws IOException {
        PrintWriter err = spec.commandLine().getErr();
        PrintWriter out = spec.commandLine().getOut();
        ModelBenchPlan plan = plan();
        EngineOptions o = plan.options();
        long ckBytes = checkpointBytes(o.modelDir());
        out.printf(
                Locale.ROOT,
                "bench-model: %s, tp %d%s, %s, graphs %s; batches %s, context %d, warm-up %d, iters %d, prefill %d tokens; "
                        + "KV cache %d tokens (needed %d)%n",
                o.modelDir(),
                o.tp(),
                o.virtualRanks() ? " (virtual ranks)" : "",
                allreduceName(o),
                o.graphs() ? "on" : "off",
                plan.batches(),
                context,
                warmup,
                iters,
                prefillTokens,
                plan.kvTokens(),
                plan.kvNeededTokens());
        out.flush();
        ModelBenchJson report = new ModelBenchJson(json, context, startNanos);
        long t0 = System.nanoTime();
        try (LlmEngine engine = LlmEngine.load(plan.options(), err)) {
            double loadTotal = (System.nanoTime() - t0) / 1e9;
            report.header(header(plan, engine, ckBytes, loadTotal));
            ModelBenchSteps steps =
                    new ModelBenchSteps(engine, plan, context, warmup, iters, o.maxBatchTokens(), opBreakdown);
            out.printf(
                    Locale.ROOT,
                    "load: %.3f GB of weights (%.3f GB per rank) in %.2f s = %.2f GB/s of checkpoint (%.3f GB); load() total %.2f s%n",
                    engine.weightBytes() / 1e9,
                    engine.memory().weightBytesPerRank() / 1e9,
                    engine.loadSeconds(),
                    ckBytes / 1e9 / Math.max(engine.loadSeconds(), 1e-9),
                    ckBytes / 1e9,
                    loadTotal);
            report.write(false);
            SplittableRandom rng = new SplittableRandom(seed);
            out.println(
                    " batch  context   steps  replays |  wall ms: median     p10     p90 |  gpu ms: median     p10     p90 |  tokens/s (wall)");
            out.flush();
            for (int b : plan.batches()) {
                if (overBudget()) {
                    report.skipped("decode batch " + b);
                    out.printf(Locale.ROOT, "%6d  skipped: --max-seconds %.0f reached%n", b, maxSeconds);
                    continue;
                }
                DecodeResult r = steps.decode(b, rng);
                report.decode(r);
                out.printf(
                        Locale.ROOT,
                        "%6d %8d %7d %8d | %15.3f %7.3f %7.3f | %14.3f %7.3f %7.3f | %15.1f%n",
                        b,
                        context,
                        iters,
                        r.graphReplayedSteps(),
                        r.wallMs().median(),
                        r.wallMs().p10(),
                        r.wallMs().p90(),
                        r.gpuMs().median(),
                        r.gpuMs().p10(),
                        r.gpuMs().p90(),
                        b * 1000.0 / r.wallMs().median());
                out.println("        host, median per phase: " + HostPhases.format(r.hostMicros()));
                printOps(out, r.ops());
                out.flush();
                report.write(false);
            }
            if (verifyKs != null && !verifyKs.isEmpty()) {
                verifyTable(engine, plan, o, rng, out, report);
            }
            if (prefillTokens > 0) {
                if (overBudget()) {
                    report.skipped("prefill");
                    out.printf(Locale.ROOT, "prefill skipped: --max-seconds %.0f reached%n", maxSeconds);
                } else {
                    PrefillResult prefill = steps.prefill(prefillTokens, rng);
                    report.prefill(prefill);
                    out.printf(
                            Locale.ROOT,
                            "prefill %d tokens (%d step(s) of <= %d): wall median %.3f ms (p10 %.3f, p90 %.3f) = %.1f tokens/s; "
                                    + "gpu median %.3f ms = %.1f tokens/s%n",
                            prefill.tokens(),
                            prefill.chunks(),
                            o.maxBatchTokens(),
                            prefill.wallMs().median(),
                            prefill.wallMs().p10(),
                            prefill.wallMs().p90(),
                            prefill.tokens() * 1000.0 / prefill.wallMs().median(),
                            prefill.gpuMs().median(),
                            prefill.tokens() * 1000.0 / prefill.gpuMs().median());
                    printOps(out, prefill.ops());
                }
            }
            if (o.tp() > 1) {
                report.allreduces(engine.allreduces(), out);
            }
            report.write(true);
            out.printf(
                    Locale.ROOT,
                    "bench-model: done in %.1f s%s%n",
                    (System.nanoTime() - startNanos) / 1e9,
                    json != null ? ", JSON in " + json : "");
            out.flush();
            err.flush();
        }
        return ExitCodes.OK;
    }

    /** {@code --verify-ks}: the verify-step table per batch size ({@link ModelBenchVerify}). */
    private void verifyTable(
            LlmEngine engine,
            ModelBenchPlan plan,
            EngineOptions o,
            SplittableRandom rng,
            PrintWriter out,
            ModelBenchJson report)
            throws IOException {
        ModelBenchVerify v =
                new ModelBenchVerify(engine, context, Math.min(warmup, 20), iters, o.maxBatchTokens(), plan.maxBatch());
        ModelBenchVerify.printHeader(out);
        for (int b : plan.batches()) {
            if (overBudget()) {
                report.skipped("verify batch " + b);
                out.printf(Locale.ROOT, "verify %6d skipped: --max-seconds %.0f reached%n", b, maxSeconds);
                continue;
            }
            for (ModelBenchVerify.Row r : v.measure(b, verifyKs, rng)) {
                ModelBenchVerify.print(out, r);
                report.verify(r);
                if (r.batch() == 1 && r.k() == 4) {
                    out.printf(
                            Locale.ROOT,
                            "verify: k=4 at batch 1 costs %.3fx a decode step (wall; gpu %.3fx); target <= 1.3x%n",
                            r.wallRatio(),
                            r.gpuRatio());
                }
            }
            out.flush();
            report.write(false);
        }
    }

    private boolean overBudget() {
        return maxSeconds > 0 && (System.nanoTime() - startNanos) / 1e9 > maxSeconds;
    }

    private static String allreduceName(EngineOptions o) {
        return o.tp() == 1 ? "no allreduce" : o.nccl() ? "NCCL allreduce" : "custom allreduce";
    }

    /** One line of GPU ms per operation (--op-breakdown): total, then each operation with its share. */
    private static void printOps(PrintWriter out, Map<String, Double> ops) {
        if (ops == null) {
            return;
        }
        double total = ops.values().stream().mapToDouble(Double::doubleValue).sum();
        StringBuilder b = new StringBuilder(
                String.format(Locale.ROOT, "        ops (one eager pass, gpu ms): total %.3f:", total));
        ops.forEach((k, v) ->
                b.append(String.format(Locale.ROOT, " %s %.3f (%.0f%%)", k, v, total > 0 ? 100 * v / total : 0)));
        out.println(b);
    }

    /** Sum of the sizes of {@code *.safetensors} in the model directory. */
    static long checkpointBytes(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            long sum = 0;
            for (Path p : s.filter(p -> p.getFileName().toString().endsWith(".safetensors"))
                    .toList()) {
                sum += Files.size(p);
            }
            return sum;
        }
    }

    private ObjectNode header(ModelBenchPlan plan, LlmEngine engine, long ckBytes, double loadTotal) {
        EngineOptions e = plan.options();
        ObjectNode o = ModelBenchJson.JSON.createObjectNode();
        o.put("kind", "tensorlane-bench-model");
        o.put("date", Instant.now().toString());
        if (label != null) {
            o.put("label", label);
        }
        o.put("model", e.modelDir().toString());
        ModelConfig c = plan.config();
        ObjectNode cfg = o.putObject("config");
        cfg.put("architecture", c.architecture().toString());
        cfg.put("layers", c.numLayers());
        cfg.put("hidden", c.hiddenSize());
        cfg.put("intermediate", c.intermediateSize());
        cfg.put("heads", c.numHeads());
        cfg.put("kv_heads", c.numKvHeads());
        cfg.put("head_dim", c.headDim());
        cfg.put("vocab", c.vocabSize());
        cfg.put("dtype", c.dtype().toString());
        cfg.put("tied_embeddings", c.tieWordEmbeddings());
        o.put("tp", e.tp());
        o.put("virtual_ranks", e.virtualRanks());
        o.put("allreduce", e.tp() == 1 ? "none" : e.nccl() ? "nccl" : "custom");
        o.put("graphs", e.graphs());
        o.put("context", context);
        o.put("warmup", warmup);
        o.put("iters", iters);
        o.put("prefill_iters", plan.prefillIters());
        o.put("max_batch_tokens", e.maxBatchTokens());
        o.put("max_model_len", plan.maxModelLen());
        o.put("kv_cache_tokens", engine.memory().kvTokens());
        o.put("kv_cache_dtype", engine.memory().kvDtype().toString());
        o.put("seed", seed);
        ObjectNode load = o.putObject("load");
        load.put("seconds", engine.loadSeconds());
        load.put("total_seconds", loadTotal);
        load.put("checkpoint_bytes", ckBytes);
        load.put("weight_bytes", engine.weightBytes());
        load.put("weight_bytes_per_rank", engine.memory().weightBytesPerRank());
        load.put("checkpoint_gb_per_s", ckBytes / 1e9 / Math.max(engine.loadSeconds(), 1e-9));
        ObjectNode mem = o.putObject("memory_per_rank");
        mem.put("weights", engine.memory().weightBytesPerRank());
        mem.put("kv", engine.memory().kvBytesPerRank());
        mem.put("activations", engine.memory().activationBytesPerRank());
        mem.put("allreduce_buffers", engine.memory().allreduceBytesPerRank());
        o.put(
                "timing",
                "wall_ms: System.nanoTime around LlmEngine.timedStep (input upload, forward/graph replay, synchronize, argmax "
                        + "read-back); gpu_ms: CUDA events on rank 0's stream around the forward/graph replay. Decode step k of a batch writes position "
                        + "context + k; the first warm-up step captures the graph.");
        return o;
    }
}
