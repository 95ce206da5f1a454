package io.tensorlane.operator.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.SpeculativeSpec;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What the validator says about draft-model speculation (the spec with the draft's facts filled in): a draft model
 * with the wrong method (no CEL rule says it at apply time: see SpeculativeSpec), a draft without a name, weight bytes or geometry, and a geometry the draft's
 * tensor parallelism cannot split (the Tensorlane runtime runs the draft at TP 1, SGLang and vLLM at the target's).
 */
class DraftValidationTest {
    record Case(String name, EngineType engine, int tp, Consumer<InferenceDeploymentSpec> change, String message) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        Consumer<InferenceDeploymentSpec> none = s -> {};
        return Stream.of(
                new Case("a draft model, Tensorlane TP 2", EngineType.Tensorlane, 2, none, null),
                new Case("a draft model, SGLang TP 2", EngineType.SGLang, 2, none, null),
                new Case("a draft model, vLLM TP 8", EngineType.VLLM, 8, none, null),
                new Case(
                        "method draft without a draft model",
                        EngineType.Tensorlane,
                        1,
                        s -> s.serving.speculative.draftModel = null,
                        "spec.serving.speculative." + SpeculativeSpec.DRAFT_NEEDS_MODEL),
                new Case(
                        "method ngram with a draft model",
                        EngineType.VLLM,
                        1,
                        s -> s.serving.speculative.method = SpeculativeSpec.Method.ngram,
                        "spec.serving.speculative." + SpeculativeSpec.NGRAM_TAKES_NO_MODEL),
                new Case(
                        "a draft model without a name",
                        EngineType.Tensorlane,
                        1,
                        s -> s.serving.speculative.draftModel.name = " ",
                        "spec.serving.speculative.draftModel.name is required"),
                new Case(
                        "a draft model whose weight bytes are not known",
                        EngineType.SGLang,
                        1,
                        s -> s.serving.speculative.draftModel.weightBytes = null,
                        "spec.serving.speculative.draftModel.weightBytes is required and must be > 0"),
                new Case(
                        "a draft model without a geometry",
                        EngineType.Tensorlane,
                        1,
                        s -> s.serving.speculative.draftModel.geometry = null,
                        "spec.serving.speculative.draftModel.geometry is required"),
                new Case(
                        "6 draft heads: SGLang at TP 4 cannot split them",
                        EngineType.SGLang,
                        4,
                        DraftValidationTest::sixHeads,
                        "spec.parallelism.tensor 4 must divide spec.serving.speculative.draftModel.geometry"
                                + ".attentionHeads 6"),
                new Case(
                        "6 draft heads: the Tensorlane draft runs at TP 1",
                        EngineType.Tensorlane,
                        4,
                        s -> {
                            sixHeads(s);
                        },
                        null),
                new Case(
                        "disableByBatchSize 2 (the smallest), Tensorlane",
                        EngineType.Tensorlane,
                        1,
                        s -> s.serving.speculative.disableByBatchSize = SpeculativeSpec.MIN_DISABLE_BY_BATCH_SIZE,
                        null),
                new Case(
                        "disableByBatchSize 4096 (the largest), Tensorlane",
                        EngineType.Tensorlane,
                        2,
                        s -> s.serving.speculative.disableByBatchSize = SpeculativeSpec.MAX_DISABLE_BY_BATCH_SIZE,
                        null),
                new Case(
                        "disableByBatchSize 1 (speculation in no step), written past the schema",
                        EngineType.Tensorlane,
                        1,
                        s -> s.serving.speculative.disableByBatchSize = 1,
                        "spec.serving.speculative.disableByBatchSize must be 2..4096, got 1"),
                new Case(
                        "disableByBatchSize 0, written past the schema",
                        EngineType.Tensorlane,
                        1,
                        s -> s.serving.speculative.disableByBatchSize = 0,
                        "spec.serving.speculative.disableByBatchSize must be 2..4096, got 0"),
                new Case(
                        "disableByBatchSize 4097, written past the schema",
                        EngineType.Tensorlane,
                        1,
                        s -> s.serving.speculative.disableByBatchSize = 4097,
                        "spec.serving.speculative.disableByBatchSize must be 2..4096, got 4097"),
                new Case(
                        "disableByBatchSize with method ngram",
                        EngineType.Tensorlane,
                        1,
                        s -> {
                            s.serving.speculative.method = SpeculativeSpec.Method.ngram;
                            s.serving.speculative.draftModel = null;
                            s.serving.speculative.disableByBatchSize = 8;
                        },
                        "spec.serving.speculative." + SpeculativeSpec.NGRAM_TAKES_NO_BATCH_LIMIT),
                new Case(
                        "draft kvHeads more than its heads",
                        EngineType.Tensorlane,
                        1,
                        s -> s.serving.speculative.draftModel.geometry.kvHeads = 64,
                        "spec.serving.speculative.draftModel.geometry.kvHeads 64 is more than"));
    }

    static void sixHeads(InferenceDeploymentSpec s) {
        var g = s.serving.speculative.draftModel.geometry;
        g.attentionHeads = 6;
        g.kvHeads = 2;
        g.headDim = 64;
        g.hiddenSize = 384;
        g.intermediateSize = 1024;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void theValidatorNamesTheDraftField(Case c) {
        InferenceDeploymentSpec spec = DraftPlanTest.target(c.engine(), c.tp(), c.change());
        String problem = SpecValidator.validate(spec, x -> null);
        if (c.message() == null) {
            assertThat(problem).as(c.name()).isNull();
        } else {
            assertThat(problem).as(c.name()).startsWith(c.message());
        }
    }
}
