package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.runtime.sched.StepBatch;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GraphBucketsTest {
    @ParameterizedTest(name = "{0} rows, maxSeqs {1} -> {2}")
    @CsvSource({"1, 48, 1", "2, 48, 2", "3, 48, 4", "8, 48, 8", "9, 48, 16", "33, 48, 48", "48, 48, 48", "5, 4, 4"})
    void rowBucketsArePowersOfTwoCappedAtMaxSeqs(int rows, int maxSeqs, int bucket) {
        assertThat(GraphBuckets.rowBucket(rows, maxSeqs)).isEqualTo(bucket);
    }

    /** maxSeqs 32, graphs of at most 32 x 9 tokens (k = 8), verify graphs on unless the last column says off. */
    @ParameterizedTest(name = "{0} tokens, {1} logits rows, {2} rows, longest chunk {3} -> {4} ({5})")
    @CsvSource({
        // decode steps: one token per sequence, the row bucket
        "1, 1, 1, 1, 1, on",
        "3, 3, 3, 1, 4, on",
        "20, 20, 20, 1, 32, on",
        "3, 3, 3, 1, 4, off", // decode keeps its graphs with verify graphs off
        // verify steps: row bucket x longest chunk
        "5, 5, 1, 5, 5, on",
        "9, 9, 1, 9, 9, on",
        "7, 7, 3, 5, 20, on", // rows of 1, 5 and 1 tokens: 4 rows x 5
        "160, 160, 32, 5, 160, on",
        "288, 288, 32, 9, 288, on",
        "5, 5, 1, 5, 0, off",
        // eager: prefill chunks (logits for the last token only), too many rows, tiled chunks, over the token limit
        "5, 1, 1, 5, 0, on",
        "40, 40, 33, 2, 0, on",
        "16, 16, 1, 16, 0, on",
        "17, 17, 1, 17, 0, on",
        "290, 290, 29, 10, 0, on",
        "0, 0, 0, 0, 0, on"
    })
    void aStepReplaysTheGraphOfItsShape(int tokens, int logits, int rows, int longest, int graph, String verify) {
        GraphBuckets g = new GraphBuckets(32, 32 * 9, verify.equals("on"));
        assertThat(g.tokens(tokens, logits, rows, longest)).isEqualTo(graph);
    }

    @Test
    void theTokenLimitCapsVerifyGraphsNotDecodeGraphs() {
        GraphBuckets moe =
                new GraphBuckets(8, 9, true); // a MoE model: steps of at most maxSeqs + 1 tokens on the device
        assertThat(moe.tokens(8, 8, 8, 1)).isEqualTo(8);
        assertThat(moe.tokens(6, 6, 2, 3)).isEqualTo(6);
        assertThat(moe.tokens(10, 10, 2, 5)).isZero();
        assertThatThrownBy(() -> new GraphBuckets(8, 7, true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxTokens (7)");
    }

    @ParameterizedTest(name = "rows {0} -> {1}")
    @CsvSource(
            delimiter = ';',
            value = {"0,0,1,1,1,2; 3", "0,1,2,3; 1", "0,1,1,1,1,1,2; 5", "0,1,0,1,0; 3", "2,2,1,1,1; 3", "; 0"})
    void theLongestChunkIsTheMostTokensOfOneRow(String rows, int longest) {
        int[] r = rows == null
                ? new int[0]
                : java.util.Arrays.stream(rows.split(","))
                        .mapToInt(Integer::parseInt)
                        .toArray();
        assertThat(GraphBuckets.longestChunk(r, r.length)).isEqualTo(longest);
    }

    /** A verify step as the scheduler builds it, padded to its graph: the shape the graph was captured for. */
    @Test
    void aPaddedVerifyStepHasTheGraphsShapeAndNoQueryTiles() {
        int blockSize = 16;
        StepBatch b = new StepBatch.Builder(blockSize, 4)
                .add(List.of(3), new int[] {11}, 7, StepBatch.Logits.LAST) // a plain decode row
                .add(List.of(1, 2), new int[] {21, 22, 23, 24, 25}, 14, StepBatch.Logits.ALL) // last token + 4 guesses
                .add(List.of(5), new int[] {31, 32, 33}, 2, StepBatch.Logits.ALL) // last token + 2 guesses
                .build();
        GraphBuckets g = new GraphBuckets(8, 8 * 5, true);
        int n = g.tokens(b);
        assertThat(n).isEqualTo(4 * 5);
        StepBatch p = b.padTo(n);
        assertThat(p.tokens()).isEqualTo(n);
        assertThat(p.logitTokens()).hasSize(n);
        assertThat(p.rows()).isEqualTo(4);
        assertThat(java.util.Arrays.copyOfRange(p.slots(), 9, n)).containsOnly(-1);
        assertThat(java.util.Arrays.copyOfRange(p.tokenRow(), 9, n)).containsOnly(3);
        // the guesses sit at consecutive positions of their sequence, with its slots: causal within the step
        assertThat(java.util.Arrays.copyOfRange(p.positions(), 1, 6)).containsExactly(14, 15, 16, 17, 18);
        assertThat(java.util.Arrays.copyOfRange(p.slots(), 1, 6))
                .containsExactly(
                        1 * blockSize + 14, 1 * blockSize + 15, 2 * blockSize, 2 * blockSize + 1, 2 * blockSize + 2);
        // no query tiles: every token on the split-key kernel, as the graph was captured
        assertThat(AttentionPlan.of(p.tokenRow(), p.positions(), p.tokens(), 128))
                .isSameAs(AttentionPlan.NONE);
    }

    /**
     * The n-gram proposer's verify steps: most sequences guess nothing, so the bucket (rows x longest chunk) is mostly
     * padding, all on one extra row. The step is still one of short chunks, so a MoE layer keeps it on the device (the
     * capture of its graph cannot read expert offsets back); a prompt chunk of 16 tokens is not.
     */
    @Test
    void paddingDoesNotMakeAVerifyStepLong() {
        StepBatch.Builder builder = new StepBatch.Builder(16, 4);
        builder.add(List.of(0), new int[] {1, 2, 3, 4, 5}, 3, StepBatch.Logits.ALL); // last token + 4 guesses
        for (int r = 1; r < 16; r++) {
            builder.add(List.of(r), new int[] {7}, 5, StepBatch.Logits.LAST); // no guess
        }
        StepBatch b = builder.build();
        GraphBuckets g = new GraphBuckets(16, 16 * 5, true);
        int n = g.tokens(b);
        assertThat(n).isEqualTo(16 * 5);
        StepBatch p = b.padTo(n);
        assertThat(p.padTokens()).isEqualTo(n - 20);
        assertThat(p.realTokens()).isEqualTo(20);
        assertThat(GraphBuckets.longestChunk(p.tokenRow(), p.tokens())).isEqualTo(60); // the padding row
        assertThat(GraphBuckets.shortChunks(b)).isTrue();
        assertThat(GraphBuckets.shortChunks(p)).isTrue();
        assertThat(b.padTokens()).isZero();

        StepBatch prompt = new StepBatch.Builder(16, 4)
                .add(List.of(0, 1), new int[16], 0, StepBatch.Logits.LAST)
                .build();
        assertThat(GraphBuckets.shortChunks(prompt)).isFalse();
        assertThat(GraphBuckets.shortChunks(new StepBatch.Builder(16, 4)
                        .add(List.of(0), new int[15], 0, StepBatch.Logits.LAST)
                        .build()))
                .isTrue();
    }

    /**
     * The invariant the n-gram runs of 2026-12-06 broke: every step that replays a graph is one a MoE layer keeps on
     * the device (a capture cannot read expert offsets back), whatever mix of guesses its sequences carry. Random verify
     * steps over the engine's own limits: the buckets capped at the decode tokens ({@link EngineOptions#decodeTokens}, as
     * StepRunner caps them for MoE models), each padded as StepRunner pads it.
     */
    @ParameterizedTest(name = "max seqs {0}, k {1}")
    @CsvSource({"1, 1", "3, 4", "16, 4", "16, 8", "64, 4", "256, 2"})
    void everyStepThatReplaysAGraphStaysOnTheDeviceInAMoeLayer(int maxSeqs, int k) {
        int decodeRows = maxSeqs + 1;
        int decodeTokens = new EngineOptions(
                        java.nio.file.Path.of("m"), 1, false, maxSeqs, 8192, 1024, 0, 0.9, 8192, true, false, null, 16)
                .withVerifyTokens(maxSeqs * (k + 1))
                .decodeTokens();
        GraphBuckets g = new GraphBuckets(maxSeqs, Math.max(Math.min(8192, decodeTokens), maxSeqs), true);
        java.util.Random rnd = new java.util.Random(31L * maxSeqs + k);
        int graphed = 0;
        for (int trial = 0; trial < 400; trial++) {
            int rows = 1 + rnd.nextInt(maxSeqs);
            StepBatch.Builder builder = new StepBatch.Builder(16, 8);
            for (int r = 0; r < rows; r++) {
                int guesses = rnd.nextInt(4) == 0 ? rnd.nextInt(k + 1) : 0; // most sequences guess nothing
                builder.add(List.of(r % 8), new int[1 + guesses], 3, StepBatch.Logits.ALL);
            }
            StepBatch b = builder.build();
            int key = g.tokens(b);
            if (key == GraphBuckets.EAGER) {
                continue;
            }
            graphed++;
            StepBatch p = b.padTo(key);
            int onDevice = MoeDecodePath.deviceLimit(GraphBuckets.shortChunks(p), decodeRows, decodeTokens);
            assertThat(MoeDecodePath.of(1, p.tokens(), onDevice).pairs())
                    .as("%d rows padded to %d tokens", rows, key)
                    .isTrue();
        }
        assertThat(graphed).isEqualTo(400); // every such step has a graph
    }
}
