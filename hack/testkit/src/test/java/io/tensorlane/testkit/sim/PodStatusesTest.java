package io.tensorlane.testkit.sim;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import java.time.Instant;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PodStatusesTest {
    static final Instant T0 = Instant.parse("2026-11-29T12:00:00Z");
    static final PodStatuses.Placement AT = new PodStatuses.Placement("10.99.0.1", "10.244.0.7", T0);

    static Pod pod(String restartPolicy) {
        return new PodBuilder()
                .withNewMetadata()
                .withName("p")
                .withNamespace("n")
                .withUid("u1")
                .endMetadata()
                .withNewSpec()
                .withRestartPolicy(restartPolicy)
                .addNewContainer()
                .withName("server")
                .withImage("img")
                .endContainer()
                .addNewContainer()
                .withName("sidecar")
                .withImage("side")
                .endContainer()
                .endSpec()
                .build();
    }

    /** action, restartPolicy -> phase, reason, exit code of the server container's termination. */
    static Stream<Arguments> terminations() {
        return Stream.of(
                Arguments.of(SimAction.oomKilled(), "Always", "Running", "OOMKilled", 137),
                Arguments.of(SimAction.oomKilled(), "Never", "Failed", "OOMKilled", 137),
                Arguments.of(SimAction.cudaOom(), "Always", "Running", "Error", 1),
                Arguments.of(SimAction.cudaOom(), "OnFailure", "Failed", "Error", 1),
                Arguments.of(SimAction.fail("boom"), "Always", "Running", "Error", 1));
    }

    @ParameterizedTest(name = "{0} under {1}")
    @MethodSource("terminations")
    void terminationShape(SimAction action, String policy, String phase, String reason, int exit) {
        PodStatus st = PodStatuses.terminated(pod(policy), AT, action, T0.plusSeconds(5));
        assertThat(st.getPhase()).isEqualTo(phase);
        var server = st.getContainerStatuses().get(0);
        assertThat(server.getName()).isEqualTo("server");
        assertThat(server.getState().getTerminated().getReason()).isEqualTo(reason);
        assertThat(server.getState().getTerminated().getExitCode()).isEqualTo(exit);
        assertThat(server.getReady()).isFalse();
        assertThat(st.getContainerStatuses().get(1).getState().getRunning()).isNotNull();
        assertThat(st.getConditions()).anyMatch(c -> "Ready".equals(c.getType()) && "False".equals(c.getStatus()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("terminations")
    void crashLoopKeepsTheTerminationAsLastState(SimAction action, String ignored, String i2, String reason, int exit) {
        PodStatus st = PodStatuses.crashLoop(pod("Always"), AT, action, 3, T0.plusSeconds(5));
        var server = st.getContainerStatuses().get(0);
        assertThat(server.getState().getWaiting().getReason()).isEqualTo("CrashLoopBackOff");
        assertThat(server.getLastState().getTerminated().getReason()).isEqualTo(reason);
        assertThat(server.getLastState().getTerminated().getExitCode()).isEqualTo(exit);
        assertThat(server.getRestartCount()).isEqualTo(3);
        assertThat(st.getPhase()).isEqualTo("Running");
    }

    @ParameterizedTest(name = "ready={0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void runningSetsIpsConditionsAndEveryContainer(boolean ready) {
        PodStatus st = PodStatuses.running(pod("Always"), AT, ready);
        assertThat(st.getPhase()).isEqualTo("Running");
        assertThat(st.getPodIP()).isEqualTo("10.244.0.7");
        assertThat(st.getHostIP()).isEqualTo("10.99.0.1");
        assertThat(st.getContainerStatuses())
                .hasSize(2)
                .allMatch(c -> c.getReady() == ready && c.getState().getRunning() != null);
        assertThat(st.getConditions())
                .filteredOn(c -> Map.of("Ready", 1, "ContainersReady", 1).containsKey(c.getType()))
                .allMatch(c -> c.getStatus().equals(ready ? "True" : "False"));
    }

    @ParameterizedTest(name = "exit {0}")
    @org.junit.jupiter.params.provider.ValueSource(ints = {0, 1})
    void completedJobPods(int exit) {
        PodStatus st =
                PodStatuses.completed(pod("Never"), AT, exit, exit == 0 ? null : "p2p check failed", T0.plusSeconds(2));
        assertThat(st.getPhase()).isEqualTo(exit == 0 ? "Succeeded" : "Failed");
        assertThat(st.getContainerStatuses())
                .allMatch(c -> c.getState().getTerminated().getExitCode() == exit
                        && c.getState().getTerminated().getReason().equals(exit == 0 ? "Completed" : "Error"));
    }

    @org.junit.jupiter.api.Test
    void cudaOomMessageIsTheRuntimesJson() throws Exception {
        String json = PodStatuses.cudaOomMessage(SimAction.cudaOom("graph-buffers", 123L, 45L));
        var node = new ObjectMapper().readTree(json);
        assertThat(node.get("reason").asText()).isEqualTo("CudaOutOfMemory");
        assertThat(node.get("phase").asText()).isEqualTo("graph-buffers");
        assertThat(node.get("requestedBytes").asLong()).isEqualTo(123L);
        assertThat(node.get("freeBytes").asLong()).isEqualTo(45L);
        var parsed = io.tensorlane.contract.TerminationMessage.parse(json);
        assertThat(parsed.reason()).isEqualTo(io.tensorlane.contract.TerminationMessage.CUDA_OUT_OF_MEMORY);
    }

    @org.junit.jupiter.api.Test
    void actionOnANamedContainer() {
        PodStatus st =
                PodStatuses.terminated(pod("Always"), AT, SimAction.oomKilled().onContainer("sidecar"), T0);
        assertThat(st.getContainerStatuses().get(0).getState().getRunning()).isNotNull();
        assertThat(st.getContainerStatuses().get(1).getState().getTerminated().getReason())
                .isEqualTo("OOMKilled");
    }
}
