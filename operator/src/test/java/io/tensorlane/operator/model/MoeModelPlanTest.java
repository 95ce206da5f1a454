package io.tensorlane.operator.model;

import static io.tensorlane.operator.plan.Fixtures.SETTINGS;
import static io.tensorlane.operator.plan.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.EngineSpec;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelGeometry;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.api.v1alpha1.ParallelismSpec;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.contract.MemoryBudget;
import io.tensorlane.modelfacts.ModelDirectory;
import io.tensorlane.operator.TestConfig;
import io.tensorlane.operator.plan.MemoryPlanner;
import io.tensorlane.operator.plan.NodeInfo;
import io.tensorlane.operator.plan.Outcome;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Planner;
import io.tensorlane.operator.render.Rendered;
import io.tensorlane.operator.render.Renderer;
import io.tensorlane.testkit.hub.Checkpoints;
import io.tensorlane.testkit.hub.MoeCheckpoints;
import io.tensorlane.testkit.hub.MoeCheckpoints.Moe;
import io.tensorlane.topology.TopologyFixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Mixture-of-Experts checkpoints as the operator reads them (config.json + the headers of every tensor in the Hub's
 * per-expert layout, through {@link ModelDirectory}, the inspection Job's reader): status.model's experts, top-k and
 * total vs active parameters and bytes, and the plan, which holds every expert in memory.
 */
class MoeModelPlanTest {
    static final List<NodeInfo> NODES = List.of(node("h200-0", TopologyFixtures.H200_SXM_8, 0));

    static ModelStatus read(Path dir, Moe g, Checkpoints.Weights weights) throws IOException {
        for (Map.Entry<String, byte[]> f :
                MoeCheckpoints.checkpoint(g, weights, 8).entrySet()) {
            Files.write(dir.resolve(f.getKey()), f.getValue());
        }
        return ModelDirectory.read(dir).facts().toStatus("file:///m", "sha256:x", "2026-12-02T00:00:00Z");
    }

    static long blocks(long n) {
        return (n + Checkpoints.BLOCK - 1) / Checkpoints.BLOCK;
    }

    /** Bytes of one [out, in] projection of {@code w}: bf16, or fp8 plus its 128×128 block scales in F32. */
    static long linear(long out, long in, Checkpoints.Weights w) {
        return w == Checkpoints.Weights.BF16 ? 2 * out * in : out * in + 4 * blocks(out) * blocks(in);
    }

    /**
     * The headers' bytes and active bytes, counted here from the shapes. Per layer: attention (q, k, v, o), the
     * experts (gate, up, down each), and BF16 norms (two, plus q/k norms for Qwen3) and router; embeddings, lm_head
     * and the final norm once.
     */
    static long[] bytes(Moe g, Checkpoints.Weights w) {
        long h = g.hidden(), q = (long) g.heads() * g.headDim(), kv = (long) g.kvHeads() * g.headDim();
        long ei = g.expertIntermediate();
        long attention = linear(q, h, w) + 2 * linear(kv, h, w) + linear(h, q, w);
        long expert = 2 * linear(ei, h, w) + linear(h, ei, w);
        long small = 2L
                * (2 * h
                        + (g.family() == MoeCheckpoints.Family.QWEN3_MOE ? 2L * g.headDim() : 0)
                        + (long) g.experts() * h);
        long once = 2L * (2L * g.vocab() * h + h);
        long total = once + g.layers() * (attention + small + g.experts() * expert);
        long active = once + g.layers() * (attention + small + g.topK() * expert);
        return new long[] {total, active};
    }

    static Stream<Arguments> checkpoints() {
        return Stream.of(
                Arguments.of(MoeCheckpoints.QWEN3_30B_A3B, Checkpoints.Weights.BF16, 30_532_122_624L, 3_353_032_704L),
                Arguments.of(
                        MoeCheckpoints.QWEN3_30B_A3B, Checkpoints.Weights.FP8_BLOCK, 30_532_122_624L, 3_353_032_704L),
                Arguments.of(MoeCheckpoints.MIXTRAL_8X7B, Checkpoints.Weights.BF16, 46_702_792_704L, 12_879_925_248L));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("checkpoints")
    void statusModelShowsExpertsTopKAndActiveParameters(
            Moe g, Checkpoints.Weights w, long parameters, long active, @TempDir Path dir) throws IOException {
        ModelStatus s = read(dir, g, w);

        assertThat(s.architecture)
                .isEqualTo(
                        g.family() == MoeCheckpoints.Family.QWEN3_MOE ? "Qwen3MoeForCausalLM" : "MixtralForCausalLM");
        assertThat(List.of(s.geometry.experts, s.geometry.expertsPerToken, s.geometry.expertIntermediateSize))
                .containsExactly(g.experts(), g.topK(), g.expertIntermediate());
        assertThat(s.geometry.moeLayers).isEqualTo(g.layers());
        assertThat(s.parameters)
                .as("the published total; FP8 scales are not parameters")
                .isEqualTo(parameters);
        assertThat(s.activeParameters).isEqualTo(active);
        assertThat(s.weightBytes).isEqualTo(bytes(g, w)[0]);
        assertThat(s.activeWeightBytes)
                .as("FP8: the active experts' scales included")
                .isEqualTo(bytes(g, w)[1]);
        if (w == Checkpoints.Weights.BF16) {
            assertThat(s.weightBytes).isEqualTo(2 * parameters);
            assertThat(s.activeWeightBytes).isEqualTo(2 * active);
        }
    }

    @Test
    void thePlanHoldsEveryExpertAndSizesActivationsByTopKExperts(@TempDir Path dir) throws IOException {
        ModelStatus s = read(dir, MoeCheckpoints.QWEN3_30B_A3B, Checkpoints.Weights.FP8_BLOCK);
        InferenceDeploymentSpec spec = ModelResolution.fill(whatAUserWrites(8), s);
        assertThat(spec.model.dtype).isEqualTo(DType.fp8);
        Plan p = Planner.plan(spec, NODES, SETTINGS);

        assertThat(p.ok()).as(p.message()).isTrue();
        assertThat(p.memory().weightsBytes())
                .as("all the experts, not the active ones")
                .isEqualTo((s.weightBytes + 7) / 8);
        // 8 experts × 768 per token, split by TP 8: the same as a dense MLP of 6144
        InferenceDeploymentSpec dense = ModelResolution.fill(whatAUserWrites(8), s);
        dense.model.geometry = asDense(s.geometry);
        assertThat(dense.model.geometry.intermediateSize).isEqualTo(8 * 768);
        assertThat(p.memory().activationBytes())
                .isEqualTo(MemoryPlanner.activationBytes(
                        io.tensorlane.operator.plan.SpecValidator.withDefaults(dense), 8));
        assertThat(MemoryPlanner.dims(spec).intermediateSize()).isEqualTo(6144);
        assertThat(p.memory().activationBytes()).isGreaterThan(MemoryBudget.ATTENTION_WORKSPACE_BYTES);
    }

    @Test
    void expertsThatTpCannotSplitAreInvalidSpec(@TempDir Path dir) throws IOException {
        // 60 experts of 1420, 16 heads: TP 8 divides the heads but not the experts (177.5 columns per GPU)
        Moe odd = new Moe(
                MoeCheckpoints.Family.QWEN3_MOE, 2, 2048, 16, 16, 128, 1000, 5632, 60, 4, 1420, List.of(), 8192);
        ModelStatus s = read(dir, odd, Checkpoints.Weights.BF16);
        Plan p = Planner.plan(ModelResolution.fill(whatAUserWrites(8), s), NODES, SETTINGS);

        assertThat(p.outcome()).isEqualTo(Outcome.INVALID_SPEC);
        assertThat(p.message())
                .isEqualTo("spec.parallelism.tensor 8 must divide spec.model.geometry.expertIntermediateSize 1420 "
                        + "(each of the 60 experts is split across the GPUs: gate and up by columns, down by rows); "
                        + "use one of [1, 2, 4, 5]");
        assertThat(Planner.plan(ModelResolution.fill(whatAUserWrites(4), s), NODES, SETTINGS)
                        .ok())
                .isTrue();
    }

    @Test
    void aDenseLayerAmongTheMoeLayersIsReadAndCounted(@TempDir Path dir) throws IOException {
        // layers 0 and 3 dense (mlp_only_layers): 2 of 4 layers MoE; the dense MLP counts fully
        Moe mixed =
                new Moe(MoeCheckpoints.Family.QWEN3_MOE, 4, 256, 4, 2, 64, 1000, 512, 16, 2, 64, List.of(0, 3), 1024);
        ModelStatus s = read(dir, mixed, Checkpoints.Weights.BF16);

        assertThat(s.geometry.moeLayers).isEqualTo(2);
        long routed = 2L * 16 * 3 * 256 * 64;
        assertThat(s.parameters - s.activeParameters).isEqualTo(routed * (16 - 2) / 16);
        assertThat(s.geometry.activationIntermediateSize())
                .as("the dense 512 > 2 × 64")
                .isEqualTo(512);
    }

    /** The same geometry with its MoE layers as one dense MLP of top-k × the expert size (what a token computes). */
    static ModelGeometry asDense(ModelGeometry moe) {
        ModelGeometry g = io.fabric8.kubernetes.client.utils.Serialization.clone(moe);
        g.intermediateSize = moe.expertsPerToken * moe.expertIntermediateSize;
        g.experts = null;
        g.expertsPerToken = null;
        g.expertIntermediateSize = null;
        g.moeLayers = null;
        return g;
    }

    static InferenceDeployment owner(InferenceDeploymentSpec spec) {
        InferenceDeployment o = new InferenceDeployment();
        o.setMetadata(new ObjectMetaBuilder()
                .withName("moe")
                .withNamespace("ml")
                .withUid("uid-1")
                .withGeneration(1L)
                .build());
        o.setSpec(spec);
        return o;
    }

    static Map<String, String> env(Rendered r) {
        return r.deployment().getSpec().getTemplate().getSpec().getContainers().get(0).getEnv().stream()
                .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
    }

    static Stream<Moe> bf16Moe() {
        return Stream.of(MoeCheckpoints.QWEN3_30B_A3B, MoeCheckpoints.MIXTRAL_8X7B);
    }

    /**
     * bf16 experts on the Tensorlane engine: planned with every expert in memory and rendered as a dense model with the
     * same bytes and activation width is (the runtime reads the experts from config.json, not from the environment).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("bf16Moe")
    void theTensorlaneEngineRunsBf16ExpertsAsItRunsADenseModel(Moe g, @TempDir Path dir) throws IOException {
        ModelStatus s = read(dir, g, Checkpoints.Weights.BF16);
        InferenceDeploymentSpec spec = ModelResolution.fill(tensorlane(whatAUserWrites(8)), s);
        assertThat(spec.model.dtype).isEqualTo(DType.bf16);
        Plan p = Planner.plan(spec, NODES, SETTINGS);

        assertThat(p.ok()).as(p.message()).isTrue();
        assertThat(p.memory().weightsBytes())
                .as("all the experts, not the active ones")
                .isEqualTo((s.weightBytes + 7) / 8);
        Rendered r = Renderer.render(owner(spec), spec, p, TestConfig.defaults(), s);
        Container c =
                r.deployment().getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(c.getArgs()).containsExactly("serve");
        assertThat(env(r))
                .containsEntry(EngineEnv.MODEL, "Qwen/Qwen3-30B-A3B")
                .containsEntry(EngineEnv.DTYPE, "bf16")
                .containsEntry(EngineEnv.WORLD_SIZE, "8")
                .containsEntry(EngineEnv.KV_CACHE_DTYPE, "bf16")
                .containsEntry(
                        EngineEnv.KV_CACHE_TOKENS, Long.toString(p.memory().kvCacheTokens()));

        InferenceDeploymentSpec dense = Serialization.clone(spec);
        dense.model.geometry = asDense(s.geometry);
        Plan dp = Planner.plan(dense, NODES, SETTINGS);
        assertThat(dp.ok()).as(dp.message()).isTrue();
        assertThat(p.memory()).isEqualTo(dp.memory());
        Rendered dr = Renderer.render(owner(dense), dense, dp, TestConfig.defaults(), s);
        assertThat(env(r)).isEqualTo(env(dr));
        assertThat(c.getArgs())
                .isEqualTo(dr.deployment()
                        .getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .get(0)
                        .getArgs());
    }

    /** FP8 experts: planned on the Tensorlane engine (its runtime serves them) as on SGLang/vLLM, dtype fp8. */
    @Test
    void fp8ExpertsArePlannedOnEveryEngine(@TempDir Path dir) throws IOException {
        ModelStatus s = read(dir, MoeCheckpoints.QWEN3_30B_A3B, Checkpoints.Weights.FP8_BLOCK);
        assertThat(s.quantization.fp8()).isTrue();
        InferenceDeploymentSpec spec = ModelResolution.fill(tensorlane(whatAUserWrites(2)), s);
        Plan p = Planner.plan(spec, NODES, SETTINGS);

        assertThat(p.ok()).as(p.message()).isTrue();
        assertThat(spec.model.dtype).isEqualTo(DType.fp8);
        assertThat(p.memory().weightsBytes()).as("FP8 weights, split by TP 2").isEqualTo((s.weightBytes + 1) / 2);
        for (EngineSpec.EngineType python : List.of(EngineSpec.EngineType.SGLang, EngineSpec.EngineType.VLLM)) {
            InferenceDeploymentSpec other = whatAUserWrites(8);
            other.engine.type = python;
            Plan q = Planner.plan(ModelResolution.fill(other, s), NODES, SETTINGS);
            assertThat(q.ok()).as(python + ": " + q.message()).isTrue();
        }
    }

    /** The Tensorlane engine with its default image instead. */
    static InferenceDeploymentSpec tensorlane(InferenceDeploymentSpec spec) {
        spec.engine = new EngineSpec();
        return spec;
    }

    /** SGLang. */
    static InferenceDeploymentSpec whatAUserWrites(int tp) {
        InferenceDeploymentSpec s = new InferenceDeploymentSpec();
        s.model = new ModelSpec();
        s.model.name = "Qwen/Qwen3-30B-A3B";
        s.parallelism = new ParallelismSpec();
        s.parallelism.tensor = tp;
        s.engine = new EngineSpec();
        s.engine.type = EngineSpec.EngineType.SGLang;
        s.engine.image = "sglang:test";
        return s;
    }
}
