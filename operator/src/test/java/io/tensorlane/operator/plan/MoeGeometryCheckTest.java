package io.tensorlane.operator.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.EngineSpec;
import io.tensorlane.api.v1alpha1.ModelGeometry;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.operator.engine.EngineProfiles;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Mixture-of-Experts geometry × TP: TP splits every expert, so it must divide the expert intermediate size. */
class MoeGeometryCheckTest {
    static final String W = "spec.model.geometry";

    record Case(
            String name,
            int layers,
            int heads,
            int kv,
            Integer intermediate,
            Integer experts,
            Integer topK,
            Integer expertInter,
            Integer moeLayers,
            int tp,
            List<String> expected) {
        @Override
        public String toString() {
            return name;
        }

        ModelGeometry geometry() {
            ModelGeometry g = new ModelGeometry();
            g.layers = layers;
            g.hiddenSize = 2048;
            g.attentionHeads = heads;
            g.kvHeads = kv;
            g.headDim = 128;
            g.vocabSize = 151936;
            g.intermediateSize = intermediate;
            g.experts = experts;
            g.expertsPerToken = topK;
            g.expertIntermediateSize = expertInter;
            g.moeLayers = moeLayers;
            return g;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                // Qwen3-30B-A3B: 768 / 8 = 96 per GPU
                new Case("Qwen3-30B-A3B TP 8", 48, 32, 4, 6144, 128, 8, 768, 48, 8, List.of()),
                new Case("Qwen3-30B-A3B TP 4", 48, 32, 4, 6144, 128, 8, 768, 48, 4, List.of()),
                // Mixtral-8x7B: 14336 / 8
                new Case("Mixtral-8x7B TP 8", 32, 32, 8, 14336, 8, 2, 14336, 32, 8, List.of()),
                // 1420-wide experts: TP 8 would leave 177.5 columns per GPU
                new Case(
                        "experts 1420 wide at TP 8",
                        24,
                        16,
                        16,
                        5632,
                        60,
                        4,
                        1420,
                        24,
                        8,
                        List.of("spec.parallelism.tensor 8 must divide " + W + ".expertIntermediateSize 1420 (each of "
                                + "the 60 experts is split across the GPUs: gate and up by columns, down by rows); use "
                                + "one of [1, 2, 4, 5]")),
                new Case(
                        "experts 1420 wide at TP 3 (also heads)",
                        24,
                        16,
                        16,
                        5632,
                        60,
                        4,
                        1420,
                        24,
                        3,
                        List.of(
                                "spec.parallelism.tensor 3 must divide " + W
                                        + ".attentionHeads 16 (query heads are split across the GPUs); use one of "
                                        + "[1, 2, 4, 8]",
                                "spec.parallelism.tensor 3 and " + W + ".kvHeads 16 must divide one another (key/value "
                                        + "heads are split when TP divides them and replicated when TP is a multiple "
                                        + "of them); use one of [1, 2, 4, 8]",
                                "spec.parallelism.tensor 3 must divide " + W + ".expertIntermediateSize 1420 (each of "
                                        + "the 60 experts is split across the GPUs: gate and up by columns, down by "
                                        + "rows); use one of [1, 2, 4, 5]")),
                // every layer MoE: the unused dense intermediate_size is not checked
                new Case(
                        "dense size that TP does not divide, no dense layer", 4, 8, 8, 1001, 8, 2, 64, 4, 8, List.of()),
                // one dense layer (mlp_only_layers): its MLP is split too
                new Case(
                        "dense size that TP does not divide, one dense layer",
                        4,
                        8,
                        8,
                        1001,
                        8,
                        2,
                        64,
                        3,
                        8,
                        List.of("spec.parallelism.tensor 8 must divide " + W + ".intermediateSize 1001 (the MLP is "
                                + "split across the GPUs; 1 of the 4 layers are dense)")),
                new Case(
                        "top-k above the experts",
                        4,
                        8,
                        8,
                        1024,
                        8,
                        9,
                        64,
                        null,
                        2,
                        List.of(W + ".expertsPerToken 9 is more than " + W + ".experts 8 (each token is routed to that "
                                + "many of the experts)")),
                new Case(
                        "experts without top-k and expert size",
                        4,
                        8,
                        8,
                        1024,
                        8,
                        null,
                        null,
                        null,
                        2,
                        List.of(
                                W + ".expertsPerToken is required with " + W + ".experts (num_experts_per_tok)",
                                W + ".expertIntermediateSize is required with " + W
                                        + ".experts (moe_intermediate_size; Mixtral: intermediate_size)")),
                new Case(
                        "top-k without experts",
                        4,
                        8,
                        8,
                        1024,
                        null,
                        2,
                        null,
                        null,
                        2,
                        List.of(W + ".expertsPerToken is set but " + W + ".experts is not (a Mixture of Experts needs "
                                + "experts, expertsPerToken and expertIntermediateSize)")),
                new Case(
                        "more MoE layers than layers",
                        4,
                        8,
                        8,
                        1024,
                        8,
                        2,
                        64,
                        5,
                        2,
                        List.of(W + ".moeLayers 5 is more than " + W + ".layers 4")),
                new Case(
                        "zero experts",
                        4,
                        8,
                        8,
                        1024,
                        0,
                        2,
                        64,
                        null,
                        2,
                        List.of(W + ".experts must be > 0 when set, got 0")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void moeGeometryAtTp(Case c) {
        assertThat(GeometryCheck.problems(c.geometry(), c.tp(), W)).containsExactlyElementsOf(c.expected());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void theSpecValidatorReportsTheSameProblemsForSglang(Case c) {
        var spec = Fixtures.llama8b(c.tp());
        spec.engine = new EngineSpec();
        spec.engine.type = EngineSpec.EngineType.SGLang;
        spec.engine.image = "sglang:test";
        spec.model.geometry = c.geometry();
        String message = SpecValidator.validate(spec, EngineProfiles::problem);
        assertThat(message).isEqualTo(c.expected().isEmpty() ? null : String.join("; ", c.expected()));
    }

    /** The Tensorlane engine: the same problems as SGLang for bf16, fp16 and FP8 experts. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void theTensorlaneEngineTakesBf16Fp16AndFp8Experts(Case c) {
        var spec = Fixtures.llama8b(c.tp());
        assertThat(spec.engine.type).as("the default engine").isEqualTo(EngineSpec.EngineType.Tensorlane);
        spec.model.geometry = c.geometry();
        String geometry = c.expected().isEmpty() ? null : String.join("; ", c.expected());
        for (DType dtype : List.of(DType.bf16, DType.fp16, DType.fp8)) {
            spec.model.dtype = dtype;
            assertThat(SpecValidator.validate(spec, EngineProfiles::problem))
                    .as(dtype.name())
                    .isEqualTo(geometry);
        }
    }

    /** The runtime's router takes at most 512 experts and top-32: beyond is InvalidSpec for Tensorlane, not for SGLang. */
    @Test
    void theRoutersLimitsAreTheTensorlaneEnginesOnly() {
        var spec = Fixtures.llama8b(8);
        spec.model.geometry = cases().findFirst().orElseThrow().geometry();
        record Row(int experts, int topK, String expected) {}
        List<Row> rows = List.of(
                new Row(512, 32, null),
                new Row(
                        513,
                        8,
                        "spec.model.geometry.experts 513: the Tensorlane engine's router takes at most 512 "
                                + "experts; use engine SGLang or VLLM"),
                new Row(
                        512,
                        33,
                        "spec.model.geometry.expertsPerToken 33: the Tensorlane engine's router takes at "
                                + "most 32 experts per token; use engine SGLang or VLLM"));
        for (Row r : rows) {
            spec.engine = new EngineSpec();
            spec.model.geometry.experts = r.experts();
            spec.model.geometry.expertsPerToken = r.topK();
            assertThat(SpecValidator.validate(spec, EngineProfiles::problem))
                    .as(r.toString())
                    .isEqualTo(r.expected());
            spec.engine.type = EngineSpec.EngineType.SGLang;
            spec.engine.image = "sglang:test";
            assertThat(SpecValidator.validate(spec, EngineProfiles::problem))
                    .as("SGLang " + r)
                    .isNull();
        }
    }

    @Test
    void fp8ExpertsAndFp8DenseModelsAreValidForEveryEngine() {
        var spec = Fixtures.llama8b(8);
        spec.model.dtype = DType.fp8;
        assertThat(SpecValidator.validate(spec, EngineProfiles::problem))
                .as("a dense FP8 model on the Tensorlane engine")
                .isNull();
        spec.model.geometry = cases().findFirst().orElseThrow().geometry();
        assertThat(SpecValidator.validate(spec, EngineProfiles::problem))
                .as("FP8 experts on the Tensorlane engine")
                .isNull();
        for (EngineSpec.EngineType python : List.of(EngineSpec.EngineType.SGLang, EngineSpec.EngineType.VLLM)) {
            spec.engine = new EngineSpec();
            spec.engine.type = python;
            spec.engine.image = "engine:test";
            assertThat(SpecValidator.validate(spec, EngineProfiles::problem))
                    .as(python.name())
                    .isNull();
        }
    }

    @Test
    void theActivationsOfAMoeLayerAreTopKExpertsWide() {
        ModelGeometry qwen3 = cases().findFirst().orElseThrow().geometry();
        assertThat(qwen3.activationIntermediateSize()).as("8 × 768").isEqualTo(6144);
        ModelGeometry oneDense = cases().filter(c -> c.name().endsWith("one dense layer"))
                .findFirst()
                .orElseThrow()
                .geometry();
        assertThat(oneDense.activationIntermediateSize())
                .as("the dense 1001 > 2 × 64")
                .isEqualTo(1001);
        oneDense.moeLayers = null;
        assertThat(oneDense.activationIntermediateSize())
                .as("no dense layer: 2 × 64")
                .isEqualTo(128);
    }
}
