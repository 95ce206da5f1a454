package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.sched.BlockAllocator;
import io.tensorlane.runtime.sched.StepBatch;
import io.tensorlane.runtime.sched.StepResult;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * prefixcheck's orchestration on a CPU stand-in with a real paged KV cache: each token's K/V per layer follow from its
 * id, its position and an attention-like mean over some earlier V its row reads back through the block table, plus noise that
 * depends on the step's size (so a fresh and a cached computation differ as by rounding). A correct stand-in passes
 * every row and the control is reported as a mismatch; one that reads cached positions one slot off fails; noise far
 * beyond rounding fails; for a MoE stand-in the layers after routing are gated only when the routing dump agrees.
 */
class PrefixCheckRunTest {
    static final int BS = 16;
    static final double TOL = 0.015625;

    /** The stand-in; {@code offByOne}: positions before the chunk read from the next slot; {@code noise}: its size. */
    static final class Fake implements PrefixCheckTarget {
        final int tp = 2;
        final int layers;
        final int width = 8;
        final int vocab = 64;
        final int routingFree;
        final BlockAllocator blocks = new BlockAllocator(128, BS);
        final float[][][][] kv; // [rank][layer][K/V][slot * width + e]
        final boolean offByOne;
        final double noise;
        final List<RoutingRecords.Step> routing = new ArrayList<>();
        /** A step index whose routing of one position is made to differ (-1: none). */
        int flipStep = -1;

        Fake(int layers, int routingFree, boolean offByOne, double noise) {
            this.layers = layers;
            this.routingFree = routingFree;
            this.offByOne = offByOne;
            this.noise = noise;
            this.kv = new float[tp][layers][2][128 * BS * width];
        }

        @Override
        public StepResult step(StepBatch b, boolean wantLogits) {
            int n = b.tokens();
            int[] lt = b.logitTokens();
            float[] logits = new float[lt.length * vocab];
            int[] ids = new int[lt.length];
            int[] chunkStart = new int[b.rows()];
            java.util.Arrays.fill(chunkStart, Integer.MAX_VALUE);
            for (int t = 0; t < n; t++) {
                chunkStart[b.tokenRow()[t]] = Math.min(chunkStart[b.tokenRow()[t]], b.positions()[t]);
            }
            for (int r = 0; r < tp; r++) {
                for (int t = 0; t < n; t++) {
                    float[] h = forward(b, t, r, chunkStart);
                    for (int i = 0; i < lt.length; i++) {
                        if (lt[i] == t && r == 0) {
                            for (int v = 0; v < vocab; v++) {
                                double s = 0;
                                for (int e = 0; e < width; e++) {
                                    s += h[e] * Math.sin(1.3 * v + 0.7 * e);
                                }
                                logits[i * vocab + v] = (float) s;
                            }
                        }
                    }
                }
            }
            recordRouting(b);
            return new StepResult(ids, logits);
        }

        /** Token {@code t} of {@code b} through every layer on rank {@code r}: writes its K/V, returns its last h. */
        private float[] forward(StepBatch b, int t, int r, int[] chunkStart) {
            int row = b.tokenRow()[t];
            int pos = b.positions()[t];
            int slot = b.slots()[t];
            float[] h = new float[width];
            for (int e = 0; e < width; e++) {
                h[e] = (float) Math.sin(0.37 * b.tokenIds()[t] + 1.1 * e + 0.5 * r);
            }
            for (int l = 0; l < layers; l++) {
                float[] k = kv[r][l][0];
                float[] v = kv[r][l][1];
                for (int e = 0; e < width; e++) {
                    k[slot * width + e] = h[e] + (float) Math.cos(0.01 * pos * (e + 1));
                    v[slot * width + e] = 0.5f * h[e] - (float) Math.sin(0.02 * pos + e);
                }
                // attention that looks at a few earlier positions (chosen by the token), as a trained model's does
                float[] ctx = new float[width];
                int id = b.tokenIds()[t];
                int seen = 0;
                for (int p = 0; p <= pos; p++) {
                    if (p != pos && (p * 31 + id * 17 + l) % 7 != 0) {
                        continue;
                    }
                    int s = b.blockTables()[row * b.maxBlocksPerSeq() + p / BS] * BS + p % BS;
                    if (offByOne && p < chunkStart[row]) {
                        s++;
                    }
                    for (int e = 0; e < width; e++) {
                        ctx[e] += v[s * width + e];
                    }
                    seen++;
                }
                for (int e = 0; e < width; e++) {
                    ctx[e] /= seen;
                }
                java.util.Random jitter = new java.util.Random(31L * b.tokens() + 7L * t + l + 1000L * r);
                for (int e = 0; e < width; e++) {
                    h[e] = (float) (Math.tanh(h[e] + ctx[e]) * (1 + noise * jitter.nextGaussian()));
                }
            }
            return h;
        }

        /** The routing dump's record of this step: two MoE layers, top-2, experts from the token id alone. */
        private void recordRouting(StepBatch b) {
            int n = b.tokens();
            int[] rows = b.tokenRow().clone();
            int[] pos = b.positions().clone();
            int[] ex = new int[2 * n * 2];
            for (int l = 0; l < 2; l++) {
                for (int t = 0; t < n; t++) {
                    int id = b.tokenIds()[t];
                    boolean flip = routing.size() == flipStep && t == n / 2 && l == 0;
                    ex[(l * n + t) * 2] = (id + l + (flip ? 1 : 0)) % 8;
                    ex[(l * n + t) * 2 + 1] = 8 + (3 * id + l) % 8;
                }
            }
            routing.add(new RoutingRecords.Step(n, 2, 2, rows, pos, ex));
        }

        @Override
        public BlockAllocator blocks() {
            return blocks;
        }

        @Override
        public int maxBlocksPerSeq() {
            return 64;
        }

        @Override
        public int vocab() {
            return vocab;
        }

        @Override
        public int tp() {
            return tp;
        }

        @Override
        public int layers() {
            return layers;
        }

        @Override
        public int width() {
            return width;
        }

        @Override
        public int routingFree() {
            return routingFree;
        }

        @Override
        public float[] readKv(int rank, int layer, boolean value, int[] ids) {
            float[] src = kv[rank][layer][value ? 1 : 0];
            float[] out = new float[ids.length * BS * width];
            for (int i = 0; i < ids.length; i++) {
                System.arraycopy(src, ids[i] * BS * width, out, i * BS * width, BS * width);
            }
            return out;
        }
    }

    static List<PrefixCheckRun.Row> run(Fake f) {
        return new PrefixCheckRun(f).run(200, 37, 33, () -> f.routing);
    }

    @Test
    void aCorrectEngineMatchesWithinRoundingAndTheControlMismatches() {
        Fake f = new Fake(3, 3, false, 1e-4);
        List<PrefixCheckRun.Row> rows = run(f);
        assertThat(rows).hasSize(11);
        assertThat(rows).allSatisfy(r -> assertThat(r.pass(TOL)).as(r.check()).isTrue());
        assertThat(rows.stream().filter(r -> r.gated() && r.expectMatch()))
                .hasSize(8)
                .allSatisfy(r -> assertThat(r.stat().worstRel())
                        .as(r.check())
                        .isGreaterThan(0)
                        .isLessThan(TOL / 4));
        PrefixCheckRun.Row control = rows.stream()
                .filter(r -> r.check().startsWith("control: prefix KV"))
                .findFirst()
                .orElseThrow();
        assertThat(control.stat().worstRel()).isGreaterThan(0.1);
        assertThat(control.stat().worstGroup()).endsWith("block 6");
        assertThat(f.routing).as("the check's steps").hasSize(PrefixCheckRun.STEPS);
        assertThat(f.blocks.freeBlocks()).as("every block given back").isEqualTo(128);
    }

    @Test
    void anEngineThatReadsCachedPositionsOneSlotOffFails() {
        List<PrefixCheckRun.Row> rows = run(new Fake(3, 3, true, 1e-4));
        assertThat(rows.stream().filter(r -> !r.pass(TOL)).map(PrefixCheckRun.Row::check))
                .contains("continuation KV on cached vs fresh", "continuation logits on cached vs fresh");
    }

    @Test
    void noiseFarBeyondRoundingFails() {
        List<PrefixCheckRun.Row> rows = run(new Fake(3, 3, false, 0.05));
        assertThat(rows.stream().filter(r -> r.gated() && r.expectMatch()).anyMatch(r -> !r.pass(TOL)))
                .isTrue();
    }

    @Test
    void aMoeModelsLaterLayersAreGatedOnlyWhereTheRoutingAgrees() {
        Fake same = new Fake(3, 1, false, 1e-4);
        List<PrefixCheckRun.Row> rows = run(same);
        assertThat(rows).hasSize(16); // five KV rows split in two
        assertThat(rows).allSatisfy(r -> assertThat(r.pass(TOL)).as(r.check()).isTrue());
        assertThat(rows.stream().filter(r -> r.check().contains("(routing identical)")))
                .hasSize(8)
                .allSatisfy(r -> assertThat(r.gated()).isTrue());

        Fake flipped = new Fake(3, 1, false, 1e-4);
        flipped.flipStep = 3; // the cached computation routes one continuation token elsewhere
        List<PrefixCheckRun.Row> f = run(flipped);
        PrefixCheckRun.Row cont = f.stream()
                .filter(r -> r.check().startsWith("continuation KV on cached vs fresh (layers 1..2)"))
                .findFirst()
                .orElseThrow();
        assertThat(cont.gated()).isFalse();
        assertThat(cont.check()).contains("routing differs at 1 token-layer pairs");
        assertThat(f.stream().filter(r -> r.check().startsWith("prefix KV: cached blocks vs fresh (layers 1..2)")))
                .singleElement()
                .satisfies(
                        r -> assertThat(r.gated()).as("the prefix routed alike").isTrue());

        Fake none = new Fake(3, 1, false, 1e-4);
        List<PrefixCheckRun.Row> n = new PrefixCheckRun(none).run(200, 37, 33, () -> null);
        assertThat(n.stream().filter(r -> r.check().contains("no routing dump")))
                .hasSize(8)
                .allSatisfy(r -> assertThat(r.gated()).isFalse());
    }
}
