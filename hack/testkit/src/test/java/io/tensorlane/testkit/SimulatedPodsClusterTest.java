package io.tensorlane.testkit;

import static io.tensorlane.testkit.SimulatedWorkloads.WAIT_S;
import static io.tensorlane.testkit.SimulatedWorkloads.awaitPods;
import static io.tensorlane.testkit.SimulatedWorkloads.gpuDeployment;
import static io.tensorlane.testkit.SimulatedWorkloads.lastTermination;
import static io.tensorlane.testkit.SimulatedWorkloads.ready;
import static io.tensorlane.testkit.SimulatedWorkloads.waitingReason;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.testkit.sim.SimAction;
import io.tensorlane.testkit.sim.SimRule;
import io.tensorlane.topology.TopologyFixtures;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Pods played by simulator rules: CUDA OOM then crash loop, OOM kill by label, Job pods that succeed, fail or hang. */
@WithLocalCluster
class SimulatedPodsClusterTest {
    /** Each test sees only its own workloads and nodes (see {@link SimulatedWorkloads#cleanUp}). */
    @AfterEach
    void cleanUp(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        SimulatedWorkloads.cleanUp(client, ns, sim);
    }

    @Test
    void ruleTurnsHighMemoryFractionIntoCudaOomThenCrashLoop(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) throws Exception {
        sim.addNode(TopologyFixtures.RTX_PRO_6000_PCIE_8);
        sim.addRule(SimRule.forAllPods("seed-oom", SimAction.cudaOom("ipc-buffers", 25_165_824L, 4_194_304L))
                .inNamespace(ns.name())
                .withMemoryFractionAtLeast(0.93));
        client.apps()
                .deployments()
                .inNamespace(ns.name())
                .resource(gpuDeployment("seed", 1, 8, "--mem-fraction-static=0.95"))
                .create();

        Pod p = awaitPods(
                        client,
                        ns,
                        "seed",
                        1,
                        pod -> lastTermination(pod) != null && "CrashLoopBackOff".equals(waitingReason(pod)))
                .get(0);
        ContainerStatus cs = p.getStatus().getContainerStatuses().get(0);
        assertThat(cs.getRestartCount()).isEqualTo(1);
        assertThat(cs.getReady()).isFalse();
        var term = cs.getLastState().getTerminated();
        assertThat(term.getExitCode()).isEqualTo(1);
        assertThat(term.getReason()).isEqualTo("Error");
        JsonNode msg = new ObjectMapper().readTree(term.getMessage());
        assertThat(msg.get("reason").asText()).isEqualTo("CudaOutOfMemory");
        assertThat(msg.get("phase").asText()).isEqualTo("ipc-buffers");
        assertThat(msg.get("requestedBytes").asLong()).isEqualTo(25_165_824L);
        assertThat(msg.get("freeBytes").asLong()).isEqualTo(4_194_304L);
        assertThat(ready(p)).isFalse();
    }

    @Test
    void ruleOomKillsByLabelWhileOthersRun(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        sim.addNode(TopologyFixtures.H200_SXM_8);
        sim.addRule(SimRule.forAllPods("host-oom", SimAction.oomKilled()).withLabels(Map.of("app", "hog")));
        client.apps()
                .deployments()
                .inNamespace(ns.name())
                .resource(gpuDeployment("hog", 1, 2))
                .create();
        client.apps()
                .deployments()
                .inNamespace(ns.name())
                .resource(gpuDeployment("fine", 1, 2))
                .create();

        // first the kubelet reports the kill itself, then the back-off
        Pod hog = awaitPods(client, ns, "hog", 1, pod -> {
                    var st = pod.getStatus().getContainerStatuses();
                    return st != null && !st.isEmpty() && st.get(0).getState().getTerminated() != null;
                })
                .get(0);
        var killed = hog.getStatus().getContainerStatuses().get(0).getState().getTerminated();
        assertThat(killed.getReason()).isEqualTo("OOMKilled");
        assertThat(killed.getExitCode()).isEqualTo(137);
        Pod looping = awaitPods(client, ns, "hog", 1, pod -> "CrashLoopBackOff".equals(waitingReason(pod)))
                .get(0);
        assertThat(lastTermination(looping).getReason()).isEqualTo("OOMKilled");
        awaitPods(client, ns, "fine", 1, SimulatedWorkloads::ready);
    }

    @Test
    void jobPodSucceedsByDefaultAndFailsOnRule(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        sim.addNode(TopologyFixtures.L40S_2);
        sim.addRule(SimRule.forAllPods("preflight-fails", SimAction.fail("p2p check failed"))
                .withLabels(Map.of("job", "bad")));
        for (String name : List.of("good", "bad")) {
            client.batch()
                    .v1()
                    .jobs()
                    .inNamespace(ns.name())
                    .resource(new JobBuilder()
                            .withNewMetadata()
                            .withName("preflight-" + name)
                            .endMetadata()
                            .withNewSpec()
                            .withBackoffLimit(0)
                            .withNewTemplate()
                            .withNewMetadata()
                            .addToLabels("job", name)
                            .endMetadata()
                            .withNewSpec()
                            .withRestartPolicy("Never")
                            .addNewContainer()
                            .withName("preflight")
                            .withImage("tensorlane/runtime:test")
                            .withNewResources()
                            .addToLimits("nvidia.com/gpu", new Quantity("1"))
                            .endResources()
                            .endContainer()
                            .endSpec()
                            .endTemplate()
                            .endSpec()
                            .build())
                    .create();
        }
        client.batch()
                .v1()
                .jobs()
                .inNamespace(ns.name())
                .withName("preflight-good")
                .waitUntilCondition(
                        j -> j != null
                                && j.getStatus() != null
                                && j.getStatus().getSucceeded() != null
                                && j.getStatus().getSucceeded() == 1,
                        WAIT_S,
                        TimeUnit.SECONDS);
        var bad = client.batch()
                .v1()
                .jobs()
                .inNamespace(ns.name())
                .withName("preflight-bad")
                .waitUntilCondition(
                        j -> j != null
                                && j.getStatus() != null
                                && j.getStatus().getFailed() != null
                                && j.getStatus().getFailed() >= 1,
                        WAIT_S,
                        TimeUnit.SECONDS);
        assertThat(bad.getStatus().getSucceeded()).isNull();
        Pod badPod = client.pods()
                .inNamespace(ns.name())
                .withLabel("job", "bad")
                .list()
                .getItems()
                .get(0);
        assertThat(badPod.getStatus().getPhase()).isEqualTo("Failed");
        assertThat(badPod.getStatus()
                        .getContainerStatuses()
                        .get(0)
                        .getState()
                        .getTerminated()
                        .getMessage())
                .isEqualTo("p2p check failed");
    }

    @Test
    void hangingPodIsNeverReadyUntilTheTestFinishesItOnDemand(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        sim.addNode(TopologyFixtures.L40S_2);
        sim.addRule(SimRule.forAllPods("preflight-hangs", SimAction.hang()).inNamespace(ns.name()));
        client.batch()
                .v1()
                .jobs()
                .inNamespace(ns.name())
                .resource(new JobBuilder()
                        .withNewMetadata()
                        .withName("preflight")
                        .endMetadata()
                        .withNewSpec()
                        .withBackoffLimit(0)
                        .withNewTemplate()
                        .withNewMetadata()
                        .addToLabels("app", "preflight")
                        .endMetadata()
                        .withNewSpec()
                        .withRestartPolicy("Never")
                        .addNewContainer()
                        .withName("preflight")
                        .withImage("tensorlane/runtime:test")
                        .endContainer()
                        .endSpec()
                        .endTemplate()
                        .endSpec()
                        .build())
                .create();
        Pod hanging = awaitPods(
                        client,
                        ns,
                        "preflight",
                        1,
                        p -> "Running".equals(p.getStatus().getPhase()))
                .get(0);
        assertThat(ready(hanging)).isFalse();
        assertThat(hanging.getStatus().getContainerStatuses().get(0).getState().getRunning())
                .isNotNull();

        sim.act(hanging, SimAction.succeed("{\"p2pVerified\":true}"));
        var job = client.batch()
                .v1()
                .jobs()
                .inNamespace(ns.name())
                .withName("preflight")
                .waitUntilCondition(
                        j -> j != null
                                && j.getStatus() != null
                                && j.getStatus().getSucceeded() != null
                                && j.getStatus().getSucceeded() == 1,
                        WAIT_S,
                        TimeUnit.SECONDS);
        assertThat(job.getStatus().getSucceeded()).isEqualTo(1);
        Pod done = client.pods()
                .inNamespace(ns.name())
                .withName(hanging.getMetadata().getName())
                .get();
        assertThat(done.getStatus().getPhase()).isEqualTo("Succeeded");
        assertThat(done.getStatus()
                        .getContainerStatuses()
                        .get(0)
                        .getState()
                        .getTerminated()
                        .getMessage())
                .isEqualTo("{\"p2pVerified\":true}");
    }
}
