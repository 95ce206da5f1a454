package io.tensorlane.operator.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.GpuLink.LinkType;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.operator.engine.ProfileFixtures.Ar;
import io.tensorlane.operator.plan.AllreduceChoice;
import io.tensorlane.operator.plan.NcclP2pLevel;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every flag, flag value and environment variable a profile renders is a name of the pinned upstream release, as
 * recorded in {@code engine-flags/<engine>.json} (release, file, line or locator of each name); the NCCL variables
 * and levels the plan adds are in {@code engine-flags/nccl.json}.
 */
class UpstreamNamesTest {
    @SuppressWarnings("unchecked")
    static Map<String, Object> fixture(String name) throws Exception {
        try (InputStream in = UpstreamNamesTest.class.getResourceAsStream("/engine-flags/" + name + ".json")) {
            assertThat(in).as("fixture " + name).isNotNull();
            return new KubernetesSerialization().unmarshal(in, Map.class);
        }
    }

    @SuppressWarnings("unchecked")
    static Set<String> names(Map<String, Object> fixture, String list) {
        Set<String> out = new HashSet<>();
        for (Map<String, Object> e : (List<Map<String, Object>>) fixture.getOrDefault(list, List.of())) {
            out.add((String) e.get("name"));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    static Map<String, List<String>> values(Map<String, Object> fixture) {
        Map<String, List<String>> out = new java.util.HashMap<>();
        ((Map<String, Map<String, Object>>) fixture.getOrDefault("values", Map.of()))
                .forEach((k, v) -> out.put(k, (List<String>) v.get("names")));
        return out;
    }

    /** Launches over every knob the profiles read: TP, allreduce, KV dtype, model dtype, batch tokens, speculation. */
    static List<EngineProfile.Launch> launches(EngineType type) {
        EngineProfile p = EngineProfiles.of(type);
        List<EngineProfile.Launch> out = new ArrayList<>();
        for (int tp : new int[] {1, 2}) {
            for (Ar ar : Ar.values()) {
                for (DType kv : DType.values()) {
                    for (DType model : DType.values()) {
                        for (int batch : new int[] {8192, 32_768}) {
                            InferenceDeploymentSpec spec = ProfileFixtures.spec(type, tp);
                            spec.model.dtype = model;
                            spec.serving.maxBatchTokens = batch;
                            out.add(p.launch(spec, ProfileFixtures.plan(ar, kv), ProfileFixtures.MODEL));
                        }
                        InferenceDeploymentSpec speculative = ProfileFixtures.spec(type, tp);
                        speculative.model.dtype = model;
                        speculative.serving.speculative = new io.tensorlane.api.v1alpha1.SpeculativeSpec();
                        speculative.serving.speculative.method =
                                io.tensorlane.api.v1alpha1.SpeculativeSpec.Method.ngram;
                        out.add(p.launch(speculative, ProfileFixtures.plan(ar, kv), ProfileFixtures.MODEL));
                        InferenceDeploymentSpec draft = ProfileFixtures.spec(type, tp);
                        draft.model.dtype = model;
                        draft.serving.speculative = DraftRenderingTest.draft(4);
                        out.add(p.launch(draft, ProfileFixtures.plan(ar, kv), DraftRenderingTest.WITH_DRAFT));
                    }
                }
            }
        }
        return out;
    }

    static Stream<EngineType> pythonEngines() {
        return Stream.of(EngineType.SGLang, EngineType.VLLM);
    }

    @ParameterizedTest
    @EnumSource(
            value = EngineType.class,
            names = {"SGLang", "VLLM"})
    void everyRenderedFlagValueAndVariableIsInTheUpstreamFixture(EngineType type) throws Exception {
        Map<String, Object> f = fixture(type.name().toLowerCase(java.util.Locale.ROOT));
        Set<String> flags = names(f, "flags");
        Set<String> env = names(f, "env");
        Set<String> ncclEnv = names(fixture("nccl"), "env");
        Map<String, List<String>> choices = values(f);
        Set<String> seenFlags = new HashSet<>();

        for (EngineProfile.Launch l : launches(type)) {
            List<String> args = l.args();
            for (int i = 0; i < args.size(); i++) {
                String a = args.get(i);
                if (!a.startsWith("--")) {
                    continue;
                }
                seenFlags.add(a);
                assertThat(flags).as("%s renders %s", type, a).contains(a);
                if (choices.containsKey(a)) {
                    assertThat(choices.get(a)).as("%s %s's value", type, a).contains(args.get(i + 1));
                }
            }
            l.env().forEach(e -> assertThat(env).as("%s env", type).contains(e.getName()));
        }
        for (AllreduceChoice.NcclEnv e :
                ProfileFixtures.plan(Ar.CUSTOM).allreduce().ncclEnv()) {
            assertThat(ncclEnv).contains(e.name());
        }
        assertThat(seenFlags)
                .as("the fixture lists no flag the profile never renders")
                .isEqualTo(flags);
    }

    @SuppressWarnings("unchecked")
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"sglang", "vllm", "nccl"})
    void everyFixtureNamesItsReleaseAndWhereEachNameIs(String name) throws Exception {
        Map<String, Object> f = fixture(name);
        assertThat((String) f.get("release")).isNotBlank();
        assertThat((String) f.get("commit")).matches("[0-9a-f]{40}");
        for (String list : List.of("flags", "env")) {
            for (Map<String, Object> e : (List<Map<String, Object>>) f.getOrDefault(list, List.of())) {
                assertThat(e.get("line") != null || e.get("locator") != null)
                        .as("%s %s has a line or a locator", name, e.get("name"))
                        .isTrue();
                assertThat(lineProblem(e))
                        .as("%s %s: an entry with an upstream file names its line", name, e.get("name"))
                        .isNull();
            }
        }
    }

    /**
     * Null when the entry is well placed: it has no upstream file (a POSIX variable such as HOME), or it has a file
     * and a 1-based line in it; otherwise what is wrong.
     */
    static String lineProblem(Map<String, Object> entry) {
        Object file = entry.get("file");
        if (file == null) {
            return null;
        }
        if (!(file instanceof String f) || f.isBlank()) {
            return "file is not a path: " + file;
        }
        Object line = entry.get("line");
        if (!(line instanceof Integer || line instanceof Long)) {
            return "file " + f + " without an integer line (line: " + line + ")";
        }
        if (((Number) line).longValue() < 1) {
            return "file " + f + " with line " + line + " (lines count from 1)";
        }
        return null;
    }

    @ParameterizedTest
    @MethodSource("lineCases")
    void anEntryWithAFileMustNameAPositiveLine(Map<String, Object> entry, boolean accepted) {
        assertThat(lineProblem(entry) == null).as("%s", entry).isEqualTo(accepted);
    }

    static Stream<Arguments> lineCases() {
        Map<String, Object> noFile = new java.util.HashMap<>(Map.of("name", "HOME", "locator", "POSIX"));
        noFile.put("file", null);
        noFile.put("line", null);
        Map<String, Object> nullLine = new java.util.HashMap<>(Map.of("name", "--x", "file", "a.py"));
        nullLine.put("line", null);
        return Stream.of(
                Arguments.of(Map.of("name", "--x", "file", "a.py", "line", 12), true),
                Arguments.of(Map.of("name", "--x", "file", "a.py", "line", 1L), true),
                Arguments.of(noFile, true),
                Arguments.of(nullLine, false),
                Arguments.of(Map.of("name", "--x", "file", "a.py"), false),
                Arguments.of(Map.of("name", "--x", "file", "a.py", "line", 0), false),
                Arguments.of(Map.of("name", "--x", "file", "a.py", "line", -3), false),
                Arguments.of(Map.of("name", "--x", "file", "a.py", "line", "12"), false),
                Arguments.of(Map.of("name", "--x", "file", "a.py", "line", 12.5), false),
                Arguments.of(Map.of("name", "--x", "file", " ", "line", 3), false));
    }

    /** vLLM's --speculative-config JSON: every key and method rendered is a SpeculativeConfig name of the fixture. */
    @Test
    @SuppressWarnings("unchecked")
    void everyVllmSpeculativeConfigKeyAndMethodIsInTheFixture() throws Exception {
        Map<String, Object> pinned = (Map<String, Object>) fixture("vllm").get("speculativeConfig");
        assertThat((String) pinned.get("commit")).matches("[0-9a-f]{40}");
        List<String> keys = (List<String>) pinned.get("keys");
        List<String> methods = (List<String>) pinned.get("methods");
        Set<String> seenKeys = new HashSet<>();
        Set<String> seenMethods = new HashSet<>();
        for (EngineProfile.Launch l : launches(EngineType.VLLM)) {
            int i = l.args().indexOf("--speculative-config");
            if (i < 0) {
                continue;
            }
            Map<String, Object> config =
                    new KubernetesSerialization().unmarshal(l.args().get(i + 1), Map.class);
            seenKeys.addAll(config.keySet());
            seenMethods.add((String) config.get("method"));
        }
        assertThat(keys).containsAll(seenKeys);
        assertThat(seenKeys)
                .as("the fixture lists no key the profile never renders")
                .containsAll(keys);
        assertThat(seenMethods).containsExactlyInAnyOrderElementsOf(methods);
    }

    @Test
    void ncclNamesTheLevelsItParses() throws Exception {
        assertThat(values(fixture("nccl")).get("NCCL_P2P_LEVEL"))
                .containsExactly("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS")
                .doesNotContain("NODE");
        for (LinkType t : LinkType.values()) {
            assertThat(values(fixture("nccl")).get("NCCL_P2P_LEVEL")).contains(NcclP2pLevel.of(t));
        }
    }
}
