package io.tensorlane.testkit.sim;

import static io.tensorlane.testkit.sim.SimMemoryTest.PRO_6000;
import static io.tensorlane.testkit.sim.SimMemoryTest.llama70b;
import static io.tensorlane.testkit.sim.SimMemoryTest.speculating;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelGeometry;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.contract.MemoryBudget;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A Tensorlane draft model in the simulator's OOM rule ({@link SimDraft}, {@link SimMemory}) on the seed's box (see
 * {@link SimMemoryTest}): counted where the runtime puts it (DraftLayout), so the plan's figures start and figures that
 * leave the draft out do not; and the KV tokens and dtype it reads from the pod.
 */
class SimDraftTest {
    /** Llama-3.3-70B's bf16 weights (for the static pool's contents). */
    static final long W70 = 141_107_412_992L;
    /** A Llama-3.2-1B-like draft's bf16 weights. */
    static final long W1 = 2_471_645_184L;
    /** KV bytes per token on one GPU: the target at TP 8 (2 x 80 x 1 x 128 x 2), the draft at TP 1 (2 x 16 x 8 x 64 x 2). */
    static final long KV70 = 40_960;

    static final long KV1 = 32_768;

    /** The seed's 70B with its weight bytes and, unless {@code draft} is null, a draft model. */
    static InferenceDeploymentSpec withDraft(ModelSpec draft) {
        InferenceDeploymentSpec s = llama70b();
        s.model.weightBytes = W70;
        if (draft != null) {
            s.serving = new io.tensorlane.api.v1alpha1.ServingSpec();
            s.serving.speculative = new io.tensorlane.api.v1alpha1.SpeculativeSpec();
            s.serving.speculative.method = io.tensorlane.api.v1alpha1.SpeculativeSpec.Method.draft;
            s.serving.speculative.draftModel = draft;
        }
        return s;
    }

    static ModelSpec llama1b(boolean read) {
        ModelSpec m = new ModelSpec();
        m.name = "meta-llama/Llama-3.2-1B-Instruct";
        if (!read) {
            return m; // what the user wrote; the operator has not read it yet
        }
        m.weightBytes = W1;
        m.dtype = ModelSpec.DType.bf16;
        ModelGeometry g = new ModelGeometry();
        g.layers = 16;
        g.hiddenSize = 2048;
        g.attentionHeads = 32;
        g.kvHeads = 8;
        g.headDim = 64;
        g.vocabSize = 128256;
        g.intermediateSize = 8192;
        m.geometry = g;
        return m;
    }

    /** The KV tokens a plan gives at {@code fraction}: what the pool leaves after the weights, per token of both. */
    static long tokens(String fraction, boolean countTheDraft) {
        long pool = MemoryBudget.staticPoolBytes(Double.parseDouble(fraction), PRO_6000);
        return countTheDraft ? (pool - W70 / 8 - W1) / (KV70 + KV1) : (pool - W70 / 8) / KV70;
    }

    /** The pod the operator renders for the Tensorlane runtime: fraction, KV tokens (null: not given) and k = 4. */
    static Pod drafting(String fraction, Long kvTokens, String speculative) {
        Pod p = speculating(fraction, speculative);
        var env = p.getSpec().getContainers().get(0).getEnv();
        env.add(new io.fabric8.kubernetes.api.model.EnvVar("TENSORLANE_KV_CACHE_DTYPE", "bf16", null));
        if (kvTokens != null) {
            env.add(new io.fabric8.kubernetes.api.model.EnvVar(
                    "TENSORLANE_KV_CACHE_TOKENS", Long.toString(kvTokens), null));
        }
        return p;
    }

    static final String DRAFT = "draft:/draft-model/meta-llama--Llama-3.2-1B-Instruct--abc,k=4";

    /**
     * A 1B draft (k = 4) beside the seed's 70B at TP 8: the planner's auto fraction with the draft's terms is 0.91 (its
     * activations, 0.6 GB, and its own 1 GiB graph pool are non-static), 0.93 without them (n-gram's k = 4 alone); its
     * weights and a KV cache of the target's tokens are in the static pool on rank 0's GPU.
     */
    static Stream<Arguments> drafts() {
        ModelSpec read = llama1b(true);
        return Stream.of(
                Arguments.of(
                        "0.91 and the tokens of a plan counting the draft: runs",
                        drafting("0.91", tokens("0.91", true), DRAFT),
                        withDraft(read),
                        null),
                Arguments.of(
                        "0.91 with tokens that leave out the draft's weights and cache: the caches do not fit",
                        drafting("0.91", tokens("0.91", false), DRAFT),
                        withDraft(read),
                        MemoryBudget.PHASE_KV_CACHE),
                Arguments.of(
                        "0.93, the fraction without the draft's activations and graphs: no room for the graphs",
                        drafting("0.93", tokens("0.93", true), DRAFT),
                        withDraft(read),
                        MemoryBudget.PHASE_CUDA_GRAPHS),
                Arguments.of(
                        "0.93 with n-gram's k = 4 and no draft: runs",
                        drafting("0.93", tokens("0.93", false), "ngram:k=4,n=3"),
                        withDraft(null),
                        null),
                Arguments.of(
                        "0.91, the runtime sizing its caches itself (no KV tokens): runs",
                        drafting("0.91", null, DRAFT),
                        withDraft(read),
                        null),
                Arguments.of(
                        "0.93, the runtime sizing its caches itself: the draft's non-static terms still count",
                        drafting("0.93", null, DRAFT),
                        withDraft(read),
                        MemoryBudget.PHASE_CUDA_GRAPHS),
                Arguments.of(
                        "a draft not read yet counts its graph pool only",
                        drafting("0.93", tokens("0.93", false), DRAFT),
                        withDraft(llama1b(false)),
                        MemoryBudget.PHASE_CUDA_GRAPHS),
                Arguments.of(
                        "0.92, a step above the plan's 0.91, with its tokens: the reserve does not fit",
                        drafting("0.92", tokens("0.92", true), DRAFT),
                        withDraft(read),
                        MemoryBudget.PHASE_RESERVE));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("drafts")
    void aDraftModelCountsWhereTheRuntimePutsIt(String why, Pod pod, InferenceDeploymentSpec owner, String phase) {
        Optional<MemoryBudget.Oom> oom = SimMemory.startupOom(pod, PRO_6000, owner);
        assertThat(oom.map(MemoryBudget.Oom::phase).orElse(null)).isEqualTo(phase);
    }

    @org.junit.jupiter.api.Test
    void theDraftTakesItsWeightsAndACacheOfTheTargetsTokensOnRankZerosGpu() {
        SimDraft d = SimDraft.of(withDraft(llama1b(true)), 4, 16384);
        // TP 1 whatever the target's: all 16 layers x 8 KV heads of 64, bf16; chunks of min(16384, 512) tokens
        assertThat(d.weightsBytes()).isEqualTo(W1);
        assertThat(d.kvBytesPerToken()).isEqualTo(KV1);
        assertThat(d.activationBytes())
                .isEqualTo(
                        MemoryBudget.activationBytes(new MemoryBudget.Dims(2048, 32, 8, 64, 8192, 128256, 2), 512, 1));
        assertThat(d.cudaGraphBytes()).isEqualTo(MemoryBudget.CUDA_GRAPH_BYTES);
        assertThat(SimDraft.of(withDraft(null), 4, 16384))
                .isEqualTo(new SimDraft(0, 0, 0, MemoryBudget.CUDA_GRAPH_BYTES));

        // what the caches take beyond the pool when the tokens leave the draft out: its weights and its cache
        long pool = MemoryBudget.staticPoolBytes(0.91, PRO_6000);
        long t = tokens("0.91", false);
        var plan = SimMemory.read(drafting("0.91", t, DRAFT)).orElseThrow();
        assertThat(plan.draft()).isTrue();
        assertThat(plan.kvCacheTokens()).isEqualTo(t);
        assertThat(SimMemory.overflow(plan, withDraft(llama1b(true)), d, pool))
                .isEqualTo(W70 / 8 + t * KV70 + W1 + t * KV1 - pool);
        assertThat(SimMemory.overflow(plan, withDraft(llama1b(true)), SimDraft.NONE, pool))
                .as("the target alone fits its pool")
                .isZero();
        var fits = SimMemory.read(drafting("0.91", tokens("0.91", true), DRAFT)).orElseThrow();
        assertThat(SimMemory.overflow(fits, withDraft(llama1b(true)), d, pool)).isZero();
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @org.junit.jupiter.params.provider.CsvSource(
            delimiter = ';',
            nullValues = "null",
            value = {
                "draft:/draft-model/org--d--abc,k=4; /draft-model/org--d--abc",
                " DRAFT : /d ; /d",
                "draft:/d; /d",
                "draft:k=4; null",
                "draft:; null",
                "ngram:k=4,n=3; null",
                "off; null",
                "null; null"
            })
    void readsTheDraftDirectory(String value, String dir) {
        assertThat(SimMemory.draftDir(value)).isEqualTo(dir);
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @org.junit.jupiter.params.provider.CsvSource(
            nullValues = "null",
            value = {"bf16, bf16", "fp8, fp8", "FP16, fp16", "auto, null", "x, null", "null, null"})
    void readsTheKvCacheDtype(String value, ModelSpec.DType dtype) {
        assertThat(SimMemory.kvCacheDtype(value)).isEqualTo(dtype);
    }
}
