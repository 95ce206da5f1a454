package io.tensorlane.operator.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.api.v1alpha1.SpeculativeSpec;
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
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The hf:// download step's progress on the local control plane: the simulator runs the init container fetch-model
 * for 25 s and serves its log (the runtime's progress lines) as a kubelet would; the operator reads it through the API
 * server's pods/log and shows it in the Progressing condition and status.download, with one event at each end. A draft
 * model's step (init container fetch-draft-model, after fetch-model) is status.draftDownload, its messages and events
 * naming the draft model.
 */
@WithLocalCluster
class DownloadProgressE2ETest {
    static final Duration TIMEOUT = Duration.ofSeconds(90);
    static final String SHA = "3333333333333333333333333333333333333333";
    static final String DRAFT_SHA = "6666666666666666666666666666666666666666";
    static final long BYTES = 16_100_000_000L;
    static LocalHub hub;
    static OperatorHarness operator;

    @BeforeAll
    static void start(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) throws Exception {
        hub = new LocalHub();
        hub.put("org/tiny", new LocalHub.Repo(SHA, Checkpoints.tiny("LlamaForCausalLM"), null, false));
        hub.put(
                "org/tiny-draft",
                new LocalHub.Repo(
                        DRAFT_SHA,
                        Checkpoints.llama(DraftModelE2ETest.DRAFT, Checkpoints.Weights.BF16, 1),
                        null,
                        false));
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

    @Test
    void theDraftModelsDownloadStepIsStatusDraftDownload(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        sim.addNode(TopologyFixtures.L40S_2); // GPUs of its own: the other test's pod holds the class's node
        InferenceDeployment d = ModelInspectionE2ETest.userWrites(ns.name(), "dd", "org/tiny", 2, 1);
        d.getSpec().serving.speculative = new SpeculativeSpec();
        d.getSpec().serving.speculative.method = SpeculativeSpec.Method.draft;
        d.getSpec().serving.speculative.numSpeculativeTokens = 3;
        d.getSpec().serving.speculative.draftModel = new ModelSpec();
        d.getSpec().serving.speculative.draftModel.name = "org/tiny-draft";
        client.resource(d).create();
        String draft = "org/tiny-draft@" + DRAFT_SHA;

        // the model's step first (status.download), then the draft's (status.draftDownload), each in Progressing
        InferenceDeployment model = Samples.await(
                client,
                ns.name(),
                "dd",
                TIMEOUT,
                x -> x.getStatus() != null
                        && x.getStatus().download != null
                        && "Downloading".equals(x.getStatus().download.phase));
        assertThat(model.getStatus().download.model).isEqualTo("org/tiny@" + SHA);
        assertThat(model.getStatus().draftDownload)
                .as("the draft's step waits for the model's")
                .isNull();
        InferenceDeployment drafting = Samples.await(client, ns.name(), "dd", TIMEOUT, x -> {
            var dd = x.getStatus().draftDownload;
            return dd != null && "Downloading".equals(dd.phase) && dd.percent != null && dd.percent > 0;
        });
        var dd = drafting.getStatus().draftDownload;
        assertThat(dd.model).isEqualTo(draft);
        assertThat(dd.totalBytes).isEqualTo(BYTES);
        assertThat(dd.pods).isEqualTo(1);
        assertThat(dd.message).matches("fetching draft model " + draft + ": [0-9.]+ of 16\\.1 GB \\([1-9][0-9]?%\\)");
        assertThat(drafting.getStatus().download.phase)
                .as("the model's step ended before the draft's began")
                .isEqualTo("Complete");
        var progressing = Conditions.find(drafting.getStatus().conditions, StatusAggregator.PROGRESSING)
                .orElseThrow();
        assertThat(progressing.getReason()).isEqualTo("DownloadingModel");
        assertThat(progressing.getMessage()).isEqualTo(dd.message);

        // what the operator read: the draft's init container log, as kubectl logs -c fetch-draft-model shows it
        Pod pod = client.pods().inNamespace(ns.name()).list().getItems().stream()
                .filter(p -> p.getMetadata().getName().startsWith("dd-"))
                .findFirst()
                .orElseThrow();
        String log = client.pods()
                .inNamespace(ns.name())
                .withName(pod.getMetadata().getName())
                .inContainer("fetch-draft-model")
                .getLog();
        assertThat(FetchProgress.last(log).orElseThrow().model()).isEqualTo(draft);

        InferenceDeployment ready = Samples.await(client, ns.name(), "dd", TIMEOUT, Samples.phase(Phase.Ready));
        assertThat(ready.getStatus().download.phase).isEqualTo("Complete");
        assertThat(ready.getStatus().draftDownload.phase).isEqualTo("Complete");
        assertThat(ready.getStatus().draftDownload.message)
                .isEqualTo("fetched draft model " + draft + " (16.1 of 16.1 GB)");
        RollbackE2ETest.awaitReasons(client, ns, "dd", "DownloadStarted", "DownloadComplete", "Ready");
        Awaitility.await()
                .atMost(TIMEOUT)
                .untilAsserted(() -> assertThat(messages(client, ns, "dd", "DownloadComplete"))
                        .containsExactlyInAnyOrder(
                                "fetched org/tiny@" + SHA + " (16.1 of 16.1 GB)",
                                "fetched draft model " + draft + " (16.1 of 16.1 GB)"));
        assertThat(messages(client, ns, "dd", "DownloadStarted"))
                .containsExactlyInAnyOrder(
                        "fetching org/tiny@" + SHA + " in 1 pod(s) (init container fetch-model)",
                        "fetching draft model " + draft + " in 1 pod(s) (init container fetch-draft-model)");
    }

    static List<String> messages(KubernetesClient client, TestNamespace ns, String name, String reason) {
        return client.v1().events().inNamespace(ns.name()).list().getItems().stream()
                .filter(e -> name.equals(e.getInvolvedObject().getName()) && reason.equals(e.getReason()))
                .map(e -> e.getMessage())
                .toList();
    }
}
