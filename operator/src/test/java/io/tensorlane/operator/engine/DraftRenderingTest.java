package io.tensorlane.operator.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.SpeculativeSpec;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.operator.engine.ProfileFixtures.Ar;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Draft-model speculation as each engine is given it: the draft's directory in the pod, k, and nothing else. */
class DraftRenderingTest {
    static final String DIR = "/draft-model/meta-llama--Llama-3.2-1B-Instruct--def";
    static final EngineProfile.ModelLocation WITH_DRAFT =
            new EngineProfile.ModelLocation(ProfileFixtures.MODEL.dir(), ProfileFixtures.MODEL.source(), DIR);

    static SpeculativeSpec draft(Integer k) {
        SpeculativeSpec s = new SpeculativeSpec();
        s.method = SpeculativeSpec.Method.draft;
        s.numSpeculativeTokens = k;
        s.draftModel = new ModelSpec();
        s.draftModel.name = "meta-llama/Llama-3.2-1B-Instruct";
        return s;
    }

    static EngineProfile.Launch launch(EngineType type, int tp, SpeculativeSpec s) {
        InferenceDeploymentSpec spec = ProfileFixtures.spec(type, tp);
        spec.serving.speculative = s;
        return EngineProfiles.of(type).launch(spec, ProfileFixtures.plan(Ar.NONE), WITH_DRAFT);
    }

    static Stream<Arguments> tensorlane() {
        return Stream.of(
                Arguments.of(draft(4), 1, "draft:" + DIR + ",k=4"),
                Arguments.of(draft(1), 2, "draft:" + DIR + ",k=1"),
                Arguments.of(draft(8), 4, "draft:" + DIR + ",k=8"),
                Arguments.of(draft(null), 1, "draft:" + DIR + ",k=4"),
                // disableByBatchSize N counts as vLLM's (off at >= N); the runtime's batch=B is "at most B": B = N - 1
                Arguments.of(limited(4, 2), 1, "draft:" + DIR + ",k=4,batch=1"),
                Arguments.of(limited(4, 9), 2, "draft:" + DIR + ",k=4,batch=8"),
                Arguments.of(limited(2, 4096), 1, "draft:" + DIR + ",k=2,batch=4095"));
    }

    static SpeculativeSpec limited(Integer k, int disableByBatchSize) {
        SpeculativeSpec s = draft(k);
        s.disableByBatchSize = disableByBatchSize;
        return s;
    }

    static Stream<Arguments> batchLimitByEngine() {
        String refused = "spec.serving.speculative." + SpeculativeSpec.BATCH_LIMIT_TENSORLANE_ONLY;
        return Stream.of(
                Arguments.of(EngineType.Tensorlane, limited(4, 8), null),
                Arguments.of(EngineType.VLLM, limited(4, 8), refused),
                Arguments.of(EngineType.SGLang, limited(4, 8), refused),
                Arguments.of(EngineType.VLLM, draft(4), null),
                Arguments.of(EngineType.SGLang, draft(4), null));
    }

    /** vLLM and SGLang (at the pinned commits) cannot stop speculation by batch size: InvalidSpec, not silence. */
    @ParameterizedTest
    @MethodSource("batchLimitByEngine")
    void onlyTensorlaneTakesABatchLimit(EngineType type, SpeculativeSpec s, String problem) {
        InferenceDeploymentSpec spec = ProfileFixtures.spec(type, 1);
        spec.serving.speculative = s;
        assertThat(EngineProfiles.problem(spec)).isEqualTo(problem);
    }

    @ParameterizedTest
    @MethodSource("tensorlane")
    void tensorlaneGetsTheRuntimeGrammarWithTheDraftsDirectory(SpeculativeSpec s, int tp, String value) {
        Map<String, String> env = ProfileFixtures.env(launch(EngineType.Tensorlane, tp, s));
        assertThat(env).containsEntry(EngineEnv.SPECULATIVE, value);
    }

    static Stream<Arguments> vllm() {
        return Stream.of(Arguments.of(draft(4), 1), Arguments.of(draft(2), 2), Arguments.of(draft(8), 8));
    }

    @ParameterizedTest
    @MethodSource("vllm")
    void vllmGetsMethodDraftModelWithTheTargetsTp(SpeculativeSpec s, int tp) {
        List<String> args = launch(EngineType.VLLM, tp, s).args();
        String json = SpeculativeRenderingTest.after(args, "--speculative-config");
        Map<String, Object> expected = new LinkedHashMap<>();
        expected.put("method", "draft_model");
        expected.put("model", DIR);
        expected.put("num_speculative_tokens", s.numSpeculativeTokens);
        expected.put("draft_tensor_parallel_size", tp);
        assertThat(new KubernetesSerialization().unmarshal(json, Map.class)).isEqualTo(expected);
        assertThat(json).doesNotContain("prompt_lookup");
    }

    static Stream<Arguments> sglang() {
        return Stream.of(
                Arguments.of(draft(4), List.of("4", "1", "5")),
                Arguments.of(draft(1), List.of("1", "1", "2")),
                Arguments.of(draft(8), List.of("8", "1", "9")));
    }

    @ParameterizedTest
    @MethodSource("sglang")
    void sglangGetsStandaloneWithTheDraftsPath(SpeculativeSpec s, List<String> stepsTopkTokens) {
        List<String> args = launch(EngineType.SGLang, 2, s).args();
        assertThat(SpeculativeRenderingTest.after(args, "--speculative-algorithm"))
                .isEqualTo("STANDALONE");
        assertThat(SpeculativeRenderingTest.after(args, "--speculative-draft-model-path"))
                .isEqualTo(DIR);
        assertThat(List.of(
                        SpeculativeRenderingTest.after(args, "--speculative-num-steps"),
                        SpeculativeRenderingTest.after(args, "--speculative-eagle-topk"),
                        SpeculativeRenderingTest.after(args, "--speculative-num-draft-tokens")))
                .isEqualTo(stepsTopkTokens);
    }

    @Test
    void aDraftChangesNothingElse() {
        for (EngineType t : EngineType.values()) {
            EngineProfile.Launch off = launch(t, 2, null);
            EngineProfile.Launch on = launch(t, 2, draft(4));
            assertThat(on.args()).as("%s args", t).containsSubsequence(off.args());
            assertThat(on.env()).as("%s env", t).containsAll(off.env());
            assertThat(on.env().size() - off.env().size())
                    .as("%s: at most the speculation variable", t)
                    .isLessThanOrEqualTo(1);
        }
    }

    @Test
    void withoutTheDraftsDirectoryNoEngineRendersDraftSpeculation() {
        for (EngineType t : EngineType.values()) {
            InferenceDeploymentSpec spec = ProfileFixtures.spec(t, 1);
            spec.serving.speculative = draft(4);
            assertThatThrownBy(() ->
                            EngineProfiles.of(t).launch(spec, ProfileFixtures.plan(Ar.NONE), ProfileFixtures.MODEL))
                    .as("%s", t)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("draft model's directory");
        }
    }
}
