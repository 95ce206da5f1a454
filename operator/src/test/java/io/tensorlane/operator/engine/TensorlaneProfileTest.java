package io.tensorlane.operator.engine;

import static io.tensorlane.operator.engine.ProfileFixtures.JAVA_HEAP;
import static io.tensorlane.operator.engine.ProfileFixtures.JCUDA;
import static io.tensorlane.operator.engine.ProfileFixtures.MODEL;
import static io.tensorlane.operator.engine.ProfileFixtures.PYTORCH_OOM;
import static io.tensorlane.operator.engine.ProfileFixtures.RUNTIME_OOM;
import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.api.v1alpha1.RollbackStatus.Action;
import io.tensorlane.api.v1alpha1.ServingSpec.KvCacheDtype;
import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.AlgorithmTable;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.operator.engine.ProfileFixtures.Ar;
import io.tensorlane.operator.plan.Fixtures;
import io.tensorlane.operator.plan.Outcome;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Planner;
import io.tensorlane.topology.TopologyFixtures;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class TensorlaneProfileTest {
    static final EngineProfile P = EngineProfiles.of(EngineType.Tensorlane);

    record Row(String name, int tp, Ar ar, Map<String, String> env, List<String> absent) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Row> launches() {
        return Stream.of(
                new Row(
                        "TP 2 custom: the table and the buffer size",
                        2,
                        Ar.CUSTOM,
                        Map.of(
                                EngineEnv.WORLD_SIZE,
                                "2",
                                EngineEnv.ALLREDUCE,
                                "Custom",
                                EngineEnv.MAX_MESSAGE_BYTES,
                                "8388608"),
                        List.of()),
                new Row(
                        "TP 2 NCCL: no table, no buffer",
                        2,
                        Ar.NCCL,
                        Map.of(EngineEnv.ALLREDUCE, "NCCL"),
                        List.of(EngineEnv.ALGORITHM_TABLE, EngineEnv.MAX_MESSAGE_BYTES)),
                new Row(
                        "TP 1: no allreduce",
                        1,
                        Ar.NONE,
                        Map.of(EngineEnv.WORLD_SIZE, "1", EngineEnv.ALLREDUCE, "None"),
                        List.of(EngineEnv.ALGORITHM_TABLE, EngineEnv.MAX_MESSAGE_BYTES)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("launches")
    void rendersThePlanIntoTheEnvironment(Row r) {
        EngineProfile.Launch l =
                P.launch(ProfileFixtures.spec(EngineType.Tensorlane, r.tp()), ProfileFixtures.plan(r.ar()), MODEL);
        Map<String, String> env = ProfileFixtures.env(l);

        assertThat(l.command()).as("the image's entrypoint").isNull();
        assertThat(l.args()).containsExactly("serve");
        assertThat(env)
                .containsAllEntriesOf(r.env())
                .doesNotContainKeys(r.absent().toArray(String[]::new))
                .containsEntry(EngineEnv.MODEL, "meta-llama/Llama-3.1-8B-Instruct")
                .containsEntry(EngineEnv.MODEL_DIR, MODEL.dir())
                .containsEntry(EngineEnv.MODEL_SOURCE, MODEL.source())
                .containsEntry(EngineEnv.DTYPE, "bf16")
                .containsEntry(EngineEnv.PORT, "8000")
                .containsEntry(EngineEnv.MEMORY_FRACTION, "0.87")
                .containsEntry(EngineEnv.KV_CACHE_TOKENS, "123456")
                .containsEntry(EngineEnv.KV_CACHE_DTYPE, "bf16")
                .containsEntry(EngineEnv.MAX_MODEL_LENGTH, "8192")
                .containsEntry(EngineEnv.MAX_BATCH_TOKENS, "8192");
        assertThat(env)
                .as("the NCCL environment is the renderer's, for every engine")
                .doesNotContainKey("NCCL_PROTO");
        if (r.ar() == Ar.CUSTOM) {
            AlgorithmTable t = AlgorithmTable.fromJson(env.get(EngineEnv.ALGORITHM_TABLE));
            assertThat(t.worldSize()).isEqualTo(2);
            assertThat(t.source()).isEqualTo("planner");
            assertThat(t.select(65_536)).isEqualTo(Algorithm.OneStage);
            assertThat(t.select(65_537)).isEqualTo(Algorithm.Ring);
        }
    }

    static Stream<Arguments> oomLines() {
        return Stream.of(
                Arguments.of("the runtime's JSON termination message", RUNTIME_OOM, true),
                Arguments.of("a PyTorch line: not a line this runtime writes", PYTORCH_OOM, false),
                Arguments.of("a Java heap OOM", JAVA_HEAP, false),
                Arguments.of("another CUDA error", JCUDA, false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("oomLines")
    void recognisesItsOom(String name, String message, boolean oom) {
        assertThat(ProfileFixtures.cudaOom(P, message)).isEqualTo(oom);
    }

    @Test
    void takesTheStaticFractionIsMeasuredByThePreflightAndServesHealthReadyAndLive() {
        assertThat(P.memoryFraction(ProfileFixtures.plan(Ar.CUSTOM).memory())).isEqualTo(ProfileFixtures.STATIC);
        assertThat(P.readyPath()).isEqualTo("/health/ready");
        assertThat(P.livePath()).isEqualTo("/health/live");
        assertThat(P.preflight()).isTrue();
        assertThat(P.oomLogMarkers()).isEmpty();
        assertThat(P.remediations())
                .containsExactly(Action.LowerMemoryFraction, Action.ShrinkAllreduceBuffer, Action.FallBackToNccl);
    }

    /** TENSORLANE_KV_CACHE_DTYPE is the dtype the plan sized the KV cache (and its tokens) with. */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(
            value = DType.class,
            names = {"bf16", "fp16", "fp32", "fp8"})
    void rendersTheKvCacheDtypeOfThePlan(DType kv) {
        EngineProfile.Launch l =
                P.launch(ProfileFixtures.spec(EngineType.Tensorlane, 2), ProfileFixtures.plan(Ar.CUSTOM, kv), MODEL);
        assertThat(ProfileFixtures.env(l))
                .containsEntry(EngineEnv.KV_CACHE_DTYPE, kv.name())
                .containsEntry(EngineEnv.KV_CACHE_TOKENS, "123456");
        assertThat(l.args()).containsExactly("serve");
    }

    /**
     * The runtime keeps an FP8 KV cache (e4m3, 1 byte an element): every kvCacheDtype is taken, and the plan of fp8 holds
     * twice the tokens of bf16 in the same KV bytes, rendered as TENSORLANE_KV_CACHE_DTYPE=fp8 with those tokens.
     */
    @Test
    void takesEveryKvCacheDtypeAndAnFp8PlanHoldsTwiceTheTokens() {
        var spec = ProfileFixtures.spec(EngineType.Tensorlane, 2);
        for (KvCacheDtype kv : KvCacheDtype.values()) {
            spec.serving.kvCacheDtype = kv;
            assertThat(P.validate(spec)).as(kv.name()).isNull();
        }
        var h200 = List.of(Fixtures.node("n-0", TopologyFixtures.H200_SXM_8, 0));
        spec.serving.kvCacheDtype = KvCacheDtype.bf16;
        Plan bf16 = Planner.plan(spec, h200, Fixtures.SETTINGS);
        spec.serving.kvCacheDtype = KvCacheDtype.fp8;
        Plan fp8 = Planner.plan(spec, h200, Fixtures.SETTINGS);
        assertThat(fp8.outcome()).as(fp8.message()).isEqualTo(Outcome.OK);
        assertThat(fp8.memory().kvCacheDtype()).isEqualTo(DType.fp8);
        assertThat(fp8.memory().kvCacheBytes()).isEqualTo(bf16.memory().kvCacheBytes());
        assertThat(fp8.memory().kvCacheTokens())
                .isBetween(2 * bf16.memory().kvCacheTokens(), 2 * bf16.memory().kvCacheTokens() + 1);
        assertThat(ProfileFixtures.env(P.launch(spec, fp8, MODEL)))
                .containsEntry(EngineEnv.KV_CACHE_DTYPE, "fp8")
                .containsEntry(
                        EngineEnv.KV_CACHE_TOKENS, Long.toString(fp8.memory().kvCacheTokens()));
    }

    @Test
    void needsNoImage() {
        var spec = ProfileFixtures.spec(EngineType.Tensorlane, 2);
        spec.engine.image = null;
        assertThat(P.validate(spec)).isNull();
        spec.engine.image = "registry.example/tensorlane-runtime:dev";
        assertThat(P.validate(spec)).isNull();
    }
}
