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

class SglangProfileTest {
    static final EngineProfile P = EngineProfiles.of(EngineType.SGLang);

    static List<String> args(int tp, String... more) {
        List<String> a = new ArrayList<>(List.of(
                "--model-path",
                MODEL.dir(),
                "--served-model-name",
                "meta-llama/Llama-3.1-8B-Instruct",
                "--host",
                "0.0.0.0",
                "--port",
                "8000",
                "--tp-size",
                Integer.toString(tp),
                "--mem-fraction-static",
                "0.87",
                "--context-length",
                "8192",
                "--chunked-prefill-size",
                "8192",
                "--enable-metrics",
                "--dtype",
                "bfloat16"));
        a.addAll(List.of(more));
        return a;
    }

    static Stream<Arguments> launches() {
        return Stream.of(
                Arguments.of("TP 2 custom: SGLang's own custom allreduce stays on", 2, Ar.CUSTOM, args(2)),
                Arguments.of("TP 2 NCCL: switched off", 2, Ar.NCCL, args(2, "--disable-custom-all-reduce")),
                Arguments.of("TP 1: nothing to switch off", 1, Ar.NONE, args(1)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("launches")
    void rendersTheLaunchServerCommandLine(String name, int tp, Ar ar, List<String> args) {
        rendersWithKvCache(name, tp, ar, DType.bf16, args);
    }

    /** The KV cache's dtype: SGLang's --kv-cache-dtype only for fp8 (e4m3); otherwise its auto, the model's dtype. */
    static Stream<Arguments> kvCaches() {
        return Stream.of(
                Arguments.of("bf16 KV: SGLang's auto", 2, Ar.CUSTOM, DType.bf16, args(2)),
                Arguments.of("fp16 KV of an fp16 model: SGLang's auto", 2, Ar.CUSTOM, DType.fp16, args(2)),
                Arguments.of("fp8 KV: e4m3", 2, Ar.CUSTOM, DType.fp8, args(2, "--kv-cache-dtype", "fp8_e4m3")),
                Arguments.of(
                        "fp8 KV with NCCL",
                        2,
                        Ar.NCCL,
                        DType.fp8,
                        args(2, "--kv-cache-dtype", "fp8_e4m3", "--disable-custom-all-reduce")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kvCaches")
    void rendersWithKvCache(String name, int tp, Ar ar, DType kv, List<String> args) {
        EngineProfile.Launch l =
                P.launch(ProfileFixtures.spec(EngineType.SGLang, tp), ProfileFixtures.plan(ar, kv), MODEL);

        assertThat(l.command()).containsExactly("python3", "-m", "sglang.launch_server");
        assertThat(l.args()).containsExactlyElementsOf(args);
        assertThat(ProfileFixtures.env(l)).isEqualTo(Map.of("HOME", "/tmp"));
    }

    static Stream<Arguments> oomLines() {
        return Stream.of(
                Arguments.of("PyTorch's OOM line (FallbackToLogsOnError)", PYTORCH_OOM, true),
                Arguments.of("the runtime's JSON (the download step)", RUNTIME_OOM, true),
                Arguments.of("cuda error: out of memory", "RuntimeError: CUDA error: out of memory", true),
                Arguments.of("a Java heap OOM of the download step", JAVA_HEAP, false),
                Arguments.of("another CUDA error", JCUDA, false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("oomLines")
    void recognisesItsOom(String name, String message, boolean oom) {
        assertThat(ProfileFixtures.cudaOom(P, message)).isEqualTo(oom);
    }

    /** SGLang's max_prefill_tokens defaults to 16384: a larger batch budget needs it raised too. */
    static Stream<Arguments> batchTokens() {
        return Stream.of(
                Arguments.of(8192, null),
                Arguments.of(16_384, null),
                Arguments.of(16_385, "16385"),
                Arguments.of(65_536, "65536"));
    }

    @ParameterizedTest(name = "{0} → {1}")
    @MethodSource("batchTokens")
    void raisesMaxPrefillTokensAboveItsDefault(int batch, String prefill) {
        var spec = ProfileFixtures.spec(EngineType.SGLang, 1);
        spec.serving.maxBatchTokens = batch;
        List<String> a = P.launch(spec, ProfileFixtures.plan(Ar.NONE), MODEL).args();
        assertThat(a.get(a.indexOf("--chunked-prefill-size") + 1)).isEqualTo(Integer.toString(batch));
        if (prefill == null) {
            assertThat(a).doesNotContain("--max-prefill-tokens");
        } else {
            assertThat(a.get(a.indexOf("--max-prefill-tokens") + 1)).isEqualTo(prefill);
        }
    }

    @Test
    void probesWaitLongerThanItsGeneratingHealthCheck() {
        assertThat(P.probeTimeoutSeconds()).isGreaterThan(SglangProfile.HEALTH_CHECK_TIMEOUT_SECONDS);
        assertThat(P.metricsPath()).isEqualTo("/metrics");
    }

    @Test
    void takesTheStaticFractionRunsNoPreflightAndServesHealth() {
        assertThat(P.memoryFraction(ProfileFixtures.plan(Ar.CUSTOM).memory())).isEqualTo(ProfileFixtures.STATIC);
        assertThat(P.readyPath()).isEqualTo("/health");
        assertThat(P.livePath()).isEqualTo("/health");
        assertThat(P.preflight()).isFalse();
        assertThat(P.remediations()).containsExactly(Action.LowerMemoryFraction, Action.FallBackToNccl);
    }

    @Test
    void needsAnImage() {
        var spec = ProfileFixtures.spec(EngineType.SGLang, 2);
        assertThat(P.validate(spec)).isNull();
        spec.serving.kvCacheDtype = KvCacheDtype.fp8;
        assertThat(P.validate(spec)).as("an FP8 KV cache is SGLang's own").isNull();
        spec.engine.image = " ";
        assertThat(P.validate(spec)).isEqualTo("spec.engine.image is required for engine SGLang");
    }
}
