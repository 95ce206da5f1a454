package io.tensorlane.operator.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.SpeculativeSpec;
import io.tensorlane.contract.Allreduce;
import io.tensorlane.contract.MemoryBudget;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** spec.serving.speculative: the InvalidSpec messages the validator gives and what the memory plan counts. */
class SpeculationTest {
    static SpeculativeSpec spec(SpeculativeSpec.Method method, Integer k, Integer n) {
        SpeculativeSpec s = new SpeculativeSpec();
        s.method = method;
        s.numSpeculativeTokens = k;
        s.promptLookupMax = n;
        return s;
    }

    static InferenceDeploymentSpec llama8b(SpeculativeSpec s) {
        InferenceDeploymentSpec spec = SpecValidator.withDefaults(Fixtures.llama8b(1));
        spec.serving.speculative = s;
        return spec;
    }

    static Stream<Arguments> validation() {
        return Stream.of(
                Arguments.of("off", null, null),
                Arguments.of("ngram k=4 n=3", spec(SpeculativeSpec.Method.ngram, 4, 3), null),
                Arguments.of("ngram at the bounds", spec(SpeculativeSpec.Method.ngram, 8, 1), null),
                Arguments.of("ngram, schema defaults", spec(SpeculativeSpec.Method.ngram, null, null), null),
                Arguments.of(
                        "draft without a draft model",
                        spec(SpeculativeSpec.Method.draft, 4, null),
                        "spec.serving.speculative.draftModel is required when method is draft"),
                Arguments.of("no method", spec(null, 4, 3), "spec.serving.speculative.method is required"),
                Arguments.of(
                        "k 0",
                        spec(SpeculativeSpec.Method.ngram, 0, 3),
                        "spec.serving.speculative.numSpeculativeTokens must be 1..8, got 0"),
                Arguments.of(
                        "k 9",
                        spec(SpeculativeSpec.Method.ngram, 9, 3),
                        "spec.serving.speculative.numSpeculativeTokens must be 1..8, got 9"),
                Arguments.of(
                        "n 0",
                        spec(SpeculativeSpec.Method.ngram, 4, 0),
                        "spec.serving.speculative.promptLookupMax must be 1..8, got 0"),
                Arguments.of(
                        "n 17",
                        spec(SpeculativeSpec.Method.ngram, 4, 17),
                        "spec.serving.speculative.promptLookupMax must be 1..8, got 17"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("validation")
    void theValidatorNamesTheField(String name, SpeculativeSpec s, String message) {
        String problem = SpecValidator.validate(llama8b(s), x -> null);
        if (message == null) {
            assertThat(problem).as(name).isNull();
        } else {
            assertThat(problem).as(name).startsWith(message);
        }
    }

    @Test
    void withDefaultsFillsKAndNOnlyWhenSpeculationIsOn() {
        InferenceDeploymentSpec off = SpecValidator.withDefaults(Fixtures.llama8b(1));
        assertThat(off.serving.speculative).isNull();
        InferenceDeploymentSpec raw = Fixtures.llama8b(1);
        raw.serving = new io.tensorlane.api.v1alpha1.ServingSpec();
        raw.serving.speculative = spec(SpeculativeSpec.Method.ngram, null, null);
        InferenceDeploymentSpec on = SpecValidator.withDefaults(raw);
        assertThat(on.serving.speculative.numSpeculativeTokens).isEqualTo(4);
        assertThat(on.serving.speculative.promptLookupMax).isEqualTo(3);
    }

    /** Extra logits bytes: maxSeqs × k × vocab × 4 × 2, maxSeqs = min(maxBatchTokens, 256); vocab 128256. */
    static Stream<Arguments> logits() {
        return Stream.of(
                Arguments.of("off", null, 8192, 0L),
                Arguments.of("k=1", 1, 8192, 256L * 1 * 128_256 * 4 * 2),
                Arguments.of("k=4", 4, 8192, 256L * 4 * 128_256 * 4 * 2),
                Arguments.of("k=8", 8, 8192, 256L * 8 * 128_256 * 4 * 2),
                Arguments.of("k=4, 64-token batches: 64 sequences", 4, 64, 64L * 4 * 128_256 * 4 * 2));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("logits")
    void verifyLogitsBytes(String name, Integer k, int maxBatchTokens, long bytes) {
        InferenceDeploymentSpec s = llama8b(k == null ? null : spec(SpeculativeSpec.Method.ngram, k, 3));
        s.serving.maxBatchTokens = maxBatchTokens;
        assertThat(Speculation.logitsBytes(s)).as(name).isEqualTo(bytes);
    }

    @Test
    void k4At8192TokensIsAbout1GiB() {
        // 256 × 4 × 128256 × 8 = 1,050,673,152 bytes
        assertThat(Speculation.logitsBytes(llama8b(spec(SpeculativeSpec.Method.ngram, 4, 3))))
                .isEqualTo(1_050_673_152L);
    }

    @Test
    void aModelWithoutAVocabularyAddsNothing() {
        InferenceDeploymentSpec s = llama8b(spec(SpeculativeSpec.Method.ngram, 4, 3));
        s.model.geometry.vocabSize = null;
        assertThat(Speculation.logitsBytes(s)).isZero();
    }

    @Test
    void thePlanCountsTheVerifyLogitsInActivationsAndTheNonStaticNeed() {
        AllreduceChoice none = new AllreduceChoice(Allreduce.None, List.of(), 0, "test", List.of(), false);
        long total = 141L << 30;
        InferenceDeploymentSpec off = llama8b(null);
        InferenceDeploymentSpec on = llama8b(spec(SpeculativeSpec.Method.ngram, 4, 3));
        MemoryPlan a = MemoryPlanner.plan(off, 1, total, none, null).plan();
        MemoryPlan b = MemoryPlanner.plan(on, 1, total, none, null).plan();
        // the verify logits, and the token-mask slots of the k extra logits rows a sequence (PlannerSamplingTableTest)
        long extra = Speculation.logitsBytes(on)
                + MemoryPlanner.sampling(on).total()
                - MemoryPlanner.sampling(off).total();
        assertThat(a.activationBytes())
                .isEqualTo(MemoryBudget.activationBytes(MemoryPlanner.dims(off), 8192, 1)
                        + MemoryPlanner.sampling(off).total());
        assertThat(b.activationBytes() - a.activationBytes()).isEqualTo(extra);
        assertThat(b.nonStaticBytes() - a.nonStaticBytes()).isEqualTo(extra);
        assertThat(b.staticFraction()).isLessThanOrEqualTo(a.staticFraction());
    }

    @Test
    void theDoesNotFitMessageNamesTheVerifyLogits() {
        AllreduceChoice none = new AllreduceChoice(Allreduce.None, List.of(), 0, "test", List.of(), false);
        InferenceDeploymentSpec on = llama8b(spec(SpeculativeSpec.Method.ngram, 8, 3));
        MemoryPlanner.Result r = MemoryPlanner.plan(on, 1, 16L << 30, none, null);
        assertThat(r.doesNotFit()).contains("speculative verify logits 2.0 GiB");
    }
}
