package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The KV blocks that fit every GPU, with a draft model's cache beside rank 0's ({@link KvSizing#blocks}). */
class KvSizingTest {
    static Stream<Arguments> cases() {
        return Stream.of(
                // name, budgets per GPU (rank 0's first), ranks on each, bytes per block, beside per block, blocks
                Arguments.of("one GPU, no draft", new long[] {1000}, new int[] {1}, 10L, 0L, 100),
                Arguments.of("one GPU, a draft of a quarter the bytes", new long[] {1000}, new int[] {1}, 8L, 2L, 100),
                Arguments.of(
                        "a draft as large as the target halves it", new long[] {1000}, new int[] {1}, 10L, 10L, 50),
                Arguments.of("whole blocks only", new long[] {1009}, new int[] {1}, 10L, 0L, 100),
                // virtual ranks: 4 target ranks on GPU 0 and the draft: 4 x 10 + 5 bytes a block
                Arguments.of("4 virtual ranks and a draft", new long[] {900}, new int[] {4}, 10L, 5L, 20),
                // TP 2 on two GPUs: the draft only on rank 0's, which then holds fewer blocks: it decides
                Arguments.of(
                        "TP 2, the draft's GPU is the fuller", new long[] {1000, 1000}, new int[] {1, 1}, 10L, 10L, 50),
                Arguments.of(
                        "TP 2, the other GPU is fuller still", new long[] {1000, 400}, new int[] {1, 1}, 10L, 10L, 40),
                Arguments.of("TP 2 without a draft: the least", new long[] {1000, 990}, new int[] {1, 1}, 10L, 0L, 99),
                Arguments.of("a negative budget fits nothing", new long[] {-5, 1000}, new int[] {1, 1}, 10L, 0L, 0));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void blocksThatFitEveryGpu(String name, long[] budgets, int[] ranksOn, long perBlock, long beside, int blocks) {
        assertThat(KvSizing.blocks(budgets, ranksOn, perBlock, beside)).as(name).isEqualTo(blocks);
    }

    @Test
    void withoutADraftItIsTheOldArithmetic() {
        // floor(floor(budget / ranks) / perBlock), as the engine sized its cache before a draft could sit beside it
        for (long budget : new long[] {0, 1, 999, 123_456_789L}) {
            for (int ranks = 1; ranks <= 8; ranks++) {
                assertThat(KvSizing.blocks(new long[] {budget}, new int[] {ranks}, 37, 0))
                        .isEqualTo(KvCache.blocksThatFit(budget / ranks, 37));
            }
        }
    }

    @Test
    void badInputsAreRefused() {
        assertThatThrownBy(() -> KvSizing.blocks(new long[0], new int[0], 10, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> KvSizing.blocks(new long[] {1}, new int[] {1}, 0, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new KvSizing(true, 5)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> KvSizing.beside(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(KvSizing.LATER.deferred()).isTrue();
        assertThat(KvSizing.beside(64).besidePerBlock()).isEqualTo(64);
    }
}
