package io.tensorlane.operator.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.SpeculativeSpec;
import io.tensorlane.contract.Allreduce;
import io.tensorlane.contract.MemoryBudget;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The sampler's per-row buffers in the memory plan (issue #30): the parameters and token-mask slots of every logits row
 * and the penalty pairs of every sequence, as the Tensorlane runtime allocates them at start (contract {@code
 * SamplingBuffers}), for a Llama-3.1-8B-like model (vocabulary 128256: 4008 mask words a row).
 */
class PlannerSamplingTableTest {
    static final AllreduceChoice NONE = new AllreduceChoice(Allreduce.None, List.of(), 0, "test", List.of(), false);

    /** Parameters (14 words) and a mask slot (4008 words) per row of int32. */
    static long masks(long rows) {
        return 4L * rows * (14 + 4008);
    }

    /** (id, value) int32 pairs per row: one per distinct id of a sequence, 300 bias, 128 bans, 128 bad words. */
    static long penalties(long rows, long distinctIds) {
        return 4L * 2 * rows * (distinctIds + 300 + 128 + 128);
    }

    record Case(String name, Consumer<InferenceDeploymentSpec> change, long masks, long penalties) {
        @Override
        public String toString() {
            return name;
        }
    }

    static SpeculativeSpec ngram(int k) {
        SpeculativeSpec s = new SpeculativeSpec();
        s.method = SpeculativeSpec.Method.ngram;
        s.numSpeculativeTokens = k;
        return s;
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("defaults: 256 sequences of 8192 tokens", s -> {}, masks(256), penalties(256, 8192)),
                new Case(
                        "a context longer than the vocabulary: one pair per vocabulary id at most",
                        s -> s.serving.maxModelLength = 131072,
                        masks(256),
                        penalties(256, 128256)),
                new Case(
                        "100 batch tokens: 100 sequences at most",
                        s -> s.serving.maxBatchTokens = 100,
                        masks(100),
                        penalties(100, 8192)),
                new Case(
                        "33 batch tokens: the parameters are laid out for an even 34 rows",
                        s -> s.serving.maxBatchTokens = 33,
                        masks(34),
                        penalties(34, 8192)),
                new Case(
                        "n-gram speculation k = 4: a mask slot for each of 5 logits rows a sequence, penalties per"
                                + " sequence (+1 step row)",
                        s -> s.serving.speculative = ngram(4),
                        masks(256 * 5),
                        penalties(257, 8192)),
                new Case(
                        "draft-model speculation k = 4: the same verify rows as n-gram's",
                        s -> s.serving.speculative = draft(),
                        masks(256 * 5),
                        penalties(257, 8192)),
                new Case("no vocabulary known: nothing counted", s -> s.model.geometry.vocabSize = null, 0, 0));
    }

    static SpeculativeSpec draft() {
        SpeculativeSpec s = new SpeculativeSpec();
        s.method = SpeculativeSpec.Method.draft;
        s.draftModel = DraftPlanTest.llama1b();
        return s;
    }

    static InferenceDeploymentSpec llama8b(Consumer<InferenceDeploymentSpec> change) {
        InferenceDeploymentSpec s = SpecValidator.withDefaults(Fixtures.llama8b(1));
        change.accept(s);
        return s;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void thePlanCountsTheSamplersBuffersInTheActivations(Case c) {
        InferenceDeploymentSpec spec = llama8b(c.change());
        MemoryBudget.Sampling s = MemoryPlanner.sampling(spec);
        assertThat(s.parametersAndMasks()).isEqualTo(c.masks());
        assertThat(s.penaltyPairs()).isEqualTo(c.penalties());

        long rest = MemoryBudget.activationBytes(MemoryPlanner.dims(spec), spec.serving.maxBatchTokens, 1)
                + Speculation.logitsBytes(spec);
        assertThat(MemoryPlanner.activationBytes(spec, 1) - rest).isEqualTo(c.masks() + c.penalties());
        MemoryPlan plan = MemoryPlanner.plan(spec, 1, 141L << 30, NONE, null).plan();
        DraftPlan draft = DraftPlan.of(spec); // a draft model's own activations are in the plan's figure too
        assertThat(plan.activationBytes())
                .isEqualTo(MemoryPlanner.activationBytes(spec, 1) + (draft == null ? 0 : draft.activationBytes()));
    }

    @Test
    void theSamplingRankHoldsThemAtEveryTensorParallelSize() {
        // the buffers are not split by TP: the sampling rank (rank 0) holds all of them, and the plan is per GPU
        InferenceDeploymentSpec spec = llama8b(s -> {});
        long tp1 = MemoryPlanner.activationBytes(spec, 1)
                - MemoryBudget.activationBytes(MemoryPlanner.dims(spec), 8192, 1);
        long tp8 = MemoryPlanner.activationBytes(spec, 8)
                - MemoryBudget.activationBytes(MemoryPlanner.dims(spec), 8192, 8);
        assertThat(tp8).isEqualTo(tp1).isEqualTo(masks(256) + penalties(256, 8192));
    }

    @Test
    void aLongContextCostsAQuarterGibibyteOfPenaltyPairsOutOfTheHeadroom() {
        InferenceDeploymentSpec shortCtx = llama8b(s -> s.serving.maxModelLength = 8192);
        InferenceDeploymentSpec longCtx = llama8b(s -> s.serving.maxModelLength = 131072);
        MemoryPlan a = MemoryPlanner.plan(shortCtx, 1, 141L << 30, NONE, null).plan();
        MemoryPlan b = MemoryPlanner.plan(longCtx, 1, 141L << 30, NONE, null).plan();
        assertThat(b.nonStaticBytes() - a.nonStaticBytes()).isEqualTo(penalties(256, 128256) - penalties(256, 8192));
        assertThat(penalties(256, 128256)).isEqualTo(263_806_976L); // 251.6 MiB
        // less than 1% of an H200: the same auto fraction, the pairs come out of the headroom
        assertThat(b.staticFraction()).isEqualTo(a.staticFraction());
        assertThat(a.headroomBytes() - b.headroomBytes()).isEqualTo(penalties(256, 128256) - penalties(256, 8192));
    }

    @Test
    void theDoesNotFitMessageNamesThem() {
        InferenceDeploymentSpec spec = llama8b(s -> s.serving.maxModelLength = 131072);
        MemoryPlanner.Result r = MemoryPlanner.plan(spec, 1, 16L << 30, NONE, null);
        assertThat(r.doesNotFit())
                .startsWith("model does not fit")
                .contains("(of which sampling parameters and token masks 3.9 MiB, sampling penalty pairs 251.6 MiB)");
    }

    @Test
    void withSpeculationTheMessageNamesEveryTermInsideTheActivations() {
        InferenceDeploymentSpec spec = llama8b(s -> s.serving.speculative = ngram(8));
        MemoryPlanner.Result r = MemoryPlanner.plan(spec, 1, 16L << 30, NONE, null);
        assertThat(r.doesNotFit())
                .contains("(of which speculative verify logits 2.0 GiB, sampling parameters and token masks "
                        + Units.bytes(masks(256 * 9)) + ", sampling penalty pairs " + Units.bytes(penalties(257, 8192))
                        + ")");
    }
}
