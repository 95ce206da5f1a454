package io.tensorlane.operator.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.testkit.LocalCluster;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The background event writer against the real API server: order, repeats aggregated, failures that do not stop it,
 * drops when closed.
 */
@WithLocalCluster
class EventSinkClusterTest {
    @Test
    void writesEveryQueuedEventInOrderOffTheCallersThread(KubernetesClient client, TestNamespace ns) {
        ConfigMap about = client.configMaps()
                .inNamespace(ns.name())
                .resource(new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName("about")
                        .endMetadata()
                        .build())
                .create();
        DecisionMetrics metrics = DecisionMetrics.inMemory();
        try (EventSink sink = new EventSink(client, metrics)) {
            EventRecorder recorder = new EventRecorder(sink);
            List<String> reasons = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                reasons.add("Step" + i);
                recorder.normal(about, "Step" + i, "message " + i);
            }
            assertThat(sink.pending()).as("nothing is queued before flush").isZero();
            recorder.flush();
            await().atMost(Duration.ofSeconds(30)).until(() -> sink.pending() == 0);
            assertThat(sink.written()).isEqualTo(30);
            assertThat(sink.failed()).isZero();
            assertThat(sink.dropped()).isZero();
            List<Event> events = client.v1().events().inNamespace(ns.name()).list().getItems().stream()
                    .filter(e -> "about".equals(e.getInvolvedObject().getName()))
                    .sorted(Comparator.comparing(
                            (Event e) -> Long.parseLong(e.getMetadata().getResourceVersion())))
                    .toList();
            assertThat(events).extracting(Event::getReason).containsExactlyElementsOf(reasons);
            assertThat(events)
                    .allSatisfy(e -> assertThat(e.getReportingComponent()).isEqualTo("tensorlane-operator"));
            assertThat(metrics.registry()
                            .get("tensorlane.events.pending")
                            .gauge()
                            .value())
                    .isZero();
        }
    }

    @Test
    void repeatsAreOneEventWhoseCountGrowsAsClientGoAggregatesThem(
            KubernetesClient client, TestNamespace ns, LocalCluster cluster) {
        ConfigMap about = client.configMaps()
                .inNamespace(ns.name())
                .resource(new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName("repeats")
                        .endMetadata()
                        .build())
                .create();
        // written as the operator's ClusterRole allows it: events may be created and patched, not read
        client.serviceAccounts()
                .inNamespace(ns.name())
                .resource(new ServiceAccountBuilder()
                        .withNewMetadata()
                        .withName("events-writer")
                        .endMetadata()
                        .build())
                .create();
        client.rbac()
                .roles()
                .inNamespace(ns.name())
                .resource(new RoleBuilder()
                        .withNewMetadata()
                        .withName("events-writer")
                        .endMetadata()
                        .addNewRule()
                        .withApiGroups("")
                        .withResources("events")
                        .withVerbs("create", "patch")
                        .endRule()
                        .build())
                .create();
        client.rbac()
                .roleBindings()
                .inNamespace(ns.name())
                .resource(new RoleBindingBuilder()
                        .withNewMetadata()
                        .withName("events-writer")
                        .endMetadata()
                        .withNewRoleRef()
                        .withApiGroup("rbac.authorization.k8s.io")
                        .withKind("Role")
                        .withName("events-writer")
                        .endRoleRef()
                        .addNewSubject()
                        .withKind("ServiceAccount")
                        .withName("events-writer")
                        .withNamespace(ns.name())
                        .endSubject()
                        .build())
                .create();
        try (KubernetesClient writer = cluster.clientAs(client, ns.name(), "events-writer");
                EventSink sink = new EventSink(writer, null)) {
            EventRecorder recorder = new EventRecorder(sink);
            for (int i = 0; i < 5; i++) {
                recorder.warning(about, "Degraded", "pod p-0 terminated: OOMKilled");
            }
            recorder.normal(about, "Ready", "1/1 replicas Ready");
            recorder.flush();
            await().atMost(Duration.ofSeconds(30)).until(() -> sink.pending() == 0);
            assertThat(sink.written())
                    .as("five repeats queued together and one other event: two writes")
                    .isEqualTo(2);
            recorder.warning(about, "Degraded", "pod p-0 terminated: OOMKilled");
            recorder.flush();
            await().atMost(Duration.ofSeconds(30)).until(() -> sink.pending() == 0);
            assertThat(sink.written()).as("a later repeat patches the count").isEqualTo(3);
            assertThat(sink.failed()).isZero();
            List<Event> events = client.v1().events().inNamespace(ns.name()).list().getItems().stream()
                    .filter(e -> "repeats".equals(e.getInvolvedObject().getName()))
                    .toList();
            assertThat(events).extracting(Event::getReason).containsExactlyInAnyOrder("Degraded", "Ready");
            Event degraded = events.stream()
                    .filter(e -> "Degraded".equals(e.getReason()))
                    .findFirst()
                    .orElseThrow();
            assertThat(degraded.getCount()).isEqualTo(6);
            assertThat(degraded.getType()).isEqualTo("Warning");
        }
    }

    @Test
    void aFailedWriteIsCountedAndTheWriterGoesOn(KubernetesClient client, TestNamespace ns) {
        ConfigMap inMissingNamespace = new ConfigMapBuilder()
                .withNewMetadata()
                .withName("ghost")
                .withNamespace("no-such-namespace-" + ns.name())
                .withUid("0")
                .endMetadata()
                .build();
        ConfigMap about = client.configMaps()
                .inNamespace(ns.name())
                .resource(new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName("real")
                        .endMetadata()
                        .build())
                .create();
        try (EventSink sink = new EventSink(client, null)) {
            EventRecorder recorder = new EventRecorder(sink);
            recorder.warning(inMissingNamespace, "Lost", "the namespace does not exist");
            recorder.normal(about, "Kept", "written after the failure");
            recorder.flush();
            await().atMost(Duration.ofSeconds(30)).until(() -> sink.pending() == 0);
            assertThat(sink.failed()).isEqualTo(1);
            assertThat(sink.written()).isEqualTo(1);
            assertThat(client.v1().events().inNamespace(ns.name()).list().getItems())
                    .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("Kept"));
        }
    }

    @Test
    void aClosedSinkDropsAndCountsInsteadOfBlocking(KubernetesClient client, TestNamespace ns) {
        DecisionMetrics metrics = DecisionMetrics.inMemory();
        EventSink sink = new EventSink(client, metrics);
        sink.close();
        ConfigMap about = new ConfigMapBuilder()
                .withNewMetadata()
                .withName("late")
                .withNamespace(ns.name())
                .endMetadata()
                .build();
        EventRecorder recorder = new EventRecorder(sink);
        recorder.normal(about, "TooLate", "after close");
        recorder.flush();
        assertThat(sink.dropped()).isEqualTo(1);
        assertThat(sink.pending()).isZero();
        assertThat(metrics.count("tensorlane.events.dropped")).isEqualTo(1.0);
    }
}
