package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which attention kernel runs and its launch shape (the GPU side is checked by kernelcheck on the GPU machine). */
class ModelKernelsLaunchTest {
    @ParameterizedTest(name = "group {0}, head_dim {1}: {2} query heads per block")
    @CsvSource({
        "1, 128, 1", // MHA
        "4, 128, 4", // Llama-3-8B, Mistral-7B
        "7, 128, 1", // Qwen2.5-7B (28/4): 7 is prime
        "8, 128, 4", // Llama-3-70B
        "6, 128, 2",
        "8, 256, 2", // at head dim 256 at most 2 heads (8 x 8 accumulators a lane)
        "4, 64, 4",
        "12, 64, 4",
        "4, 96, 0", // not a multiple of 64: the per-head kernel
        "4, 320, 0"
    })
    void queryHeadsPerBlock(int group, int hd, int gh) {
        assertThat(AttentionSlices.splitGroup(group, hd)).isEqualTo(gh);
    }

    @ParameterizedTest(name = "{0} tokens x {1} blocks: {2} slices")
    @CsvSource({
        "1, 8, 32", // decode batch 1 of an 8B model: 264 / 8 = 33, capped at 32
        "1, 2, 32",
        "8, 8, 5", // 64 blocks -> ceil(264 / 64)
        "32, 8, 2",
        "33, 8, 1", // 264 blocks fill the GPU
        "2048, 8, 1"
    }) // prefill
    void keySlicesFillTheGpuOnlyWhenTheBatchDoesNot(int n, int blocksPerToken, int slices) {
        assertThat(AttentionSlices.splits(n, blocksPerToken)).isEqualTo(slices);
    }

    @Test
    void workspaceHoldsEveryBatchThatSplits() {
        int hq = 32;
        int hk = 8;
        int hd = 128;
        long ws = AttentionSlices.workspaceBytes(hq, hk, hd);
        int perToken = hq / AttentionSlices.splitGroup(hq / hk, hd);
        for (int n = 1; n <= 4096; n++) {
            int s = AttentionSlices.splits(n, perToken);
            long need = s > 1 ? (long) n * hq * s * (hd + 2) * 4 : 0;
            assertThat(need).as("n=%d", n).isLessThanOrEqualTo(ws);
        }
        assertThat(ws).isPositive().isLessThan(8L << 20);
        assertThat(AttentionSlices.workspaceBytes(8, 2, 96)).isZero(); // per-head kernel: no slices
    }

    @ParameterizedTest(name = "hq={0} hk={1} hd={2}")
    @CsvSource({"32, 8, 128", "8, 2, 64", "16, 2, 256", "12, 1, 128", "64, 8, 128"})
    void theFusedCombinesCountersComeFirstOneABlockAndTheSlicesFitAfterThem(int hq, int hk, int hd) {
        long ws = AttentionSlices.workspaceBytes(hq, hk, hd);
        int perToken = hq / AttentionSlices.splitGroup(hq / hk, hd);
        assertThat(AttentionSlices.TICKETS_BYTES % 16).isZero(); // the slices stay 16-byte aligned
        for (int n = 1; n <= 4096; n++) {
            int s = AttentionSlices.splits(n, perToken);
            if (s > 1) { // the launch takes tickets[i * perToken + y] for row i < n, y < perToken
                assertThat(4L * n * perToken).as("n=%d", n).isLessThanOrEqualTo(AttentionSlices.TICKETS_BYTES);
                assertThat(AttentionSlices.TICKETS_BYTES + (long) n * hq * s * (hd + 2) * 4)
                        .as("n=%d", n)
                        .isLessThanOrEqualTo(ws);
            }
        }
    }

    @ParameterizedTest(name = "TENSORLANE_ATTN_COMBINE=''{0}'' -> {1}")
    @CsvSource(
            delimiter = ';',
            value = {"; false", "  ; false", "kernel; false", " KERNEL ; false", "fused; true", "Fused; true"})
    void theCombineIsTheKernelUnlessFused(String value, boolean fused) {
        assertThat(AttentionKernels.fusedCombine(value)).isEqualTo(fused);
    }

    @Test
    void aBadCombineValueIsRefusedNamingTheVariable() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> AttentionKernels.fusedCombine("last-block"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(AttentionKernels.COMBINE_ENV + "='last-block'");
    }

    @ParameterizedTest(name = "TENSORLANE_ATTN_ROPE=''{0}'' -> {1}")
    @CsvSource(
            delimiter = ';',
            value = {"; false", "  ; false", "kernel; false", " KERNEL ; false", "fused; true", "Fused; true"})
    void theRopeIsItsOwnKernelUnlessFused(String value, boolean fused) {
        assertThat(AttentionKernels.fusedRope(value)).isEqualTo(fused);
    }

    @Test
    void aBadRopeValueIsRefusedNamingTheVariable() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> AttentionKernels.fusedRope("on"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(AttentionKernels.ROPE_ENV + "='on'")
                .hasMessageContaining("kernel")
                .hasMessageContaining("fused");
    }

    @ParameterizedTest(name = "n={0}, tiles={1}, on={2}, hq={3}, hk={4}, hd={5} -> {6}")
    @CsvSource({
        "1, 0, true, 32, 8, 128, true", // Llama-3-8B decode at batch 1
        "1, 0, true, 32, 4, 128, true", // Qwen3-30B-A3B
        "1, 0, true, 28, 4, 128, true", // group 7: one query head a block
        "1, 0, true, 8, 2, 64, true",
        "1, 0, true, 8, 2, 256, true",
        "1, 0, false, 32, 8, 128, false", // switched off
        "2, 0, true, 32, 8, 128, false", // two tokens may be one sequence's (a verify step): the second reads the
        // first's key
        "8, 0, true, 32, 8, 128, false",
        "1, 1, true, 32, 8, 128, false", // tiles are prefill
        "1, 0, true, 8, 2, 96, false", // head dim 96: the per-head kernel
        "0, 0, true, 32, 8, 128, false"
    })
    void oneTokenStepsFoldTheRopeIntoTheAttention(int n, int tiles, boolean on, int hq, int hk, int hd, boolean fused) {
        assertThat(AttentionBlock.fusesRope(n, tiles, on, hq, hk, hd)).isEqualTo(fused);
    }
}
