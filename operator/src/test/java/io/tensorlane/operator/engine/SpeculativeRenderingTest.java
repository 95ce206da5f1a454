package io.tensorlane.operator.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.SpeculativeSpec;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.operator.engine.ProfileFixtures.Ar;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** spec.serving.speculative as each engine is given it, on and off. */
class SpeculativeRenderingTest {
    static SpeculativeSpec ngram(Integer k, Integer n) {
        SpeculativeSpec s = new SpeculativeSpec();
        s.method = SpeculativeSpec.Method.ngram;
        s.numSpeculativeTokens = k;
        s.promptLookupMax = n;
        return s;
    }

    static EngineProfile.Launch launch(EngineType type, SpeculativeSpec s) {
        InferenceDeploymentSpec spec = ProfileFixtures.spec(type, 1);
        spec.serving.speculative = s;
        return EngineProfiles.of(type).launch(spec, ProfileFixtures.plan(Ar.NONE), ProfileFixtures.MODEL);
    }

    /** The value after {@code flag}, or null when the flag is not rendered. */
    static String after(List<String> args, String flag) {
        int i = args.indexOf(flag);
        return i < 0 ? null : args.get(i + 1);
    }

    static Stream<Arguments> tensorlane() {
        return Stream.of(
                Arguments.of(null, null),
                Arguments.of(ngram(4, 3), "ngram:k=4,n=3"),
                Arguments.of(ngram(1, 8), "ngram:k=1,n=8"),
                Arguments.of(ngram(8, 1), "ngram:k=8,n=1"),
                Arguments.of(ngram(null, null), "ngram:k=4,n=3"));
    }

    @ParameterizedTest
    @MethodSource("tensorlane")
    void tensorlaneGetsTheRuntimeGrammarInItsVariable(SpeculativeSpec s, String value) {
        Map<String, String> env = ProfileFixtures.env(launch(EngineType.Tensorlane, s));
        assertThat(env.get(EngineEnv.SPECULATIVE)).isEqualTo(value);
        assertThat(env.containsKey(EngineEnv.SPECULATIVE)).isEqualTo(value != null);
    }

    static Stream<Arguments> vllm() {
        return Stream.of(
                Arguments.of(null, null),
                Arguments.of(
                        ngram(4, 3),
                        Map.of(
                                "method", "ngram",
                                "num_speculative_tokens", 4,
                                "prompt_lookup_max", 3,
                                "prompt_lookup_min", 1)),
                Arguments.of(
                        ngram(8, 1),
                        Map.of(
                                "method", "ngram",
                                "num_speculative_tokens", 8,
                                "prompt_lookup_max", 1,
                                "prompt_lookup_min", 1)));
    }

    @ParameterizedTest
    @MethodSource("vllm")
    void vllmGetsASpeculativeConfigJsonObject(SpeculativeSpec s, Map<String, Object> config) {
        List<String> args = launch(EngineType.VLLM, s).args();
        String json = after(args, "--speculative-config");
        if (config == null) {
            assertThat(json).isNull();
            return;
        }
        assertThat(new KubernetesSerialization().unmarshal(json, Map.class)).isEqualTo(config);
        assertThat(args.subList(args.size() - 2, args.size()).get(0)).isEqualTo("--speculative-config");
    }

    static Stream<Arguments> sglang() {
        return Stream.of(
                Arguments.of(null, null, null),
                Arguments.of(ngram(4, 3), "NGRAM", "5"),
                Arguments.of(ngram(1, 3), "NGRAM", "2"),
                Arguments.of(ngram(8, 8), "NGRAM", "9"));
    }

    @ParameterizedTest
    @MethodSource("sglang")
    void sglangGetsNgramWithKPlusOneDraftTokens(SpeculativeSpec s, String algorithm, String draftTokens) {
        List<String> args = launch(EngineType.SGLang, s).args();
        assertThat(after(args, "--speculative-algorithm")).isEqualTo(algorithm);
        assertThat(after(args, "--speculative-num-draft-tokens")).isEqualTo(draftTokens);
    }

    @Test
    void promptLookupMaxIsNotPassedToSglang() {
        List<String> a = launch(EngineType.SGLang, ngram(4, 2)).args();
        List<String> b = launch(EngineType.SGLang, ngram(4, 7)).args();
        assertThat(a).isEqualTo(b);
        assertThat(a).noneMatch(x -> x.contains("ngram") || x.contains("lookup"));
    }

    @Test
    void speculationChangesNothingElse() {
        for (EngineType t : EngineType.values()) {
            EngineProfile.Launch off = launch(t, null);
            EngineProfile.Launch on = launch(t, ngram(4, 3));
            assertThat(on.args()).as("%s args", t).containsSubsequence(off.args());
            assertThat(on.env()).as("%s env", t).containsAll(off.env());
            assertThat(on.command()).isEqualTo(off.command());
        }
    }
}
