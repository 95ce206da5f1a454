package io.tensorlane.runtime.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class TpLayoutTest {
    static Stream<Arguments> layouts() {
        // heads, kv heads, tp -> heads per rank, kv heads per rank, replicated, first kv head of each rank
        return Stream.of(
                Arguments.of(32, 8, 1, 32, 8, false, List.of(0)),
                Arguments.of(32, 8, 2, 16, 4, false, List.of(0, 4)),
                Arguments.of(32, 8, 4, 8, 2, false, List.of(0, 2, 4, 6)),
                Arguments.of(32, 8, 8, 4, 1, false, List.of(0, 1, 2, 3, 4, 5, 6, 7)),
                Arguments.of(8, 2, 1, 8, 2, false, List.of(0)),
                Arguments.of(8, 2, 2, 4, 1, false, List.of(0, 1)),
                Arguments.of(8, 2, 4, 2, 1, true, List.of(0, 0, 1, 1)),
                Arguments.of(8, 2, 8, 1, 1, true, List.of(0, 0, 0, 0, 1, 1, 1, 1)),
                Arguments.of(28, 4, 1, 28, 4, false, List.of(0)),
                Arguments.of(28, 4, 2, 14, 2, false, List.of(0, 2)),
                Arguments.of(28, 4, 4, 7, 1, false, List.of(0, 1, 2, 3)),
                Arguments.of(32, 4, 8, 4, 1, true, List.of(0, 0, 1, 1, 2, 2, 3, 3)),
                Arguments.of(16, 16, 1, 16, 16, false, List.of(0)),
                Arguments.of(16, 16, 4, 4, 4, false, List.of(0, 4, 8, 12)),
                Arguments.of(16, 16, 8, 2, 2, false, List.of(0, 2, 4, 6, 8, 10, 12, 14)),
                Arguments.of(16, 8, 8, 2, 1, false, List.of(0, 1, 2, 3, 4, 5, 6, 7)),
                Arguments.of(8, 1, 8, 1, 1, true, List.of(0, 0, 0, 0, 0, 0, 0, 0)));
    }

    @ParameterizedTest(name = "{0}/{1} heads at tp {2}")
    @MethodSource("layouts")
    void headSplit(int heads, int kv, int tp, int hq, int hk, boolean replicated, List<Integer> kvStarts) {
        TpLayout l = TpLayout.of(TestConfigs.heads(heads, kv, 64, 1000), tp);
        assertThat(l.headsPerRank()).isEqualTo(hq);
        assertThat(l.kvHeadsPerRank()).isEqualTo(hk);
        assertThat(l.kvReplicated()).isEqualTo(replicated);
        assertThat(IntStream.range(0, tp).map(l::kvHeadStart).boxed().toList()).isEqualTo(kvStarts);
        assertThat(IntStream.range(0, tp).map(l::headStart).boxed().toList())
                .isEqualTo(IntStream.range(0, tp).map(r -> r * hq).boxed().toList());
        assertThat(l.intermediatePerRank()).isEqualTo(64 / tp);
        assertThat(l.qkvRows()).isEqualTo((hq + 2 * hk) * 8);
        // each rank's query heads share its kv heads: query head h uses kv head h / group
        int group = heads / kv;
        for (int r = 0; r < tp; r++) {
            for (int h = r * hq; h < (r + 1) * hq; h++) {
                assertThat(h / group)
                        .as("rank %d query head %d", r, h)
                        .isBetween(l.kvHeadStart(r), l.kvHeadStart(r) + hk - 1);
            }
        }
    }

    static Stream<Arguments> vocabSplits() {
        // vocab, tp -> rows per rank, real rows of each rank
        return Stream.of(
                Arguments.of(30, 1, 30, List.of(30)),
                Arguments.of(30, 4, 8, List.of(8, 8, 8, 6)),
                Arguments.of(5, 4, 2, List.of(2, 2, 1, 0)),
                Arguments.of(9, 8, 2, List.of(2, 2, 2, 2, 1, 0, 0, 0)),
                Arguments.of(128256, 8, 16032, List.of(16032, 16032, 16032, 16032, 16032, 16032, 16032, 16032)),
                Arguments.of(151655, 4, 37914, List.of(37914, 37914, 37914, 37913)));
    }

    @ParameterizedTest(name = "vocab {0} at tp {1}")
    @MethodSource("vocabSplits")
    void vocabSplit(int vocab, int tp, int perRank, List<Integer> rows) {
        TpLayout l = TpLayout.of(TestConfigs.heads(8, 8, 64, vocab), tp);
        assertThat(l.vocabPerRank()).isEqualTo(perRank);
        assertThat(IntStream.range(0, tp).map(l::vocabRows).boxed().toList()).isEqualTo(rows);
        assertThat(IntStream.range(0, tp).map(l::vocabStart).boxed().toList())
                .isEqualTo(IntStream.range(0, tp).map(r -> r * perRank).boxed().toList());
        assertThat(rows.stream().mapToInt(Integer::intValue).sum()).isEqualTo(vocab);
    }

    static Stream<Arguments> rejections() {
        return Stream.of(
                Arguments.of(TestConfigs.heads(32, 8, 64, 100), 0, "tensor parallel size 0 is not supported (1..8)"),
                Arguments.of(TestConfigs.heads(32, 8, 64, 100), 16, "tensor parallel size 16 is not supported (1..8)"),
                Arguments.of(
                        TestConfigs.heads(28, 4, 64, 100),
                        8,
                        "num_attention_heads 28 is not divisible by tensor parallel size 8"),
                Arguments.of(
                        TestConfigs.heads(12, 6, 64, 100),
                        4,
                        "num_key_value_heads 6 and tensor parallel size 4 do not divide one another (KV heads are split or replicated evenly)"),
                Arguments.of(
                        TestConfigs.heads(32, 8, 100, 100),
                        8,
                        "intermediate_size 100 is not divisible by tensor parallel size 8"),
                Arguments.of(
                        TestConfigs.heads(6, 6, 64, 100),
                        4,
                        "num_attention_heads 6 is not divisible by tensor parallel size 4"));
    }

    @ParameterizedTest(name = "{2}")
    @MethodSource("rejections")
    void rejectsUnshardableLayouts(ModelConfig c, int tp, String message) {
        assertThatThrownBy(() -> TpLayout.of(c, tp))
                .isInstanceOf(ModelException.class)
                .hasMessage(message);
    }

    @Test
    void rejectsRanksOutsideTheLayout() {
        TpLayout l = TpLayout.of(TestConfigs.heads(8, 2, 64, 100), 4);
        assertThatThrownBy(() -> l.kvHeadStart(4))
                .isInstanceOf(ModelException.class)
                .hasMessage("rank 4 is outside tensor parallel size 4");
        assertThatThrownBy(() -> l.vocabStart(-1)).isInstanceOf(ModelException.class);
    }

    @Test
    void realModels() {
        TpLayout llama = TpLayout.of(ModelConfigTest.load("llama-3.1-8b-instruct.json"), 8);
        assertThat(llama.headsPerRank()).isEqualTo(4);
        assertThat(llama.kvHeadsPerRank()).isEqualTo(1);
        assertThat(llama.intermediatePerRank()).isEqualTo(1792);
        TpLayout qwen = TpLayout.of(ModelConfigTest.load("qwen2.5-7b-instruct.json"), 4);
        assertThat(qwen.headsPerRank()).isEqualTo(7);
        assertThat(qwen.kvHeadsPerRank()).isEqualTo(1);
        assertThat(qwen.intermediatePerRank()).isEqualTo(4736);
        assertThatThrownBy(() -> TpLayout.of(ModelConfigTest.load("qwen2.5-7b-instruct.json"), 8))
                .hasMessageContaining("num_attention_heads 28 is not divisible by tensor parallel size 8");
    }
}
