package io.tensorlane.runtime.cli;

import io.tensorlane.runtime.llm.LlmEngine;
import io.tensorlane.runtime.sched.StepBatch;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * {@code bench-model --verify-ks}: the cost of a speculative verify step against a plain decode step. Per batch size B,
 * B sequences of {@code --context} random ids are prefilled; then the decode step (one token per sequence at position
 * context, a CUDA graph replay) and, per k, the verify step (k + 1 tokens per sequence at positions context ..
 * context + k, logits and a draw for every one of them, as the scheduler sends them; a graph replay too unless
 * {@code TENSORLANE_SPEC_GRAPHS=off}, {@link io.tensorlane.runtime.llm.KernelChoices#SPEC_GRAPHS_ENV}) are each timed
 * {@code iters} times after a warm-up (whose first step captures the graph), on the same KV slots. The ratio verify / decode is what a
 * step of speculation costs; with acceptance rate a per guess, a verify step yields 1 + a + a^2 + ... + a^k tokens.
 */
final class ModelBenchVerify {
    /**
     * One row of the table: medians of wall and GPU ms, the ratios to the decode step, and how many of the {@code steps}
     * timed steps replayed a CUDA graph.
     */
    record Row(
            int batch,
            int k,
            double wallMs,
            double gpuMs,
            double wallRatio,
            double gpuRatio,
            int replayed,
            int steps) {}

    private final LlmEngine engine;
    private final int context;
    private final int warmup;
    private final int iters;
    private final int maxBatchTokens;
    private final int maxRows;

    ModelBenchVerify(LlmEngine engine, int context, int warmup, int iters, int maxBatchTokens, int maxRows) {
        this.engine = engine;
        this.context = context;
        this.warmup = warmup;
        this.iters = iters;
        this.maxBatchTokens = maxBatchTokens;
        this.maxRows = maxRows;
    }

    /** The rows of batch size {@code batch}: k = 0 (the decode step itself, ratio 1), then each of {@code ks}. */
    List<Row> measure(int batch, List<Integer> ks, SplittableRandom rng) {
        int vocab = engine.config().vocabSize();
        int maxK = ks.stream().mapToInt(Integer::intValue).max().orElse(0);
        return ModelBenchPrefill.withPrefilled(
                engine, batch, context + maxK + 1L, context, maxBatchTokens, maxRows, rng, tables -> {
                    List<Row> rows = new ArrayList<>();
                    double[] decode = time(step(tables, 0, rng, vocab));
                    rows.add(new Row(batch, 0, decode[0], decode[1], 1, 1, (int) decode[2], iters));
                    for (int k : ks) {
                        double[] v = time(step(tables, k, rng, vocab));
                        rows.add(new Row(batch, k, v[0], v[1], v[0] / decode[0], v[1] / decode[1], (int) v[2], iters));
                    }
                    return rows;
                });
    }

    /** k = 0: a decode step (one token per sequence); else a verify step of k + 1 tokens per sequence. */
    private StepBatch step(List<List<Integer>> tables, int k, SplittableRandom rng, int vocab) {
        StepBatch.Builder sb = new StepBatch.Builder(engine.blocks().blockSize(), engine.maxBlocksPerSeq());
        for (List<Integer> t : tables) {
            sb.add(
                    t,
                    ModelBenchSteps.randomIds(rng, k + 1, vocab),
                    context,
                    k == 0 ? StepBatch.Logits.LAST : StepBatch.Logits.ALL);
        }
        return sb.build();
    }

    /** Median wall and GPU ms of {@code iters} runs of {@code step} after {@code warmup}, and how many replayed a graph. */
    private double[] time(StepBatch step) {
        return ModelBenchPrefill.timeSteps(warmup, iters, i -> engine.timedStep(step));
    }

    static void printHeader(PrintWriter out) {
        out.println(
                "verify  batch   k | wall ms  gpu ms | x decode (wall)  x decode (gpu) | replayed  [k=0: the decode "
                        + "step]");
    }

    static void print(PrintWriter out, Row r) {
        out.printf(
                Locale.ROOT,
                "verify %6d %3d | %7.3f %7.3f | %15.3f %15.3f | %4d/%-4d%n",
                r.batch(),
                r.k(),
                r.wallMs(),
                r.gpuMs(),
                r.wallRatio(),
                r.gpuRatio(),
                r.replayed(),
                r.steps());
    }
}
