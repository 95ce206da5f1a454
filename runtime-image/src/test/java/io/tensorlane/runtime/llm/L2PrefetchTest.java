package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class L2PrefetchTest {
    private static final long MIB = 1L << 20;
    private static final long O = 0x7f0000000000L;
    private static final long GU = 0x7f1000000000L;

    @ParameterizedTest(name = "''{0}'' -> on {1}, budget {2}")
    @CsvSource(
            value = {
                "null, false, 0",
                "'', false, 0",
                "'  ', false, 0",
                "off, false, 0",
                "OFF, false, 0",
                "on, true, -1",
                " On , true, -1",
                "1, true, 1048576",
                "40, true, 41943040",
                "256, true, 268435456"
            },
            nullValues = "null")
    void parsesOffOnAndMiB(String value, boolean on, long budget) {
        assertThat(L2Prefetch.parse(value)).isEqualTo(new L2Prefetch(on, budget));
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "257", "-4", "40MiB", "yes", "1.5"})
    void rejectsAnythingElseNamingTheVariable(String value) {
        assertThatThrownBy(() -> L2Prefetch.parse(value))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(L2Prefetch.ENV)
                .hasMessageContaining("'" + value + "'")
                .hasMessageContaining("off, on or a number of MiB");
    }

    /**
     * 8B geometry in FP8 (o 4096 x 4096 bytes = 16 MiB; gate/up 2 x 14336 rows of 4096 bytes): the spans a layer for a
     * budget in MiB (-1: on, the o weight only; 0: off) -> the bytes of o, and the rows taken from each gate/up half.
     */
    @ParameterizedTest(name = "budget {0} MiB -> o {1} bytes, {2} rows a half")
    @CsvSource({
        "0, -1, 0", // off: nothing
        "-1, 16777216, 0", // on: o whole, nothing after it
        "8, 8388608, 0", // o cut to the budget
        "16, 16777216, 0", // o exactly: no room left for rows
        "40, 16777216, 3072", // 24 MiB left: 3072 rows of 4 KiB a half
        "200, 16777216, 14336", // capped at the half's rows
    })
    void fp8LayerOfAnEightBModel(int mib, long oBytes, long rows) {
        L2Prefetch p = mib == 0 ? L2Prefetch.OFF : new L2Prefetch(true, mib < 0 ? L2Prefetch.O_ONLY : mib * MIB);
        List<L2Prefetch.Span> spans = p.layer(O, 16 * MIB, GU, 14336, 4096);
        if (oBytes < 0) {
            assertThat(spans).isEmpty();
            return;
        }
        assertThat(spans.get(0)).isEqualTo(new L2Prefetch.Span(O, oBytes));
        if (rows == 0) {
            assertThat(spans).hasSize(1);
            return;
        }
        assertThat(spans)
                .containsExactly(
                        new L2Prefetch.Span(O, oBytes),
                        new L2Prefetch.Span(GU, rows * 4096),
                        new L2Prefetch.Span(GU + 14336L * 4096, rows * 4096));
        assertThat(spans.stream().mapToLong(L2Prefetch.Span::bytes).sum()).isLessThanOrEqualTo(mib * MIB);
    }

    @Test
    void aBlockWithoutGateUpOrWithRowsOffSixteenBytesGetsTheOWeightOnly() {
        L2Prefetch p = new L2Prefetch(true, 40 * MIB);
        assertThat(p.layer(O, 16 * MIB, 0, 0, 0)).containsExactly(new L2Prefetch.Span(O, 16 * MIB));
        assertThat(p.layer(O, 16 * MIB, GU, 100, 4100)).containsExactly(new L2Prefetch.Span(O, 16 * MIB));
    }

    @Test
    void lengthsAreCutToSixteenBytes() {
        assertThat(new L2Prefetch(true, L2Prefetch.O_ONLY).layer(O, 1000, 0, 0, 0))
                .containsExactly(new L2Prefetch.Span(O, 992));
        assertThat(new L2Prefetch(true, 1000).layer(O, 4096, GU, 8, 16)).containsExactly(new L2Prefetch.Span(O, 992));
    }

    @Test
    void aSpanNeedsSixteenByteLengthsAndAlignment() {
        assertThatThrownBy(() -> new L2Prefetch.Span(O + 8, 32)).hasMessageContaining("16-byte aligned");
        assertThatThrownBy(() -> new L2Prefetch.Span(O, 24)).hasMessageContaining("multiple of 16");
        assertThatThrownBy(() -> new L2Prefetch.Span(O, -16)).hasMessageContaining("multiple of 16");
        assertThat(new L2Prefetch.Span(O + 8, 0).bytes()).isZero();
    }
}
