package io.tensorlane.operator.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelGeometry;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.api.v1alpha1.ServingSpec.KvCacheDtype;
import io.tensorlane.api.v1alpha1.SpeculativeSpec;
import io.tensorlane.contract.Allreduce;
import io.tensorlane.contract.DraftLayout;
import io.tensorlane.contract.MemoryBudget;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A draft model in the memory plan: where each engine puts it ({@link DraftPlan}) and what the plan then counts
 * (weights and a KV cache for as many tokens as the target's in the static pool, its activations and graphs in the
 * non-static need), for a Llama-3.1-8B target and a Llama-3.2-1B-like draft (16 layers, 8 KV heads of 64).
 */
class DraftPlanTest {
    static final AllreduceChoice NONE = new AllreduceChoice(Allreduce.None, List.of(), 0, "test", List.of(), false);
    static final long DRAFT_BYTES = 2_471_645_184L;

    /** A Llama-3.2-1B-like draft in bf16. */
    static ModelSpec llama1b() {
        ModelSpec m = new ModelSpec();
        m.name = "meta-llama/Llama-3.2-1B-Instruct";
        m.weightBytes = DRAFT_BYTES;
        m.dtype = DType.bf16;
        m.geometry = Fixtures.llama1bGeometry();
        return m;
    }

    static InferenceDeploymentSpec target(EngineType engine, int tp, Consumer<InferenceDeploymentSpec> change) {
        InferenceDeploymentSpec s = SpecValidator.withDefaults(Fixtures.llama8b(tp));
        s.engine.type = engine;
        s.serving.speculative = new SpeculativeSpec();
        s.serving.speculative.method = SpeculativeSpec.Method.draft;
        s.serving.speculative.draftModel = llama1b();
        change.accept(s);
        return s;
    }

    /**
     * @param tensor the draft's TP
     * @param weights its weights on the fullest GPU
     * @param kvPerToken its KV bytes per token there: 2 × 16 layers × KV heads there × 64 × element bytes
     * @param kvDtype its KV elements
     * @param tokens the tokens its activations are sized for
     */
    record Case(
            String name,
            EngineType engine,
            int tp,
            Consumer<InferenceDeploymentSpec> change,
            int tensor,
            long weights,
            long kvPerToken,
            DType kvDtype,
            int tokens) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> placements() {
        Consumer<InferenceDeploymentSpec> none = s -> {};
        return Stream.of(
                new Case("Tensorlane TP 1", EngineType.Tensorlane, 1, none, 1, DRAFT_BYTES, 32_768, DType.bf16, 512),
                new Case(
                        "Tensorlane TP 4: the whole draft on rank 0's GPU",
                        EngineType.Tensorlane,
                        4,
                        none,
                        1,
                        DRAFT_BYTES,
                        32_768,
                        DType.bf16,
                        512),
                new Case(
                        "Tensorlane with an fp8 target cache: the draft's stays in its activation dtype",
                        EngineType.Tensorlane,
                        2,
                        s -> s.serving.kvCacheDtype = KvCacheDtype.fp8,
                        1,
                        DRAFT_BYTES,
                        32_768,
                        DType.bf16,
                        512),
                new Case(
                        "Tensorlane, an fp16 draft: fp16 KV",
                        EngineType.Tensorlane,
                        1,
                        s -> s.serving.speculative.draftModel.dtype = DType.fp16,
                        1,
                        DRAFT_BYTES,
                        32_768,
                        DType.fp16,
                        512),
                new Case(
                        "Tensorlane, 100-token batches: chunks of 100",
                        EngineType.Tensorlane,
                        1,
                        s -> s.serving.maxBatchTokens = 100,
                        1,
                        DRAFT_BYTES,
                        32_768,
                        DType.bf16,
                        100),
                new Case(
                        "SGLang TP 2: sharded like the target",
                        EngineType.SGLang,
                        2,
                        none,
                        2,
                        DRAFT_BYTES / 2,
                        16_384,
                        DType.bf16,
                        8192),
                new Case(
                        "SGLang TP 2 with an fp8 cache: the draft's follows --kv-cache-dtype",
                        EngineType.SGLang,
                        2,
                        s -> s.serving.kvCacheDtype = KvCacheDtype.fp8,
                        2,
                        DRAFT_BYTES / 2,
                        8_192,
                        DType.fp8,
                        8192),
                new Case("vLLM TP 4", EngineType.VLLM, 4, none, 4, DRAFT_BYTES / 4, 8_192, DType.bf16, 8192),
                new Case(
                        "vLLM TP 8: one KV head a GPU",
                        EngineType.VLLM,
                        8,
                        none,
                        8,
                        DRAFT_BYTES / 8,
                        4_096,
                        DType.bf16,
                        8192));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("placements")
    void eachEnginePlacesTheDraftAsItRunsIt(Case c) {
        InferenceDeploymentSpec spec = target(c.engine(), c.tp(), c.change());
        DraftPlan d = DraftPlan.of(spec);
        assertThat(d.tensor()).isEqualTo(c.tensor());
        assertThat(d.weightsBytes()).isEqualTo(c.weights());
        assertThat(d.kvBytesPerToken()).isEqualTo(c.kvPerToken());
        assertThat(d.kvCacheDtype()).isEqualTo(c.kvDtype());
        ModelGeometry g = spec.serving.speculative.draftModel.geometry;
        MemoryBudget.Dims dims = new MemoryBudget.Dims(2048, 32, 8, 64, 8192, 128_256, 2);
        assertThat(d.activationBytes()).isEqualTo(MemoryBudget.activationBytes(dims, c.tokens(), c.tensor()));
        assertThat(d.cudaGraphBytes()).isEqualTo(MemoryBudget.CUDA_GRAPH_BYTES);
        assertThat(g.layers).isEqualTo(16);

        // the plan: the static pool holds both models' weights and both caches for the same tokens
        MemoryPlan p = MemoryPlanner.plan(spec, c.tp(), 141L << 30, NONE, null).plan();
        InferenceDeploymentSpec alone = SpecValidator.withDefaults(spec);
        alone.serving.speculative = null;
        MemoryPlan q = MemoryPlanner.plan(alone, c.tp(), 141L << 30, NONE, null).plan();
        long pool = MemoryBudget.staticPoolBytes(p.staticFraction(), p.gpuMemoryBytes());
        long targetPerToken = MemoryPlanner.kvBytesPerToken(spec, c.tp());
        assertThat(p.draftWeightsBytes()).isEqualTo(c.weights());
        assertThat(p.kvCacheTokens())
                .isEqualTo((pool - p.weightsBytes() - c.weights()) / (targetPerToken + c.kvPerToken()));
        assertThat(p.draftKvCacheBytes()).isEqualTo(p.kvCacheTokens() * c.kvPerToken());
        assertThat(p.weightsBytes() + p.draftWeightsBytes() + p.kvCacheBytes() + p.draftKvCacheBytes())
                .isEqualTo(pool);
        assertThat(p.kvCacheTokens() * targetPerToken).isLessThanOrEqualTo(p.kvCacheBytes());
        assertThat(p.nonStaticBytes() - q.nonStaticBytes())
                .as("the draft's activations and graphs, and the verify rows k = 4 adds")
                .isEqualTo(d.nonStaticBytes()
                        + Speculation.logitsBytes(spec)
                        + MemoryPlanner.sampling(spec).total()
                        - MemoryPlanner.sampling(alone).total());
        assertThat(p.kvCacheTokens()).isLessThan(q.kvCacheTokens());
        assertThat(p.toStatus().draftWeightsBytes).isEqualTo(c.weights());
        assertThat(q.toStatus().draftWeightsBytes).isNull();
    }

    @Test
    void theRuntimeChunkIsTheContractsOwn() {
        assertThat(DraftLayout.chunkTokens(4, 8192)).isEqualTo(512);
        assertThat(DraftLayout.chunkTokens(8, 4)).isEqualTo(9);
        assertThat(DraftLayout.chunkTokens(4, 100)).isEqualTo(100);
    }

    @Test
    void noDraftWithoutMethodDraft() {
        InferenceDeploymentSpec ngram = target(EngineType.Tensorlane, 1, s -> {
            s.serving.speculative.method = SpeculativeSpec.Method.ngram;
        });
        assertThat(DraftPlan.of(ngram)).isNull();
        assertThat(DraftPlan.of(SpecValidator.withDefaults(Fixtures.llama8b(1))))
                .isNull();
    }

    /** A GPU that holds the target alone, with 1 GiB to spare, cannot hold the draft too: DoesNotFit names it. */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(EngineType.class)
    void aDraftThatDoesNotFitIsNamedInTheMessage(EngineType engine) {
        InferenceDeploymentSpec spec = target(engine, 1, s -> {});
        InferenceDeploymentSpec alone = SpecValidator.withDefaults(spec);
        alone.serving.speculative = null;
        MemoryPlan q = MemoryPlanner.plan(alone, 1, 141L << 30, NONE, null).plan();
        long need = q.weightsBytes() + MemoryPlanner.kvBytesPerToken(alone, 1) * 8192 + q.nonStaticBytes();
        long gpu = (long) ((need + (1L << 30)) / 0.99) + (1L << 30);
        assertThat(MemoryPlanner.plan(alone, 1, gpu, NONE, null).doesNotFit()).isNull();
        MemoryPlanner.Result r = MemoryPlanner.plan(spec, 1, gpu, NONE, null);
        assertThat(r.doesNotFit())
                .contains("draft model weights 2.3 GiB")
                .contains("KV cache (target and draft)")
                .contains("or a smaller draft model");
    }
}
