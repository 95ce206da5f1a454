package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.runtime.llm.L2Prefetch.LayerWeights;
import io.tensorlane.runtime.llm.L2Prefetch.Part;
import io.tensorlane.runtime.llm.L2Prefetch.Span;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class L2PrefetchTest {
    private static final long MIB = 1L << 20;
    private static final long O = 0x7f0000000000L;
    private static final long GU = 0x7f1000000000L;
    private static final long QKV = 0x7f2000000000L;
    private static final long ROW = 4096;
    private static final int INTER = 14336;
    /** 8B geometry in FP8: o 4096 x 4096 bytes, gate/up 2 x 14336 rows of 4 KiB, the next layer's qkv 6144 rows. */
    private static final LayerWeights FP8_8B =
            new LayerWeights(new Span(O, 16 * MIB), GU, INTER, ROW, new Span(QKV, 24 * MIB));

    @ParameterizedTest(name = "''{0}'' -> {1} @ {2}")
    @CsvSource(
            value = {
                "null, '', 0",
                "'', '', 0",
                "'  ', '', 0",
                "off, '', 0",
                "OFF, '', 0",
                "on, O, -1",
                " On , O, -1",
                "1, O MLP, 1",
                "40, O MLP, 40",
                "256, O MLP, 256",
                "o, O, -1",
                "o+qkv, O QKV, -1",
                "qkv+o@48, QKV O, 48",
                "O+MLP+QKV@56, O MLP QKV, 56",
                "mlp@8, MLP, 8"
            },
            nullValues = "null")
    void parsesEveryForm(String value, String parts, int mib) {
        List<Part> want = parts.isEmpty()
                ? List.of()
                : java.util.Arrays.stream(parts.split(" ")).map(Part::valueOf).toList();
        long budget = mib < 0 ? L2Prefetch.UNLIMITED : mib * MIB;
        assertThat(L2Prefetch.parse(value)).isEqualTo(new L2Prefetch(want, budget));
        assertThat(L2Prefetch.parse(value).on()).isEqualTo(!want.isEmpty());
    }

    @ParameterizedTest
    @CsvSource(
            value = {
                "0; a budget is a number of MiB",
                "257; a budget is a number of MiB",
                "-4; unknown part '-4'",
                "40MiB; unknown part '40mib'",
                "yes; unknown part 'yes'",
                "1.5; unknown part '1.5'",
                "o+; unknown part ''",
                "@40; unknown part ''",
                "o+o; part 'o' twice",
                "o+mlp; mlp needs a budget",
                "o@x; a budget is a number of MiB"
            },
            delimiter = ';')
    void rejectsAnythingElseNamingTheVariableAndWhy(String value, String why) {
        assertThatThrownBy(() -> L2Prefetch.parse(value))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(L2Prefetch.ENV + "='" + value + "'")
                .hasMessageContaining(why)
                .hasMessageContaining("expected off, on, a number of MiB, or parts o, mlp, qkv");
    }

    /**
     * The spans of the 8B FP8 layer for a setting: the o bytes, the rows taken from each gate/up half, the next qkv's
     * bytes, in the order the parts name them.
     */
    @ParameterizedTest(name = "{0} -> o {1}, rows {2}, qkv {3}")
    @CsvSource({
        "off, 0, 0, 0",
        "on, 16777216, 0, 0", // o whole, nothing after it
        "o@8, 8388608, 0, 0", // o cut to the budget
        "16, 16777216, 0, 0", // o exactly: no room left for rows
        "40, 16777216, 3072, 0", // 24 MiB left: 3072 rows of 4 KiB a half
        "200, 16777216, 14336, 0", // capped at the half's rows
        "o+qkv, 16777216, 0, 25165824", // both whole
        "o+qkv@30, 16777216, 0, 14680064", // qkv cut to the 14 MiB left
        "o+qkv+mlp@48, 16777216, 1024, 25165824", // qkv whole, then 8 MiB of rows
    })
    void fp8LayerOfAnEightBModel(String setting, long oBytes, long rows, long qkvBytes) {
        L2Prefetch p = L2Prefetch.parse(setting);
        List<Span> spans = p.layer(FP8_8B);
        List<Span> want = new java.util.ArrayList<>();
        for (Part part : p.parts()) {
            switch (part) {
                case O -> want.add(new Span(O, oBytes));
                case QKV -> want.add(new Span(QKV, qkvBytes));
                case MLP -> {
                    if (rows > 0) {
                        want.add(new Span(GU, rows * ROW));
                        want.add(new Span(GU + INTER * ROW, rows * ROW));
                    }
                }
            }
        }
        want.removeIf(s -> s.bytes() == 0);
        assertThat(spans).containsExactlyElementsOf(want);
        assertThat(spans.size()).isLessThanOrEqualTo(L2PrefetchKernel.MAX_SPANS);
        assertThat(spans.stream().mapToLong(Span::bytes).sum()).isLessThanOrEqualTo(p.budget());
    }

    @Test
    void theQkvComesFirstWhenNamedFirstAndTheLastLayerHasNone() {
        assertThat(L2Prefetch.parse("qkv+o@30").layer(FP8_8B))
                .containsExactly(new Span(QKV, 24 * MIB), new Span(O, 6 * MIB));
        LayerWeights last = new LayerWeights(new Span(O, 16 * MIB), GU, INTER, ROW, Span.NONE);
        assertThat(L2Prefetch.parse("o+qkv").layer(last)).containsExactly(new Span(O, 16 * MIB));
    }

    @Test
    void aBlockWithoutGateUpOrWithRowsOffSixteenBytesGetsNoRows() {
        L2Prefetch p = L2Prefetch.parse("o+mlp@40");
        LayerWeights moe = new LayerWeights(new Span(O, 16 * MIB), 0, 0, 0, Span.NONE);
        assertThat(p.layer(moe)).containsExactly(new Span(O, 16 * MIB));
        LayerWeights odd = new LayerWeights(new Span(O, 16 * MIB), GU, 100, 4100, Span.NONE);
        assertThat(p.layer(odd)).containsExactly(new Span(O, 16 * MIB));
    }

    @Test
    void lengthsAreCutToSixteenBytes() {
        LayerWeights small = new LayerWeights(new Span(O, 4096), GU, 8, 16, Span.NONE);
        assertThat(new L2Prefetch(List.of(Part.O, Part.MLP), 1000).layer(small)).containsExactly(new Span(O, 992));
    }

    @Test
    void aSpanNeedsSixteenByteLengthsAndAlignment() {
        assertThatThrownBy(() -> new Span(O + 8, 32)).hasMessageContaining("16-byte aligned");
        assertThatThrownBy(() -> new Span(O, 24)).hasMessageContaining("multiple of 16");
        assertThatThrownBy(() -> new Span(O, -16)).hasMessageContaining("multiple of 16");
        assertThat(new Span(O + 8, 0).bytes()).isZero();
    }
}
