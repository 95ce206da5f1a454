package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.runtime.model.WeightType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** TENSORLANE_GEMV, TENSORLANE_FUSED_NORM, TENSORLANE_ALLREDUCE_PUSH and TENSORLANE_FP8_GEMM together, and the benchmark's baseline choices. */
class KernelChoicesTest {
    @ParameterizedTest(name = "TENSORLANE_FUSED_NORM=''{0}'' -> {1}")
    @CsvSource(
            delimiter = ';',
            value = {"on; true", "ON; true", " off ; false", "Off; false", "; true", "  ; true"})
    void fusedNormIsOnUnlessSwitchedOff(String value, boolean fused) {
        KernelChoices c = KernelChoices.parse(null, value, null, null);
        assertThat(c.fusedNorm()).isEqualTo(fused);
        assertThat(c.tiledPrefill()).isTrue();
        assertThat(c.gemv()).isEqualTo(GemvPolicy.DEFAULT);
        assertThat(c.push()).isFalse();
    }

    @ParameterizedTest(name = "TENSORLANE_ALLREDUCE_PUSH=''{0}'' -> {1}")
    @CsvSource(
            delimiter = ';',
            value = {"on; true", " ON ; true", "off; false", "; false", "  ; false"})
    void pushIsOffUnlessSwitchedOn(String value, boolean push) {
        KernelChoices c = KernelChoices.parse(null, null, value, null);
        assertThat(c.push()).isEqualTo(push);
        assertThat(c.fusedNorm()).isTrue();
    }

    @Test
    void aBadPushValueIsRefusedWithTheChoices() {
        assertThatThrownBy(() -> KernelChoices.parse(null, null, "push", null))
                .hasMessageContaining(KernelChoices.PUSH_ENV + "='push'")
                .hasMessageContaining("expected on or off");
    }

    @ParameterizedTest(name = "TENSORLANE_FUSED_NORM=''{0}'' is refused")
    @ValueSource(strings = {"yes", "1", "true", "of"})
    void otherValuesAreRefusedWithTheChoices(String value) {
        assertThatThrownBy(() -> KernelChoices.parse(null, value, null, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(KernelChoices.FUSED_NORM_ENV + "='" + value + "'")
                .hasMessageContaining("expected on or off");
    }

    @ParameterizedTest(name = "TENSORLANE_SPEC_GRAPHS=''{0}'' -> {1}")
    @CsvSource(
            delimiter = ';',
            value = {"on; true", " ON ; true", "off; false", "OFF; false", "; true", "  ; true"})
    void specGraphsAreOnUnlessSwitchedOff(String value, boolean on) {
        assertThat(KernelChoices.specGraphs(value)).isEqualTo(on);
    }

    @Test
    void aBadSpecGraphsValueIsRefusedNamingTheVariable() {
        assertThatThrownBy(() -> KernelChoices.specGraphs("eager"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(KernelChoices.SPEC_GRAPHS_ENV + "='eager'")
                .hasMessageContaining("expected on or off");
    }

    @ParameterizedTest(name = "TENSORLANE_MOE_FP8_GEMM=''{0}'' -> {1}")
    @CsvSource(
            delimiter = ';',
            value = {"on; true", " On ; true", "off; false", " OFF ; false", "; true", "  ; true"})
    void theGroupedFp8ExpertGemmIsOnUnlessSwitchedOff(String value, boolean on) {
        KernelChoices c = KernelChoices.parse(null, "off", null, null, "off", null)
                .withMoeFusedDecode("step")
                .withMoeFp8Gemm(value);
        assertThat(c.moeFp8Gemm()).isEqualTo(on);
        assertThat(c.moeFusedDecode()).isEqualTo(MoeFusedDecode.STEP); // the other choices kept
        assertThat(c.fusedNorm()).isFalse();
        assertThat(c.moeGroupedGemm()).isFalse();
        // and the other wither keeps this one
        assertThat(c.withMoeFusedDecode("off").moeFp8Gemm()).isEqualTo(on);
    }

    @Test
    void theGroupedFp8ExpertGemmIsOnWhenParsedAndABadValueIsRefusedNamingTheVariable() {
        assertThat(KernelChoices.parse(null, null, null, null).moeFp8Gemm()).isTrue();
        assertThatThrownBy(() -> KernelChoices.BASELINE.withMoeFp8Gemm("dequant"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(KernelChoices.MOE_FP8_GEMM_ENV + "='dequant'")
                .hasMessageContaining("expected on or off");
    }

    @ParameterizedTest(name = "TENSORLANE_PDL=''{0}'' -> {1}")
    @CsvSource(
            delimiter = ';',
            value = {"on; true", " ON ; true", "off; false", "OFF; false", "; true", "  ; true"})
    void programmaticLaunchIsOnUnlessSwitchedOff(String value, boolean on) {
        assertThat(KernelChoices.programmaticLaunch(value)).isEqualTo(on);
    }

    @ParameterizedTest(name = "TENSORLANE_DRAFT_CHAIN=''{0}'' -> {1}")
    @CsvSource(
            delimiter = ';',
            value = {"on; true", " ON ; true", "off; false", "OFF; false", "; true", "  ; true"})
    void draftChainsAreOnUnlessSwitchedOff(String value, boolean on) {
        assertThat(KernelChoices.draftChain(value)).isEqualTo(on);
    }

    @Test
    void aBadDraftChainValueIsRefusedNamingTheVariable() {
        assertThatThrownBy(() -> KernelChoices.draftChain("yes"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(KernelChoices.DRAFT_CHAIN_ENV + "='yes'");
    }

    @Test
    void aBadPdlValueIsRefusedNamingTheVariable() {
        assertThatThrownBy(() -> KernelChoices.programmaticLaunch("auto"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(KernelChoices.PDL_ENV + "='auto'")
                .hasMessageContaining("expected on or off");
    }

    @Test
    void gemvComesFromItsOwnVariable() {
        assertThat(KernelChoices.parse("o,down", "off", null, null).gemv()).hasToString("o,down");
        assertThatThrownBy(() -> KernelChoices.parse("lm_head", null, null, null))
                .hasMessageContaining(GemvPolicy.ENV);
    }

    @Test
    void theBaselineIsTheEarlierKernelsEverywhere() {
        assertThat(KernelChoices.BASELINE.tiledPrefill()).isFalse();
        assertThat(KernelChoices.BASELINE.gemv()).isEqualTo(GemvPolicy.OFF);
        assertThat(KernelChoices.BASELINE.fusedNorm()).isFalse();
        assertThat(KernelChoices.BASELINE.push()).isFalse();
        assertThat(KernelChoices.BASELINE.fp8TensorMinTokens()).isZero();
        assertThat(KernelChoices.BASELINE.moeGroupedGemm()).isFalse();
        assertThat(KernelChoices.BASELINE.moeFp8Gemm()).isFalse();
    }

    @ParameterizedTest(name = "TENSORLANE_MOE_FUSED_DECODE=''{0}'' -> {1}")
    @CsvSource(
            delimiter = ';',
            value = {"; AUTO", "  ; AUTO", "auto; AUTO", "off; OFF", "on; ON", " ON ; ON", "step; STEP", " Step ; STEP"
            })
    void moeFusedDecodeIsAutoUnlessSwitched(String value, MoeFusedDecode mode) {
        KernelChoices c =
                KernelChoices.parse(null, "off", null, null, "off", null).withMoeFusedDecode(value);
        assertThat(c.moeFusedDecode()).isEqualTo(mode);
        assertThat(c.fusedNorm()).isFalse(); // the other choices kept
        assertThat(c.moeGroupedGemm()).isFalse();
        assertThat(c.tiledPrefill()).isTrue();
        assertThat(KernelChoices.parse(null, null, null, null).moeFusedDecode()).isEqualTo(MoeFusedDecode.AUTO);
        assertThat(KernelChoices.BASELINE.moeFusedDecode()).isEqualTo(MoeFusedDecode.OFF);
    }

    @ParameterizedTest(name = "{0}, FP8 experts {1} -> fused up to {2} tokens, residual folded {3}")
    @CsvSource({
        // auto: one-token steps of bf16/fp16 experts (batch 1 faster fused on the H200, batch 8 slower), the residual
        // folded in (batch 1 faster on H100 and H200, 2026-12-06); FP8 experts wait for a model run
        "AUTO, false, 1, true",
        "AUTO, true, 0, true",
        "ON, false, 2147483647, false",
        "ON, true, 2147483647, false",
        "OFF, false, 0, false",
        "OFF, true, 0, false",
        // step: one-token steps of any experts, the residual stream folded through the block
        "STEP, false, 1, true",
        "STEP, true, 1, true"
    })
    void moeFusedDecodeTakesStepsUpTo(MoeFusedDecode mode, boolean fp8, int maxTokens, boolean folds) {
        assertThat(mode.maxTokens(fp8)).isEqualTo(maxTokens);
        assertThat(mode.foldsResidual()).isEqualTo(folds);
        assertThat(mode.foldsNorm()).isEqualTo(mode == MoeFusedDecode.STEP); // the norm + router kernel: step only
        // a block folds the residual only where its one-token steps take the fused pairs: not FP8 experts under auto
        boolean fusable = folds && MoeMlp.fusesOneToken(mode.maxTokens(fp8), 17);
        assertThat(fusable).isEqualTo(folds && !(mode == MoeFusedDecode.AUTO && fp8));
    }

    @Test
    void aBadMoeFusedDecodeValueIsRefusedNamingTheVariable() {
        assertThatThrownBy(() -> KernelChoices.parse(null, null, null, null).withMoeFusedDecode("fused"))
                .hasMessageContaining(KernelChoices.MOE_FUSED_DECODE_ENV + "='fused'")
                .hasMessageContaining("expected auto, on, off or step");
    }

    @ParameterizedTest(name = "TENSORLANE_MOE_GROUPED_GEMM=''{0}'' -> {1}")
    @CsvSource(
            delimiter = ';',
            value = {"; true", "off; false", " OFF ; false", "on; true"})
    void moeGroupedGemmIsOnUnlessSwitchedOff(String value, boolean on) {
        assertThat(KernelChoices.parse(null, null, null, null, value).moeGroupedGemm())
                .isEqualTo(on);
        assertThat(KernelChoices.parse(null, null, null, null).moeGroupedGemm()).isTrue();
    }

    @ParameterizedTest(name = "TENSORLANE_GEMV_MMA=''{0}'': dense {1}, FP8 block {2}, block rows {3}, row {4}")
    @CsvSource(
            delimiter = ';',
            value = {
                "; false; true; true; false",
                "auto; false; true; true; false",
                " AUTO ; false; true; true; false",
                "off; false; false; false; false",
                " On ; true; true; true; true",
                "on; true; true; true; true"
            })
    void gemvMmaTakesTheTensorCoresByWeightType(
            String value, boolean dense, boolean block, boolean blockRows, boolean row) {
        GemvMma m = KernelChoices.parse(null, null, null, null, null, value).gemvMma();
        assertThat(m.uses(WeightType.DENSE)).isEqualTo(dense);
        assertThat(m.uses(WeightType.FP8_BLOCK)).isEqualTo(block);
        assertThat(m.uses(WeightType.FP8_BLOCK_ROWS)).isEqualTo(blockRows);
        assertThat(m.uses(WeightType.FP8_ROW)).isEqualTo(row);
    }

    @ParameterizedTest(name = "TENSORLANE_FUSED_GEMV=''{0}'' -> {1}")
    @CsvSource(
            delimiter = ';',
            value = {"; true", "on; true", " OFF ; false", "off; false"})
    void fusedGemvIsOnUnlessSwitchedOffAndNotInTheBaseline(String value, boolean on) {
        assertThat(KernelChoices.parse(null, null, null, null, null, null, value)
                        .fusedGemv())
                .isEqualTo(on);
        assertThat(KernelChoices.BASELINE.fusedGemv()).isFalse();
        assertThatThrownBy(() -> KernelChoices.parse(null, null, null, null, null, null, "fused"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("TENSORLANE_FUSED_GEMV='fused'");
    }

    @Test
    void gemvMmaDefaultsToAutoAndTheBaselineIsOff() {
        assertThat(KernelChoices.parse(null, null, null, null).gemvMma()).isEqualTo(GemvMma.AUTO);
        for (WeightType t : WeightType.values()) {
            assertThat(KernelChoices.BASELINE.gemvMma().uses(t)).as(t.name()).isFalse();
        }
        assertThatThrownBy(() -> KernelChoices.parse(null, null, null, null, null, "tensor"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("TENSORLANE_GEMV_MMA='tensor'")
                .hasMessageContaining("auto, on or off");
    }

    @Test
    void badMoeGroupedGemmValuesAreRefused() {
        assertThatThrownBy(() -> KernelChoices.parse(null, null, null, null, "grouped"))
                .hasMessageContaining(KernelChoices.MOE_GROUPED_GEMM_ENV + "='grouped'")
                .hasMessageContaining("expected on or off");
    }

    @ParameterizedTest(name = "TENSORLANE_FP8_GEMM=''{0}'' -> {1}")
    @CsvSource(
            delimiter = ';',
            value = {"; 2", " ; 2", "auto; 2", " AUTO ; 2", "off; 0", "Off; 0", "1; 1", " 16 ; 16"})
    void fp8TensorCoresFromAThreshold(String value, int min) {
        assertThat(KernelChoices.parse(null, null, null, value).fp8TensorMinTokens())
                .isEqualTo(min);
    }

    @ParameterizedTest(name = "TENSORLANE_FP8_GEMM=''{0}'' is refused")
    @ValueSource(strings = {"0", "-3", "on", "2.5", "tensor"})
    void badFp8GemmValuesAreRefusedWithTheChoices(String value) {
        assertThatThrownBy(() -> KernelChoices.parse(null, null, null, value))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(KernelChoices.FP8_GEMM_ENV + "='" + value + "'")
                .hasMessageContaining("expected auto, off or a number of tokens >= 1");
    }
}
