package io.tensorlane.runtime.cli;

import io.tensorlane.runtime.llm.LlmEngine;
import io.tensorlane.runtime.sched.BlockAllocator;
import io.tensorlane.runtime.sched.StepBatch;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * {@code bench-model}'s context prefill, shared by the decode measurement ({@link ModelBenchSteps}) and the verify one
 * ({@link ModelBenchVerify}): every sequence gets the same number of random ids, packed into steps of at most
 * {@code maxBatchTokens} tokens and {@code maxRows} sequences, the sequences in order and each cut where a step is full
 * (long contexts chunked over several steps); only a sequence's last chunk asks for logits.
 */
final class ModelBenchPrefill {
    private ModelBenchPrefill() {}

    /** Tokens {@code [from, to)} of sequence {@code seq} in one step. */
    record Chunk(int seq, int from, int to) {}

    /** The steps that prefill {@code seqs} sequences of {@code tokens} tokens each (a pure function of its inputs). */
    static List<List<Chunk>> plan(int seqs, int tokens, int maxBatchTokens, int maxRows) {
        if (tokens < 1 || maxBatchTokens < 1 || maxRows < 1) {
            throw new IllegalArgumentException("prefill of " + tokens + " tokens per sequence with max batch tokens "
                    + maxBatchTokens + " and max rows " + maxRows + ": each must be >= 1");
        }
        List<List<Chunk>> steps = new ArrayList<>();
        int seq = 0;
        int done = 0;
        while (seq < seqs) {
            List<Chunk> step = new ArrayList<>();
            int stepTokens = 0;
            while (seq < seqs && stepTokens < maxBatchTokens && step.size() < maxRows) {
                int chunk = Math.min(tokens - done, maxBatchTokens - stepTokens);
                step.add(new Chunk(seq, done, done + chunk));
                stepTokens += chunk;
                done += chunk;
                if (done == tokens) {
                    seq++;
                    done = 0;
                }
            }
            steps.add(step);
        }
        return steps;
    }

    /**
     * Runs {@link #plan} for {@code tables} (one per sequence; KV blocks added as each chunk needs them): the ids of
     * each chunk drawn from {@code rng} in plan order, one untimed engine step per planned step.
     */
    static void run(
            LlmEngine engine,
            List<List<Integer>> tables,
            int tokens,
            int maxBatchTokens,
            int maxRows,
            SplittableRandom rng,
            int vocab) {
        BlockAllocator alloc = engine.blocks();
        for (List<Chunk> step : plan(tables.size(), tokens, maxBatchTokens, maxRows)) {
            StepBatch.Builder sb = new StepBatch.Builder(alloc.blockSize(), engine.maxBlocksPerSeq());
            for (Chunk c : step) {
                List<Integer> table = tables.get(c.seq());
                ensure(alloc, table, c.to());
                sb.add(
                        table,
                        ModelBenchSteps.randomIds(rng, c.to() - c.from(), vocab),
                        c.from(),
                        c.to() == tokens ? StepBatch.Logits.LAST : StepBatch.Logits.NONE);
            }
            engine.step(sb.build(), false);
        }
    }

    /**
     * {@code body} over {@code batch} sequences whose KV blocks hold {@code capacity} tokens each and whose first
     * {@code context} are prefilled with random ids ({@link #run}); their blocks are given back afterwards, whatever
     * {@code body} does.
     */
    static <R> R withPrefilled(
            LlmEngine engine,
            int batch,
            long capacity,
            int context,
            int maxBatchTokens,
            int maxRows,
            SplittableRandom rng,
            java.util.function.Function<List<List<Integer>>, R> body) {
        BlockAllocator alloc = engine.blocks();
        List<List<Integer>> tables = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < batch; i++) {
                List<Integer> t = new java.util.ArrayList<>();
                tables.add(t);
                ensure(alloc, t, capacity);
            }
            run(
                    engine,
                    tables,
                    context,
                    maxBatchTokens,
                    maxRows,
                    rng,
                    engine.config().vocabSize());
            return body.apply(tables);
        } finally {
            for (List<Integer> t : tables) {
                alloc.release(t);
            }
        }
    }

    /**
     * Median wall ms, median GPU ms and how many replayed a graph, of {@code iters} runs of {@code step} (given the run's
     * index, counting the {@code warmup} untimed ones first); the wall time is taken around the whole call.
     */
    static double[] timeSteps(int warmup, int iters, java.util.function.IntFunction<LlmEngine.TimedStep> step) {
        double[] wall = new double[iters];
        double[] gpu = new double[iters];
        int replayed = 0;
        for (int i = 0; i < warmup + iters; i++) {
            long s = System.nanoTime();
            LlmEngine.TimedStep ts = step.apply(i);
            long e = System.nanoTime();
            if (i >= warmup) {
                wall[i - warmup] = (e - s) / 1e6;
                gpu[i - warmup] = ts.gpuMillis();
                replayed += ts.graphReplayed() ? 1 : 0;
            }
        }
        return new double[] {
            ModelBenchStats.of(wall).median(), ModelBenchStats.of(gpu).median(), replayed
        };
    }

    /** Grows {@code table} to hold {@code tokens} tokens, or says why the KV cache cannot. */
    static void ensure(BlockAllocator alloc, List<Integer> table, long tokens) {
        if (!alloc.ensure(table, tokens)) {
            throw new IllegalStateException("the KV cache (" + alloc.blocks() + " blocks, " + alloc.freeBlocks()
                    + " free) cannot hold " + tokens + " more tokens of a sequence");
        }
    }
}
