package io.tensorlane.operator.plan;

import static io.tensorlane.operator.plan.Fixtures.SETTINGS;
import static io.tensorlane.operator.plan.Fixtures.llama70b;
import static io.tensorlane.operator.plan.Fixtures.llama8b;
import static io.tensorlane.operator.plan.Fixtures.node;
import static io.tensorlane.operator.plan.Fixtures.with;
import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.AllreduceSpec;
import io.tensorlane.api.v1alpha1.EngineSpec;
import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.MemoryPlanStatus;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.api.v1alpha1.ServingSpec;
import io.tensorlane.api.v1alpha1.ServingSpec.KvCacheDtype;
import io.tensorlane.contract.Allreduce;
import io.tensorlane.contract.BufferLayout;
import io.tensorlane.topology.TopologyFixtures;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class MemoryPlannerTest {
    static final long MiB = 1024 * 1024;
    static final String PRO = TopologyFixtures.RTX_PRO_6000_PCIE_8;

    /** The seed's box: one node of 8× RTX PRO 6000 (97887 MiB each) over PCIe in two NUMA islands. */
    static List<NodeInfo> seedBox() {
        return List.of(node("pro-0", PRO, 0));
    }

    /** Llama-3.3-70B bf16 at TP 8 with 16384 batch tokens. */
    static InferenceDeploymentSpec seedSpec(String fraction) {
        return with(llama70b(8), s -> {
            s.serving.maxBatchTokens = 16384;
            s.memory.fraction = fraction;
        });
    }

    @Test
    void seedForcedFractionWarnsThatTheIpcBuffersDoNotFit() {
        Plan plan = Planner.plan(seedSpec("0.95"), seedBox(), SETTINGS);

        assertThat(plan.outcome()).isEqualTo(Outcome.OK);
        assertThat(plan.allreduce().mode()).isEqualTo(Allreduce.Custom);
        MemoryPlan m = plan.memory();
        assertThat(m.fractionTooHigh()).isTrue();
        assertThat(m.fractionSource()).isEqualTo("user");
        assertThat(m.staticFraction()).isEqualTo(0.95);
        assertThat(m.headroomBytes()).isNegative();
        assertThat(m.allreduceIpcBytes())
                .isEqualTo(BufferLayout.of(8, 8 * MiB).totalBytesPerRank())
                .isPositive();
        assertThat(plan.warnings())
                .singleElement()
                .asString()
                .startsWith("memory.fraction 0.95 leaves 4.8 GiB per GPU for non-static use but 5.5 GiB is needed (")
                .contains("custom-allreduce IPC buffers " + Units.bytes(m.allreduceIpcBytes()))
                .contains("CUDA graphs 1 GiB")
                .endsWith("expect CUDA out of memory at start-up; auto would pick 0.94");
        assertThat(plan.memoryStatus().warnings).isEqualTo(plan.warnings());
    }

    @Test
    void seedAutoFractionFitsWithNumbers() {
        Plan plan = Planner.plan(seedSpec("auto"), seedBox(), SETTINGS);

        assertThat(plan.outcome()).isEqualTo(Outcome.OK);
        MemoryPlanStatus s = plan.memoryStatus();
        assertThat(s.fractionSource).isEqualTo("auto");
        assertThat(s.staticFraction).isEqualTo(0.94);
        assertThat(s.gpuMemoryBytes).isEqualTo(102_641_958_912L);
        assertThat(s.weightsBytes).isEqualTo(17_638_426_624L); // 141,107,412,992 / 8
        assertThat(s.headroomBytes).isNotNegative();
        assertThat(s.warnings).isEmpty();
        // 2 × 80 layers × 1 KV head × 128 × 2 bytes = 40 KiB per token per GPU
        assertThat(s.kvCacheTokens).isEqualTo(s.kvCacheBytes / (40 * 1024));
        // the static pool is what the runtime takes: 0.94 × total rounded down to the 2 MiB granule
        long pool = (long) (0.94 * s.gpuMemoryBytes) / (2L << 20) * (2L << 20);
        assertThat(s.kvCacheBytes).isEqualTo(pool - s.weightsBytes);
        assertThat(s.weightsBytes
                        + s.kvCacheBytes
                        + s.activationBytes
                        + s.cudaContextBytes
                        + s.cudaGraphBytes
                        + s.ncclBytes
                        + s.allreduceIpcBytes
                        + s.reserveBytes
                        + s.headroomBytes)
                .isEqualTo(s.gpuMemoryBytes);
        assertThat(s.gpuMemoryUtilization).isBetween(0.98, 0.99);
    }

    record Case(
            String name,
            InferenceDeploymentSpec spec,
            String fixture,
            Outcome outcome,
            String fractionOrNull,
            String messageContains) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case(
                        "70B on one L40S does not fit",
                        llama70b(1),
                        TopologyFixtures.L40S_2,
                        Outcome.DOES_NOT_FIT,
                        null,
                        "model does not fit: per GPU it needs weights 131.4 GiB"),
                new Case(
                        "70B at TP 2 on L40S does not fit",
                        llama70b(2),
                        TopologyFixtures.L40S_2,
                        Outcome.DOES_NOT_FIT,
                        null,
                        "use more GPUs (parallelism.tensor)"),
                new Case("8B at TP 2 on L40S fits", llama8b(2), TopologyFixtures.L40S_2, Outcome.OK, null, null),
                new Case(
                        "user fraction too small for weights + one sequence",
                        with(llama70b(8), s -> s.memory.fraction = "0.17"),
                        PRO,
                        Outcome.DOES_NOT_FIT,
                        "0.17",
                        "memory.fraction 0.17 gives"),
                new Case(
                        "user fraction with room is honoured without warning",
                        with(llama70b(8), s -> s.memory.fraction = "0.85"),
                        PRO,
                        Outcome.OK,
                        "0.85",
                        null),
                new Case(
                        "seed spec at 8192 batch tokens: 0.95 still fits our estimate",
                        with(llama70b(8), s -> s.memory.fraction = "0.95"),
                        PRO,
                        Outcome.OK,
                        "0.95",
                        null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void plans(Case c) {
        Plan plan = Planner.plan(c.spec(), List.of(node("n-0", c.fixture(), 0)), SETTINGS);

        assertThat(plan.outcome()).as(plan.message()).isEqualTo(c.outcome());
        if (c.messageContains() != null) {
            assertThat(plan.message()).contains(c.messageContains());
        } else {
            assertThat(plan.warnings()).isEmpty();
        }
        if (c.fractionOrNull() != null) {
            assertThat(plan.memory().staticFraction()).isEqualTo(Double.parseDouble(c.fractionOrNull()));
        }
    }

    @Test
    void ncclPlanCountsNoIpcBuffersAndAGreaterAutoFraction() {
        Plan custom = Planner.plan(seedSpec("auto"), seedBox(), SETTINGS);
        Plan nccl = Planner.plan(
                with(seedSpec("auto"), s -> s.allreduce.mode = AllreduceSpec.AllreduceMode.NCCL), seedBox(), SETTINGS);

        assertThat(nccl.memory().allreduceIpcBytes()).isZero();
        assertThat(nccl.memory().nonStaticBytes())
                .isEqualTo(custom.memory().nonStaticBytes() - custom.memory().allreduceIpcBytes());
    }

    @Test
    void kvBytesPerTokenSplitsKvHeadsButKeepsAtLeastOne() {
        InferenceDeploymentSpec s = SpecValidator.withDefaults(llama70b(8));
        assertThat(MemoryPlanner.kvBytesPerToken(s, 1)).isEqualTo(2L * 80 * 8 * 128 * 2);
        assertThat(MemoryPlanner.kvBytesPerToken(s, 4)).isEqualTo(2L * 80 * 2 * 128 * 2);
        assertThat(MemoryPlanner.kvBytesPerToken(s, 8)).isEqualTo(2L * 80 * 1 * 128 * 2);
        s.model.geometry.kvHeads = 4;
        assertThat(MemoryPlanner.kvBytesPerToken(s, 8)).isEqualTo(2L * 80 * 1 * 128 * 2);
        // an FP8 checkpoint keeps its KV cache in bf16 unless told otherwise (auto = the activation dtype)
        s.model.dtype = DType.fp8;
        assertThat(MemoryPlanner.kvBytesPerToken(s, 8)).isEqualTo(2L * 80 * 1 * 128 * 2);
        s.serving.kvCacheDtype = KvCacheDtype.fp8;
        assertThat(MemoryPlanner.kvBytesPerToken(s, 8)).isEqualTo(2L * 80 * 1 * 128);
    }

    /**
     * The KV cache's dtype is its own fact: spec.model.dtype (the weights) × spec.serving.kvCacheDtype → the dtype the
     * KV cache is sized in and its bytes per element; the activations compute in 16 bits for FP8 weights.
     */
    record KvCase(String name, DType weights, KvCacheDtype kv, EngineType engine, DType planned) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<KvCase> kvCases() {
        return Stream.of(
                new KvCase(
                        "bf16 model, auto KV: bf16", DType.bf16, KvCacheDtype.auto, EngineType.Tensorlane, DType.bf16),
                new KvCase(
                        "fp16 model, auto KV: fp16", DType.fp16, KvCacheDtype.auto, EngineType.Tensorlane, DType.fp16),
                new KvCase(
                        "fp32 model, auto KV: fp32", DType.fp32, KvCacheDtype.auto, EngineType.Tensorlane, DType.fp32),
                new KvCase(
                        "FP8 block model, auto KV: bf16 (2 bytes), not 1",
                        DType.fp8,
                        KvCacheDtype.auto,
                        EngineType.Tensorlane,
                        DType.bf16),
                new KvCase(
                        "FP8 model, fp8 KV on SGLang: 1 byte",
                        DType.fp8,
                        KvCacheDtype.fp8,
                        EngineType.SGLang,
                        DType.fp8),
                new KvCase(
                        "FP8 model, fp8 KV on vLLM: 1 byte", DType.fp8, KvCacheDtype.fp8, EngineType.VLLM, DType.fp8),
                new KvCase("bf16 model, fp8 KV on SGLang", DType.bf16, KvCacheDtype.fp8, EngineType.SGLang, DType.fp8),
                new KvCase(
                        "FP8 model, fp8 KV on Tensorlane: 1 byte",
                        DType.fp8,
                        KvCacheDtype.fp8,
                        EngineType.Tensorlane,
                        DType.fp8),
                new KvCase(
                        "bf16 model, fp8 KV on Tensorlane: 1 byte",
                        DType.bf16,
                        KvCacheDtype.fp8,
                        EngineType.Tensorlane,
                        DType.fp8),
                new KvCase("FP8 model, fp16 KV", DType.fp8, KvCacheDtype.fp16, EngineType.Tensorlane, DType.fp16),
                new KvCase("fp32 model, bf16 KV", DType.fp32, KvCacheDtype.bf16, EngineType.Tensorlane, DType.bf16));
    }

    static InferenceDeploymentSpec kvSpec(DType weights, KvCacheDtype kv, EngineType engine) {
        return with(llama8b(2), s -> {
            s.model.dtype = weights;
            s.serving = new ServingSpec();
            s.serving.kvCacheDtype = kv;
            s.engine = new EngineSpec();
            s.engine.type = engine;
            s.engine.image = engine == EngineType.Tensorlane ? null : "engine:1";
        });
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kvCases")
    void sizesTheKvCacheInItsOwnDtype(KvCase c) {
        List<NodeInfo> h200 = List.of(node("h200-0", TopologyFixtures.H200_SXM_8, 0));
        Plan plan = Planner.plan(kvSpec(c.weights(), c.kv(), c.engine()), h200, SETTINGS);

        assertThat(plan.outcome()).as(plan.message()).isEqualTo(Outcome.OK);
        MemoryPlan m = plan.memory();
        assertThat(m.kvCacheDtype()).isEqualTo(c.planned());
        assertThat(plan.memoryStatus().kvCacheDtype).isEqualTo(c.planned().name());
        // 2 (K and V) × 32 layers × 4 KV heads per GPU × 128 × the KV dtype's bytes per token
        assertThat(m.kvCacheTokens())
                .isEqualTo(m.kvCacheBytes() / (2L * 32 * 4 * 128 * c.planned().bytes()));
        // activations compute in the weights' dtype, in 16 bits for FP8 weights
        DType compute = c.weights() == DType.fp8 ? DType.bf16 : c.weights();
        Plan same = Planner.plan(kvSpec(compute, KvCacheDtype.auto, c.engine()), h200, SETTINGS);
        assertThat(m.activationBytes()).isEqualTo(same.memory().activationBytes());
    }

    @Test
    void anFp8KvCacheHoldsTwiceTheTokensOfBf16InTheSameMemory() {
        List<NodeInfo> h200 = List.of(node("h200-0", TopologyFixtures.H200_SXM_8, 0));
        MemoryPlan bf16 = Planner.plan(kvSpec(DType.fp8, KvCacheDtype.auto, EngineType.SGLang), h200, SETTINGS)
                .memory();
        MemoryPlan fp8 = Planner.plan(kvSpec(DType.fp8, KvCacheDtype.fp8, EngineType.SGLang), h200, SETTINGS)
                .memory();
        assertThat(fp8.kvCacheBytes()).isEqualTo(bf16.kvCacheBytes());
        assertThat(fp8.staticFraction()).isEqualTo(bf16.staticFraction());
        assertThat(fp8.kvCacheTokens()).isBetween(2 * bf16.kvCacheTokens(), 2 * bf16.kvCacheTokens() + 1);
    }

    @Test
    void activationsGrowWithBatchTokens() {
        InferenceDeploymentSpec s = SpecValidator.withDefaults(llama70b(8));
        long a8k = MemoryPlanner.activationBytes(s, 8);
        s.serving.maxBatchTokens = 16384;
        long a16k = MemoryPlanner.activationBytes(s, 8);
        // live tensors: 8192 × 2 B × (4×8192 + (8+2)×128 + 3×3584) × 2 = 1400 MiB; logits 256 × 128256 × 8 B;
        // workspace;
        // the sampler's parameters and masks (256 rows × (14 + 4008) int32) and penalty pairs (256 × (8192 + 556) × 8
        // B)
        assertThat(a8k)
                .isEqualTo(8192L * 2 * (4 * 8192 + 10 * 128 + 3 * 3584) * 2
                        + 256L * 128256 * 8
                        + 256 * MiB
                        + 4L * 256 * (14 + 4008)
                        + 8L * 256 * (8192 + 556));
        assertThat(a16k - a8k).isEqualTo(8192L * 2 * (4 * 8192 + 10 * 128 + 3 * 3584) * 2);
    }
}
