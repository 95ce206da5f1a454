package io.tensorlane.testkit.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.tensorlane.testkit.RepoRoot;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SimRuleTest {
    static Pod pod(String ns, Map<String, String> labels, List<String> args, Map<String, String> env) {
        var c = new io.fabric8.kubernetes.api.model.ContainerBuilder()
                .withName("server")
                .withImage("img")
                .withArgs(args);
        env.forEach((k, v) -> c.addNewEnv().withName(k).withValue(v).endEnv());
        return new PodBuilder()
                .withNewMetadata()
                .withName("p")
                .withNamespace(ns)
                .withLabels(labels)
                .endMetadata()
                .withNewSpec()
                .withContainers(c.build())
                .endSpec()
                .build();
    }

    static final Pod SGLANG_95 =
            pod("a", Map.of("app", "x"), List.of("--tp", "8", "--mem-fraction-static", "0.95"), Map.of());
    static final Pod VLLM_80 = pod("a", Map.of("app", "y"), List.of("--gpu-memory-utilization=0.80"), Map.of());
    static final Pod TL_ENV_94 =
            pod("b", Map.of("app", "x", "tier", "gpu"), List.of(), Map.of("TENSORLANE_MEMORY_FRACTION", "0.94"));
    static final Pod NO_FRACTION = pod("b", Map.of(), List.of("--verbose"), Map.of("OTHER", "1"));

    static Stream<Arguments> cases() {
        SimRule oom = SimRule.forAllPods("oom", SimAction.cudaOom());
        return Stream.of(
                Arguments.of("matches all", oom, NO_FRACTION, true),
                Arguments.of("namespace equal", oom.inNamespace("a"), SGLANG_95, true),
                Arguments.of("namespace differs", oom.inNamespace("a"), TL_ENV_94, false),
                Arguments.of("labels subset", oom.withLabels(Map.of("app", "x")), TL_ENV_94, true),
                Arguments.of("label value differs", oom.withLabels(Map.of("app", "x")), VLLM_80, false),
                Arguments.of("label missing", oom.withLabels(Map.of("tier", "gpu")), SGLANG_95, false),
                Arguments.of("sglang flag above", oom.withMemoryFractionAtLeast(0.93), SGLANG_95, true),
                Arguments.of("vllm flag=value below", oom.withMemoryFractionAtLeast(0.93), VLLM_80, false),
                Arguments.of("tensorlane env above", oom.withMemoryFractionAtLeast(0.93), TL_ENV_94, true),
                Arguments.of(
                        "no fraction never matches a threshold",
                        oom.withMemoryFractionAtLeast(0.0),
                        NO_FRACTION,
                        false),
                Arguments.of("threshold is inclusive", oom.withMemoryFractionAtLeast(0.95), SGLANG_95, true),
                Arguments.of("env threshold", oom.withEnvAtLeast("TENSORLANE_MEMORY_FRACTION", 0.9), TL_ENV_94, true),
                Arguments.of("arg threshold", oom.withArgAtLeast("--tp", 4), SGLANG_95, true),
                Arguments.of("arg threshold below", oom.withArgAtLeast("--tp", 16), SGLANG_95, false),
                Arguments.of(
                        "predicate",
                        oom.withPredicate(p -> p.getMetadata().getLabels().containsKey("tier")),
                        TL_ENV_94,
                        true),
                Arguments.of(
                        "all conditions",
                        oom.inNamespace("b").withLabels(Map.of("tier", "gpu")).withMemoryFractionAtLeast(0.95),
                        TL_ENV_94,
                        false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void matches(String name, SimRule rule, Pod pod, boolean expected) {
        assertThat(rule.matches(pod)).isEqualTo(expected);
    }

    @Test
    void parsesConfigMapYaml() {
        List<SimRule> rules = GpuNodeSimulator.parseRules("""
        - name: seed
          namespace: demo
          labels: {app: llama}
          memoryFractionAtLeast: 0.93
          action: {type: CudaOom, phase: ipc-buffers, requestedBytes: 25165824, freeBytes: 4194304}
          delayMillis: 2000
        - name: crash
          arg: {name: --tp, min: 8}
          action: {type: CrashLoopBackOff, restarts: 5}
        """);
        assertThat(rules).hasSize(2);
        SimRule seed = rules.get(0);
        assertThat(seed.action()).isEqualTo(SimAction.cudaOom("ipc-buffers", 25165824L, 4194304L));
        assertThat(seed.delayMillis()).isEqualTo(2000L);
        assertThat(seed.matches(
                        pod("demo", Map.of("app", "llama"), List.of("--mem-fraction-static", "0.95"), Map.of())))
                .isTrue();
        assertThat(rules.get(1).action()).isEqualTo(SimAction.crashLoop(5));
        assertThat(rules.get(1).matches(SGLANG_95)).isTrue();
    }

    @Test
    void theDemoRulesParse() throws Exception {
        String yaml = Files.readString(RepoRoot.require().resolve("hack/demo/sim-rules.yaml"));
        List<SimRule> rules = GpuNodeSimulator.parseRules(yaml);
        assertThat(rules)
                .extracting(r -> r.action().type())
                .containsExactly(SimAction.Type.CudaOom, SimAction.Type.Succeed, SimAction.Type.Succeed);
        assertThat(rules.get(0).outOfMemory())
                .as("the demo's OOM is computed, not a threshold")
                .isTrue();
        assertThat(rules.get(0).memoryFractionAtLeast()).isNull();
        assertThat(rules.get(0).action().requestedBytes())
                .as("numbers come from the failing allocation")
                .isNull();
        var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        for (SimRule r : rules.subList(1, 3)) { // the canned preflight results are JSON with the rule's world size
            var result = mapper.readTree(r.action().message());
            assertThat(result.get("worldSize").asDouble()).isEqualTo(r.arg().min());
            assertThat(result.get("p2pVerified").asBoolean()).isTrue();
        }
        Pod preflight8 = pod(
                "demo",
                Map.of("app.kubernetes.io/component", "preflight"),
                List.of("selftest", "--world-size", "8"),
                Map.of());
        Pod preflight2 = pod(
                "demo",
                Map.of("app.kubernetes.io/component", "preflight"),
                List.of("selftest", "--world-size", "2"),
                Map.of());
        assertThat(rules.stream()
                        .filter(r -> r.matches(preflight8))
                        .findFirst()
                        .orElseThrow()
                        .name())
                .isEqualTo("preflight-8-gpus");
        assertThat(rules.stream()
                        .filter(r -> r.matches(preflight2))
                        .findFirst()
                        .orElseThrow()
                        .name())
                .isEqualTo("preflight-2-gpus");
    }

    static Stream<Arguments> badRules() {
        return Stream.of(
                Arguments.of("- name: x\n  action: {type: Explode}\n", "Explode"),
                Arguments.of("- name: x\n", "has no action"),
                Arguments.of("- name: x\n  colour: red\n  action: {type: Run}\n", "colour"),
                Arguments.of("- name: x\n  action: {}\n", "needs a type"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("badRules")
    void badRulesGiveAClearMessage(String yaml, String mentioned) {
        assertThatThrownBy(() -> GpuNodeSimulator.parseRules(yaml))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid simulator rules")
                .hasMessageContaining(mentioned);
    }
}
