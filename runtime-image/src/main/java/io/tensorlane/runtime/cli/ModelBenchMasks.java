package io.tensorlane.runtime.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.runtime.llm.LlmEngine;
import io.tensorlane.runtime.sched.StepBatch;
import io.tensorlane.runtime.structured.GrammarConstraint;
import io.tensorlane.runtime.structured.Grammars;
import io.tensorlane.runtime.structured.TokenMasks;
import io.tensorlane.runtime.structured.TokenVocabulary;
import io.tensorlane.runtime.text.SamplingParams;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * {@code bench-model --mask-cost}: what structured outputs cost a decode step (issue #30: at batch 32 at most 10% of
 * the step). Per batch size B, B sequences of {@code --context} random ids are prefilled; then two runs of the same
 * decode steps (one token per sequence at position context, greedy draws, a CUDA graph replay), each {@code iters}
 * timed steps after a warm-up: <b>plain</b>, and <b>masked</b>, where every row follows its own walk through the token
 * masks of {@link #SCHEMA} compiled on the checkpoint's own tokenizer ({@link Grammars#json}; the compile is timed
 * apart). A masked step's wall time covers what serving adds per step: each row's mask from its walk (advance by the
 * token it drew last, a cached mask after the first visit of a state), the mask upload and the sampler's masked draw;
 * each walk starts again when its text is complete or has drawn an end-of-sequence id. The ratio masked / plain of the
 * wall medians is the figure.
 */
final class ModelBenchMasks {
    /** A schema of the kind agents send: nested object, enum, integer, bounded array, required fields. */
    static final String SCHEMA = "{\"type\":\"object\",\"properties\":{"
            + "\"name\":{\"type\":\"string\"},"
            + "\"city\":{\"type\":\"string\",\"enum\":[\"Paris\",\"Lyon\",\"Nice\"]},"
            + "\"age\":{\"type\":\"integer\"},"
            + "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"maxItems\":4},"
            + "\"address\":{\"type\":\"object\",\"properties\":{\"street\":{\"type\":\"string\"},"
            + "\"zip\":{\"type\":\"string\"}},\"required\":[\"street\"]}},"
            + "\"required\":[\"name\",\"city\",\"age\"]}";

    /** One batch size: wall and GPU medians of both runs, their ratios, and how many timed steps each replayed. */
    record Row(
            int batch,
            double plainWallMs,
            double maskedWallMs,
            double plainGpuMs,
            double maskedGpuMs,
            int plainReplayed,
            int maskedReplayed,
            int steps,
            long restarts) {
        double wallRatio() {
            return maskedWallMs / plainWallMs;
        }

        double gpuRatio() {
            return maskedGpuMs / plainGpuMs;
        }
    }

    private final LlmEngine engine;
    private final int context;
    private final int warmup;
    private final int iters;
    private final int maxBatchTokens;
    private final int maxRows;
    private final TokenMasks masks;
    private final double compileMs;

    ModelBenchMasks(
            LlmEngine engine, Path modelDir, int context, int warmup, int iters, int maxBatchTokens, int maxRows)
            throws java.io.IOException {
        this.engine = engine;
        this.context = context;
        this.warmup = warmup;
        this.iters = iters;
        this.maxBatchTokens = maxBatchTokens;
        this.maxRows = maxRows;
        long t0 = System.nanoTime();
        TokenVocabulary vocab = TokenVocabulary.load(
                modelDir,
                engine.config().vocabSize(),
                new HashSet<>(engine.config().eosTokenIds()));
        JsonNode schema = new ObjectMapper().readTree(SCHEMA);
        this.masks = new Grammars(vocab).json(schema);
        this.compileMs = (System.nanoTime() - t0) / 1e6;
    }

    Row measure(int batch, SplittableRandom rng) {
        int vocab = engine.config().vocabSize();
        return ModelBenchPrefill.withPrefilled(
                engine, batch, context + 1L, context, maxBatchTokens, maxRows, rng, tables -> {
                    int[] last = ModelBenchSteps.randomIds(rng, batch, vocab);
                    double[] plain = run(tables, last.clone(), null);
                    Walks walks = new Walks(batch, warmup + iters);
                    double[] masked = run(tables, last.clone(), walks);
                    return new Row(
                            batch,
                            plain[0],
                            masked[0],
                            plain[1],
                            masked[1],
                            (int) plain[2],
                            (int) masked[2],
                            iters,
                            walks.restarts);
                });
    }

    /** Every row's walk through the masks: the tokens it drew since its walk began. */
    private final class Walks {
        final GrammarConstraint[] walk;
        final int[][] drawn;
        final int[] count;
        long restarts;

        Walks(int rows, int steps) {
            walk = new GrammarConstraint[rows];
            drawn = new int[rows][steps + 1];
            count = new int[rows];
            for (int r = 0; r < rows; r++) {
                walk[r] = new GrammarConstraint(masks);
            }
        }

        int[] mask(int r) {
            return walk[r].mask(drawn[r], 0, count[r]);
        }

        void drew(int r, int id) {
            if (engine.config().eosTokenIds().contains(id) || count[r] == drawn[r].length) {
                restart(r);
                return;
            }
            drawn[r][count[r]++] = id;
            walk[r].mask(drawn[r], 0, count[r]); // advances the walk by id (the next step's mask is then cached)
            if (walk[r].complete()) {
                restart(r);
            }
        }

        private void restart(int r) {
            walk[r] = new GrammarConstraint(masks);
            count[r] = 0;
            restarts++;
        }
    }

    /**
     * Median wall ms, median GPU ms and replayed steps of {@code iters} steps after {@code warmup}, each drawing every
     * row's next token after {@code last} (with {@code walks}: under its walk's mask, the walk then advanced).
     */
    private double[] run(List<List<Integer>> tables, int[] last, Walks walks) {
        return ModelBenchPrefill.timeSteps(warmup, iters, i -> {
            StepBatch.Builder sb = new StepBatch.Builder(engine.blocks().blockSize(), engine.maxBlocksPerSeq());
            for (int r = 0; r < tables.size(); r++) {
                sb.add(tables.get(r), new int[] {last[r]}, context, StepBatch.Logits.LAST);
                sb.sample(SamplingParams.greedy(), walks == null ? i : walks.count[r]);
                if (walks != null) {
                    sb.mask(walks.mask(r));
                }
            }
            LlmEngine.TimedStep ts = engine.timedStep(sb.build());
            int[] ids = ts.result().ids();
            if (walks != null) {
                for (int r = 0; r < tables.size(); r++) {
                    walks.drew(r, ids[r]);
                }
            }
            System.arraycopy(ids, 0, last, 0, Math.min(ids.length, last.length));
            return ts;
        });
    }

    /** The table at each of {@code batches} (until {@code overBudget}), printed and added to {@code report}. */
    void table(
            List<Integer> batches,
            SplittableRandom rng,
            PrintWriter out,
            ModelBenchJson report,
            java.util.function.BooleanSupplier overBudget)
            throws java.io.IOException {
        printHeader(out, compileMs);
        for (int b : batches) {
            if (overBudget.getAsBoolean()) {
                report.skipped("masks batch " + b);
                out.printf(Locale.ROOT, "masks %6d skipped: --max-seconds reached%n", b);
                continue;
            }
            Row r = measure(b, rng);
            print(out, r);
            report.masks(r, compileMs);
            out.flush();
            report.write(false);
        }
    }

    static void printHeader(PrintWriter out, double compileMs) {
        out.printf(
                Locale.ROOT,
                "masks: schema compiled to token masks on the checkpoint's tokenizer in %.1f ms%n"
                        + "masks  batch | plain wall  gpu ms | masked wall  gpu ms | x plain (wall)  x plain (gpu) "
                        + "| replayed plain/masked | walks restarted%n",
                compileMs);
    }

    static void print(PrintWriter out, Row r) {
        out.printf(
                Locale.ROOT,
                "masks %6d | %10.3f %7.3f | %11.3f %7.3f | %14.3f %14.3f | %4d/%-4d of %-4d | %d%n",
                r.batch(),
                r.plainWallMs(),
                r.plainGpuMs(),
                r.maskedWallMs(),
                r.maskedGpuMs(),
                r.wallRatio(),
                r.gpuRatio(),
                r.plainReplayed(),
                r.maskedReplayed(),
                r.steps(),
                r.restarts());
        if (r.batch() == 32) {
            out.printf(
                    Locale.ROOT,
                    "masks: at batch 32 a masked step costs %.3fx a plain one (wall; gpu %.3fx); target <= 1.10x%n",
                    r.wallRatio(),
                    r.gpuRatio());
        }
    }
}
