package io.tensorlane.runtime.cli;

import io.tensorlane.runtime.llm.HostPhases;
import io.tensorlane.runtime.llm.LlmEngine;
import io.tensorlane.runtime.sched.BlockAllocator;
import io.tensorlane.runtime.sched.StepBatch;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * {@code bench-model}'s measurements on a loaded engine: the timed decode steps of a batch size after its random
 * sequences are prefilled, and the timed chunked prefill of one sequence (KV blocks given back after each).
 */
final class ModelBenchSteps {
    /** One decode measurement. */
    record DecodeResult(
            int batch,
            int firstPosition,
            int lastPosition,
            int graphReplayedSteps,
            ModelBenchStats wallMs,
            ModelBenchStats gpuMs,
            Map<String, Double> ops,
            Map<String, Double> hostMicros) {}

    /** The prefill measurement. */
    record PrefillResult(
            int tokens, int chunks, ModelBenchStats wallMs, ModelBenchStats gpuMs, Map<String, Double> ops) {}

    private final LlmEngine engine;
    private final ModelBenchPlan plan;
    private final int context;
    private final int warmup;
    private final int iters;
    private final int maxBatchTokens;
    private final boolean opBreakdown;

    /** The measurements of {@code plan} with the command's {@code --context}, {@code --warmup}, {@code --iters}, ... */
    ModelBenchSteps(
            LlmEngine engine,
            ModelBenchPlan plan,
            int context,
            int warmup,
            int iters,
            int maxBatchTokens,
            boolean opBreakdown) {
        this.engine = engine;
        this.plan = plan;
        this.context = context;
        this.warmup = warmup;
        this.iters = iters;
        this.maxBatchTokens = maxBatchTokens;
        this.opBreakdown = opBreakdown;
    }

    /**
     * Prefills {@code batch} sequences of {@code context - warmup} random ids, runs the warm-up decode steps, then times
     * decode steps at positions {@code context} and on.
     */
    DecodeResult decode(int batch, SplittableRandom rng) {
        BlockAllocator alloc = engine.blocks();
        int vocab = plan.config().vocabSize();
        List<List<Integer>> tables = new ArrayList<>();
        for (int i = 0; i < batch; i++) {
            tables.add(new ArrayList<>());
        }
        try {
            // prefill to the context minus the warm-up steps, packed: at most maxBatchTokens tokens and maxSeqs
            // rows per step (long contexts chunked)
            int prefilled = context - warmup;
            ModelBenchPrefill.run(engine, tables, prefilled, maxBatchTokens, plan.maxBatch(), rng, vocab);
            double[] wall = new double[iters];
            double[] gpu = new double[iters];
            int replays = 0;
            List<HostPhases.Marks> host = new ArrayList<>();
            StepBatch last = null;
            for (int k = 0; k < warmup + iters; k++) {
                int pos = prefilled + k; // the timed steps (k >= warmup) at context and on
                StepBatch.Builder sb = new StepBatch.Builder(alloc.blockSize(), engine.maxBlocksPerSeq());
                for (List<Integer> t : tables) {
                    ModelBenchPrefill.ensure(alloc, t, pos + 1);
                    sb.add(t, randomIds(rng, 1, vocab), pos, StepBatch.Logits.LAST);
                }
                StepBatch step = sb.build();
                last = step;
                long s = System.nanoTime();
                LlmEngine.TimedStep ts = engine.timedStep(step);
                long e = System.nanoTime();
                if (k >= warmup) {
                    wall[k - warmup] = (e - s) / 1e6;
                    gpu[k - warmup] = ts.gpuMillis();
                    replays += ts.graphReplayed() ? 1 : 0;
                    host.add(ts.host());
                }
            }
            Map<String, Double> ops = opBreakdown && last != null ? engine.profileStep(last) : null;
            return new DecodeResult(
                    batch,
                    context,
                    context + iters - 1,
                    replays,
                    ModelBenchStats.of(wall),
                    ModelBenchStats.of(gpu),
                    ops,
                    HostPhases.medians(host));
        } finally {
            for (List<Integer> t : tables) {
                alloc.release(t);
            }
        }
    }

    /** One sequence of {@code prefillTokens} random ids, chunked; each timed sample is the whole prefill. */
    PrefillResult prefill(int prefillTokens, SplittableRandom rng) {
        BlockAllocator alloc = engine.blocks();
        List<Integer> table = new ArrayList<>();
        int[] ids = randomIds(rng, prefillTokens, plan.config().vocabSize());
        List<StepBatch> steps = new ArrayList<>();
        try {
            ModelBenchPrefill.ensure(alloc, table, prefillTokens);
            for (int from = 0; from < prefillTokens; from += maxBatchTokens) {
                int to = Math.min(prefillTokens, from + maxBatchTokens);
                steps.add(new StepBatch.Builder(alloc.blockSize(), engine.maxBlocksPerSeq())
                        .add(
                                table,
                                java.util.Arrays.copyOfRange(ids, from, to),
                                from,
                                to == prefillTokens ? StepBatch.Logits.LAST : StepBatch.Logits.NONE)
                        .build());
            }
            int n = plan.prefillIters();
            double[] wall = new double[n];
            double[] gpu = new double[n];
            for (int k = 0; k < warmup + n; k++) {
                double w = 0;
                double g = 0;
                for (StepBatch sb : steps) {
                    long s = System.nanoTime();
                    LlmEngine.TimedStep ts = engine.timedStep(sb);
                    w += (System.nanoTime() - s) / 1e6;
                    g += ts.gpuMillis();
                }
                if (k >= warmup) {
                    wall[k - warmup] = w;
                    gpu[k - warmup] = g;
                }
            }
            Map<String, Double> ops = null;
            if (opBreakdown) {
                ops = new LinkedHashMap<>();
                for (StepBatch sb : steps) {
                    Map<String, Double> sum = ops;
                    engine.profileStep(sb).forEach((k, v) -> sum.merge(k, v, Double::sum));
                }
            }
            return new PrefillResult(
                    prefillTokens, steps.size(), ModelBenchStats.of(wall), ModelBenchStats.of(gpu), ops);
        } finally {
            alloc.release(table);
        }
    }

    static int[] randomIds(SplittableRandom rng, int n, int vocab) {
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) {
            ids[i] = rng.nextInt(vocab);
        }
        return ids;
    }
}
