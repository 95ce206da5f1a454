package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class KvCacheTest {
    /** Llama-3.1-8B: 32 layers, 8 kv heads of 128, blocks of 16 tokens; per rank at TP 1, 2, 8. */
    @ParameterizedTest(name = "{0} kv heads per rank: {1} bytes a bf16 block")
    @CsvSource({"8, 2097152", "4, 1048576", "1, 262144"})
    void bytesPerBlockAreEveryLayersKAndV(int kvHeads, long bf16) {
        assertThat(KvCache.bytesPerBlock(32, 16, kvHeads, 128, 2)).isEqualTo(bf16);
        assertThat(KvCache.bytesPerBlock(32, 16, kvHeads, 128, 1)).isEqualTo(bf16 / 2);
    }

    @Test
    void fp8HoldsTwiceTheTokensInTheSameMemory() {
        long budget = 40L << 30; // what an H200 leaves an 8B model at fraction 0.9, roughly
        long bf16 = KvCache.bytesPerBlock(
                32, 16, 8, 128, KvCacheDtype.AUTO.elementBytes(io.tensorlane.contract.DType.bf16));
        long fp8 =
                KvCache.bytesPerBlock(32, 16, 8, 128, KvCacheDtype.FP8.elementBytes(io.tensorlane.contract.DType.bf16));
        int b16 = KvCache.blocksThatFit(budget, bf16);
        int b8 = KvCache.blocksThatFit(budget, fp8);
        assertThat(b16).isEqualTo(20480);
        assertThat(b8).isEqualTo(2 * b16);
        // a budget that is not a whole number of bf16 blocks: fp8 gets 2x or 2x + 1 blocks
        assertThat(KvCache.blocksThatFit(budget + bf16 / 2 + 1, fp8)).isEqualTo(2 * b16 + 1);
        assertThat(KvCache.blocksThatFit(budget + bf16 / 2 + 1, bf16)).isEqualTo(b16);
    }

    @Test
    void aNegativeBudgetFitsNothingAndAHugeOneIsCapped() {
        assertThat(KvCache.blocksThatFit(-5, 1024)).isZero();
        assertThat(KvCache.blocksThatFit(Long.MAX_VALUE, 1)).isEqualTo(Integer.MAX_VALUE);
    }

    @Test
    void theEngineSaysWhereTheScalesCameFrom() {
        assertThat(KvCache.describe(KvCacheDtype.FP8, io.tensorlane.contract.DType.bf16, true))
                .isEqualTo("FP8 KV cache (e4m3, 1 byte an element): per-layer k/v scales from the checkpoint");
        assertThat(KvCache.describe(KvCacheDtype.FP8, io.tensorlane.contract.DType.fp16, false))
                .endsWith("1.0 (the checkpoint has none)");
        assertThat(KvCache.describe(KvCacheDtype.AUTO, io.tensorlane.contract.DType.bf16, true))
                .isNull();
        assertThat(KvCache.describe(KvCacheDtype.FP16, io.tensorlane.contract.DType.bf16, false))
                .contains("kept in bf16");
    }
}
