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
import io.tensorlane.operator.engine.ProfileFixtures.Ar;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class VllmProfileTest {
    static final EngineProfile P = EngineProfiles.of(EngineType.VLLM);

    static List<String> args(int tp, String... more) {
        List<String> a = new ArrayList<>(List.of(
                MODEL.dir(),
                "--served-model-name",
                "meta-llama/Llama-3.1-8B-Instruct",
                "--host",
                "0.0.0.0",
                "--port",
                "8000",
                "--tensor-parallel-size",
                Integer.toString(tp),
                "--gpu-memory-utilization",
                "0.93",
                "--max-model-len",
                "8192",
                "--max-num-batched-tokens",
                "8192",
                "--dtype",
                "bfloat16"));
        a.addAll(List.of(more));
        return a;
    }

    static Stream<Arguments> launches() {
        return Stream.of(
                Arguments.of("TP 2 custom: vLLM's own custom allreduce stays on", 2, Ar.CUSTOM, args(2)),
                Arguments.of("TP 2 NCCL: switched off", 2, Ar.NCCL, args(2, "--disable-custom-all-reduce")),
                Arguments.of("TP 1: nothing to switch off", 1, Ar.NONE, args(1)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("launches")
    void rendersTheServeCommandLine(String name, int tp, Ar ar, List<String> args) {
        rendersWithKvCache(name, tp, ar, DType.bf16, args);
    }

    /** The KV cache's dtype: vLLM's --kv-cache-dtype only for fp8 (its fp8 = fp8_e4m3); otherwise its auto. */
    static Stream<Arguments> kvCaches() {
        return Stream.of(
                Arguments.of("bf16 KV: vLLM's auto", 2, Ar.CUSTOM, DType.bf16, args(2)),
                Arguments.of("fp32 KV of an fp32 model: vLLM's auto", 2, Ar.CUSTOM, DType.fp32, args(2)),
                Arguments.of("fp8 KV", 2, Ar.CUSTOM, DType.fp8, args(2, "--kv-cache-dtype", "fp8")),
                Arguments.of("fp8 KV at TP 1", 1, Ar.NONE, DType.fp8, args(1, "--kv-cache-dtype", "fp8")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kvCaches")
    void rendersWithKvCache(String name, int tp, Ar ar, DType kv, List<String> args) {
        EngineProfile.Launch l =
                P.launch(ProfileFixtures.spec(EngineType.VLLM, tp), ProfileFixtures.plan(ar, kv), MODEL);

        assertThat(l.command()).containsExactly("vllm", "serve");
        assertThat(l.args()).containsExactlyElementsOf(args);
        assertThat(ProfileFixtures.env(l)).isEqualTo(Map.of("HOME", "/tmp"));
    }

    static Stream<Arguments> oomLines() {
        return Stream.of(
                Arguments.of("PyTorch's OOM line (FallbackToLogsOnError)", PYTORCH_OOM, true),
                Arguments.of("the runtime's JSON (the download step)", RUNTIME_OOM, true),
                Arguments.of("torch.cuda.OutOfMemoryError", "torch.cuda.OutOfMemoryError: CUDA out of memory.", true),
                Arguments.of("a Java heap OOM of the download step", JAVA_HEAP, false),
                Arguments.of("another CUDA error", JCUDA, false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("oomLines")
    void recognisesItsOom(String name, String message, boolean oom) {
        assertThat(ProfileFixtures.cudaOom(P, message)).isEqualTo(oom);
    }

    @Test
    void probesKeepTheShortTimeoutAndMetricsAreServedByDefault() {
        assertThat(P.probeTimeoutSeconds()).isEqualTo(5);
        assertThat(P.metricsPath()).isEqualTo("/metrics");
        assertThat(P.launch(ProfileFixtures.spec(EngineType.VLLM, 2), ProfileFixtures.plan(Ar.CUSTOM), MODEL)
                        .args())
                .noneMatch(a -> a.contains("metrics"));
    }

    @Test
    void takesTheUtilizationRunsNoPreflightAndServesHealth() {
        assertThat(P.memoryFraction(ProfileFixtures.plan(Ar.CUSTOM).memory())).isEqualTo(ProfileFixtures.UTILIZATION);
        assertThat(P.readyPath()).isEqualTo("/health");
        assertThat(P.livePath()).isEqualTo("/health");
        assertThat(P.preflight()).isFalse();
        assertThat(P.remediations()).containsExactly(Action.LowerMemoryFraction, Action.FallBackToNccl);
    }

    @Test
    void needsAnImage() {
        var spec = ProfileFixtures.spec(EngineType.VLLM, 2);
        assertThat(P.validate(spec)).isNull();
        spec.serving.kvCacheDtype = KvCacheDtype.fp8;
        assertThat(P.validate(spec)).as("an FP8 KV cache is vLLM's own").isNull();
        spec.engine.image = " ";
        assertThat(P.validate(spec)).isEqualTo("spec.engine.image is required for engine VLLM");
    }
}
