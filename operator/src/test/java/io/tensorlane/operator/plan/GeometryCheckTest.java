package io.tensorlane.operator.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.ModelGeometry;
import io.tensorlane.operator.engine.EngineProfiles;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Geometry × TP: which splits the engines can run, and the message for the ones they cannot. */
class GeometryCheckTest {
    static final String W = "spec.model.geometry";

    record Case(
            String name,
            Integer layers,
            Integer hidden,
            Integer heads,
            Integer kv,
            Integer headDim,
            Integer intermediate,
            int tp,
            List<String> expected) {
        @Override
        public String toString() {
            return name;
        }

        ModelGeometry geometry() {
            ModelGeometry g = new ModelGeometry();
            g.layers = layers;
            g.hiddenSize = hidden;
            g.attentionHeads = heads;
            g.kvHeads = kv;
            g.headDim = headDim;
            g.intermediateSize = intermediate;
            g.vocabSize = 128256;
            return g;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                // real models
                new Case("Llama-3.3-70B TP 8 (KV heads split)", 80, 8192, 64, 8, 128, 28672, 8, List.of()),
                new Case("Llama-3.1-8B TP 2", 32, 4096, 32, 8, 128, 14336, 2, List.of()),
                new Case("Qwen2.5-7B 28 heads / 4 KV at TP 4", 28, 3584, 28, 4, null, 18944, 4, List.of()),
                new Case(
                        "Qwen2.5-7B 4 KV heads at TP 8: heads 28 not divisible",
                        28,
                        3584,
                        28,
                        4,
                        null,
                        18944,
                        8,
                        List.of("spec.parallelism.tensor 8 must divide " + W
                                + ".attentionHeads 28 (query heads are split across the "
                                + "GPUs); use one of [1, 2, 4, 7]")),
                new Case("1 KV head (MQA) replicated at TP 8", 32, 4096, 32, 1, 128, 11008, 8, List.of()),
                new Case("2 KV heads replicated at TP 8", 32, 4096, 32, 2, 128, 11008, 8, List.of()),
                new Case("MHA (kv = heads) at TP 4", 32, 4096, 32, 32, null, null, 4, List.of()),
                new Case(
                        "Gemma-style headDim × heads ≠ hidden is fine when headDim is set",
                        28,
                        3072,
                        16,
                        16,
                        256,
                        24576,
                        2,
                        List.of()),
                new Case("TP 1 takes any sane geometry", 1, 64, 4, 2, null, 100, 1, List.of()),
                // mistakes
                new Case(
                        "more KV heads than heads",
                        32,
                        4096,
                        8,
                        32,
                        128,
                        14336,
                        1,
                        List.of(W + ".kvHeads 32 is more than " + W
                                + ".attentionHeads 8 (each key/value head serves a group of " + "query heads)")),
                new Case(
                        "KV heads do not divide heads",
                        32,
                        4096,
                        32,
                        6,
                        128,
                        14336,
                        1,
                        List.of(W + ".kvHeads 6 must divide " + W
                                + ".attentionHeads 32 (query heads are grouped evenly over the " + "key/value heads)")),
                new Case(
                        "hidden not a multiple of heads without headDim",
                        32,
                        4000,
                        48,
                        8,
                        null,
                        14336,
                        1,
                        List.of(W + ".hiddenSize 4000 is not a multiple of " + W
                                + ".attentionHeads 48, so the head dimension is " + "not whole; set " + W
                                + ".headDim (head_dim in config.json)")),
                new Case(
                        "odd head dimension",
                        32,
                        4096,
                        32,
                        8,
                        127,
                        14336,
                        1,
                        List.of(W + ".headDim 127 must be even (rotary embeddings rotate pairs)")),
                new Case(
                        "TP 4 with 6 KV heads of 24 heads: neither divides",
                        32,
                        3072,
                        24,
                        6,
                        null,
                        8192,
                        4,
                        List.of(
                                "spec.parallelism.tensor 4 and " + W
                                        + ".kvHeads 6 must divide one another (key/value heads are split "
                                        + "when TP divides them and replicated when TP is a multiple of them); use one of [1, 2, 3, 6]")),
                new Case(
                        "intermediate size not divisible by TP",
                        32,
                        4096,
                        32,
                        8,
                        128,
                        14337,
                        2,
                        List.of("spec.parallelism.tensor 2 must divide " + W
                                + ".intermediateSize 14337 (the MLP is split across the " + "GPUs)")),
                new Case(
                        "several problems at once, each named",
                        32,
                        4096,
                        30,
                        4,
                        null,
                        11001,
                        4,
                        List.of(
                                W + ".kvHeads 4 must divide " + W
                                        + ".attentionHeads 30 (query heads are grouped evenly over the key/value "
                                        + "heads)",
                                W + ".hiddenSize 4096 is not a multiple of " + W
                                        + ".attentionHeads 30, so the head dimension is not " + "whole; set " + W
                                        + ".headDim (head_dim in config.json)",
                                "spec.parallelism.tensor 4 must divide " + W
                                        + ".attentionHeads 30 (query heads are split across the GPUs); "
                                        + "use one of [1, 2, 3, 5, 6]",
                                "spec.parallelism.tensor 4 must divide " + W
                                        + ".intermediateSize 11001 (the MLP is split across the GPUs)")),
                new Case(
                        "missing and zero fields stop the ratios",
                        null,
                        4096,
                        0,
                        8,
                        null,
                        null,
                        2,
                        List.of(W + ".layers is required", W + ".attentionHeads must be > 0, got 0")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void geometryAtTp(Case c) {
        assertThat(GeometryCheck.problems(c.geometry(), c.tp(), W)).containsExactlyElementsOf(c.expected());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void theSpecValidatorReportsTheSameProblems(Case c) {
        var spec = Fixtures.llama8b(c.tp());
        spec.model.geometry = c.geometry();
        String message = SpecValidator.validate(spec, EngineProfiles::problem);
        if (c.expected().isEmpty()) {
            assertThat(message).isNull();
        } else {
            assertThat(message).isEqualTo(String.join("; ", c.expected()));
        }
    }

    @org.junit.jupiter.api.Test
    void aMissingGeometryIsNamed() {
        assertThat(GeometryCheck.problems(null, 2, "status.model"))
                .containsExactly("status.model is required (layers, hiddenSize, attentionHeads, kvHeads)");
    }
}
