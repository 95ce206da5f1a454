package io.tensorlane.runtime.serve;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tensorlane.runtime.openai.ModelInfo;
import io.tensorlane.runtime.sched.BlockAllocator;
import io.tensorlane.runtime.sched.EngineMetrics;
import io.tensorlane.runtime.sched.PenaltyReference;
import io.tensorlane.runtime.sched.RowPenalty;
import io.tensorlane.runtime.sched.Scheduler;
import io.tensorlane.runtime.sched.SchedulerConfig;
import io.tensorlane.runtime.sched.StepBatch;
import io.tensorlane.runtime.sched.StepExecutor;
import io.tensorlane.runtime.sched.StepResult;
import io.tensorlane.runtime.text.ModelTokenizer;
import io.tensorlane.runtime.text.SamplingParams;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.Set;

/**
 * {@code serve} on the CPU over a random "model", for trying client scripts (scripts/oracle/agent_client.py) without a
 * GPU: logits are a fixed pseudo-random function of the token fed at a position and that position (printable ASCII
 * tokens favoured, {@link #asciiBoost}), penalised by the
 * GPU sampler's host reference and masked as the GPU masks; rows draw greedily at temperature 0, else by softmax with
 * the row's temperature and seed. Not a test: {@code java -cp ... io.tensorlane.runtime.serve.FakeServe MODEL_DIR PORT
 * [TOOL_PARSER|auto [SERVED_NAME]]} serves until killed.
 */
public final class FakeServe {
    private FakeServe() {}

    static final class RandomModel implements StepExecutor {
        private final int vocab;
        private final float[] boost;

        /** @param boost added to each id's logits (e.g. favouring ids whose text is printable ASCII) */
        RandomModel(int vocab, float[] boost) {
            this.vocab = vocab;
            this.boost = boost;
        }

        static float logit(int fed, int position, int id) {
            long h = (fed * 0x9E3779B97F4A7C15L) ^ (position * 0xC2B2AE3D27D4EB4FL) ^ (id * 0x165667B19E3779F9L);
            h ^= h >>> 29;
            h *= 0xBF58476D1CE4E5B9L;
            h ^= h >>> 32;
            return (float) ((h & 0xFFFFFF) / (double) 0xFFFFFF * 6 - 3);
        }

        @Override
        public StepResult step(StepBatch b, boolean wantLogits) {
            int m = b.logitTokens().length;
            int[] ids = new int[m];
            float[] raw = new float[m * vocab];
            for (int i = 0; i < m; i++) {
                int t = b.logitTokens()[i];
                float[] row = new float[vocab];
                for (int id = 0; id < vocab; id++) {
                    row[id] = logit(b.tokenIds()[t], b.positions()[t], id) + boost[id];
                    raw[i * vocab + id] = row[id];
                }
                RowPenalty pen = b.sampling().penalty(i);
                if (pen != null) PenaltyReference.apply(row, 0, vocab, pen);
                int[] mask = b.sampling().mask(i);
                if (mask != null) {
                    for (int id = 0; id < vocab; id++) {
                        if (!ScriptExecutor.allowed(mask, id)) row[id] = Float.NEGATIVE_INFINITY;
                    }
                }
                SamplingParams p = b.sampling().params(i);
                ids[i] = p.temperature() == 0
                        ? argmax(row)
                        : draw(
                                row,
                                p.temperature(),
                                new Random(p.seed() * 1_000_003L + b.sampling().counter(i)));
            }
            return new StepResult(ids, wantLogits ? raw : null);
        }

        private static int argmax(float[] row) {
            int best = 0;
            for (int id = 1; id < row.length; id++) if (row[id] > row[best]) best = id;
            return best;
        }

        private static int draw(float[] row, float temperature, Random rng) {
            float max = row[argmax(row)];
            double[] w = new double[row.length];
            double sum = 0;
            for (int id = 0; id < row.length; id++) {
                w[id] = row[id] == Float.NEGATIVE_INFINITY ? 0 : Math.exp((row[id] - max) / temperature);
                sum += w[id];
            }
            double u = rng.nextDouble() * sum;
            for (int id = 0; id < row.length; id++) {
                u -= w[id];
                if (u <= 0 && w[id] > 0) return id;
            }
            return argmax(row);
        }

        @Override
        public int vocabSize() {
            return vocab;
        }
    }

    /** +3 for the ids whose own text is printable ASCII: the answers read as text, as a trained model's mostly do. */
    static float[] asciiBoost(ModelTokenizer tok, int vocab) {
        float[] b = new float[vocab];
        for (int id = 0; id < vocab; id++) {
            String t = tok.decode(new int[] {id}, false);
            b[id] = !t.isEmpty() && t.chars().allMatch(c -> c >= 0x20 && c < 0x7f) ? 3f : 0f;
        }
        return b;
    }

    public static void main(String[] args) throws Exception {
        ModelTokenizer tok = ModelTokenizer.load(Path.of(args[0]));
        String name = args.length > 3 ? args[3] : "fake";
        int vocab = tok.vocabulary().size();
        EngineMetrics metrics =
                new EngineMetrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), "fake", 16, 4096);
        Scheduler scheduler = new Scheduler(
                new RandomModel(vocab, asciiBoost(tok, vocab)),
                new BlockAllocator(4096, 16),
                new SchedulerConfig(64, 2048, 512, 2048, 128).withMaxLogitRows(128),
                Set.copyOf(tok.eosTokenIds()),
                metrics);
        ModelServer server = ModelServer.start(
                new ModelServer.Options(
                        name,
                        "127.0.0.1",
                        Integer.parseInt(args[1]),
                        512,
                        1 << 24,
                        Duration.ofSeconds(5),
                        true,
                        args.length > 2 && !args[2].equals("auto") ? args[2] : null),
                tok,
                scheduler,
                metrics,
                new ModelInfo(name, 2048, vocab, 1_700_000_000L),
                new PrintWriter(System.err, true));
        System.err.println("fake serve on port " + server.port());
        Thread.currentThread().join();
    }
}
