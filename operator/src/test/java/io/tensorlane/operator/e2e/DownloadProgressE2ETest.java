package io.tensorlane.operator.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.contract.FetchProgress;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.status.StatusAggregator;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import io.tensorlane.testkit.hub.Checkpoints;
import io.tensorlane.testkit.hub.LocalHub;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.topology.TopologyFixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The hf:// download step's progress on the local control plane: the simulator runs the init container fetch-model
 * for 25 s and serves its log (the runtime's progress lines) as a kubelet would; the operator reads it through the API
 * server's pods/log and shows it in the Progressing condition and status.download, with one event at each end.
 */
@WithLocalCluster
class DownloadProgressE2ETest {
    static final Duration TIMEOUT = Duration.ofSeconds(90);
    static final String SHA = "3333333333333333333333333333333333333333";
    static final long BYTES = 16_100_000_000L;
    static LocalHub hub;
    static OperatorHarness operator;

    @BeforeAll
    static void start(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) throws Exception {
        hub = new LocalHub();
        hub.put("org/tiny", new LocalHub.Repo(SHA, Checkpoints.tiny("LlamaForCausalLM"), null, false));
        sim.addNode(TopologyFixtures.L40S_2);
        sim.simulateDownloads(Duration.ofSeconds(25), BYTES);
        operator = OperatorHarness.start(
                client, ns.name(), OperatorHarness.testSettings("tensorlane.model.hub-endpoint", hub.endpoint()));
    }

    @AfterAll
    static void stop(GpuNodeSimulator sim) {
        sim.simulateDownloads(null, 0);
        if (operator != null) {
            operator.close();
        }
        if (hub != null) {
            hub.close();
        }
    }

    @Test
    void progressOfTheDownloadStepIsInStatusAndEvents(KubernetesClient client, TestNamespace ns) {
        List<String> messages = new ArrayList<>();
        Set<String> resourceVersions = ConcurrentHashMap.newKeySet();
        client.resource(ModelInspectionE2ETest.userWrites(ns.name(), "dl", "org/tiny", 2, 1))
                .create();
        InferenceDeployment downloading = Samples.await(client, ns.name(), "dl", TIMEOUT, d -> {
            var c = d.getStatus() == null
                    ? null
                    : Conditions.find(d.getStatus().conditions, StatusAggregator.PROGRESSING)
                            .filter(x -> "DownloadingModel".equals(x.getReason()))
                            .orElse(null);
            if (c != null) {
                resourceVersions.add(d.getMetadata().getResourceVersion());
                if (messages.isEmpty() || !messages.get(messages.size() - 1).equals(c.getMessage())) {
                    messages.add(c.getMessage());
                }
            }
            return c != null && d.getStatus().download.percent != null && d.getStatus().download.percent > 0;
        });
        var dl = downloading.getStatus().download;
        assertThat(dl.phase).isEqualTo("Downloading");
        assertThat(dl.model).isEqualTo("org/tiny@" + SHA);
        assertThat(dl.totalBytes).isEqualTo(BYTES);
        assertThat(dl.pods).isEqualTo(1);
        assertThat(downloading.getStatus().phase).isEqualTo(Phase.Progressing);
        assertThat(messages.get(messages.size() - 1))
                .matches("fetching org/tiny@" + SHA + ": [0-9.]+ of 16\\.1 GB \\([1-9][0-9]?%\\)");

        // what the operator read: the init container's log through the API server (pods/log), as kubectl logs shows it
        Pod pod = client.pods().inNamespace(ns.name()).list().getItems().stream()
                .filter(p -> p.getMetadata().getName().startsWith("dl-"))
                .findFirst()
                .orElseThrow();
        String log = client.pods()
                .inNamespace(ns.name())
                .withName(pod.getMetadata().getName())
                .inContainer("fetch-model")
                .getLog();
        assertThat(FetchProgress.last(log))
                .isPresent()
                .get()
                .extracting(FetchProgress::model)
                .isEqualTo("org/tiny@" + SHA);

        InferenceDeployment ready = Samples.await(client, ns.name(), "dl", TIMEOUT, Samples.phase(Phase.Ready));
        assertThat(ready.getStatus().download.phase).isEqualTo("Complete");
        assertThat(ready.getStatus().download.message).isEqualTo("fetched org/tiny@" + SHA + " (16.1 of 16.1 GB)");
        assertThat(Conditions.find(ready.getStatus().conditions, StatusAggregator.PROGRESSING)
                        .orElseThrow()
                        .getReason())
                .isEqualTo("RolloutComplete");
        List<String> reasons =
                RollbackE2ETest.awaitReasons(client, ns, "dl", "DownloadStarted", "DownloadComplete", "Ready");
        assertThat(reasons)
                .as("one event per transition")
                .filteredOn("DownloadStarted"::equals)
                .hasSize(1);
        assertThat(reasons).filteredOn("DownloadComplete"::equals).hasSize(1);
        // a 25 s download polled every 10 s: a handful of status versions, not one per poll
        assertThat(resourceVersions)
                .as("status versions seen while downloading: %s", messages)
                .hasSizeLessThanOrEqualTo(4);
    }
}
