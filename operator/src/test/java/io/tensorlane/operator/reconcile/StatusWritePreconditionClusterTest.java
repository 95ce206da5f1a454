package io.tensorlane.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.api.v1alpha1.RollbackStatus;
import io.tensorlane.testkit.RepoRoot;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import org.junit.jupiter.api.Test;

/**
 * The operator's status write against the real API server: a status computed from a copy that is no longer the stored
 * one is refused (409), so a reconcile that read a stale copy cannot put back what a later write replaced - here a
 * rollback already recorded (status.rollback.handledRevision), whose loss made ApiServerRestartE2ETest roll back twice.
 */
@WithLocalCluster
class StatusWritePreconditionClusterTest {
    @Test
    void aStatusComputedFromAStaleCopyIsRefusedAndTheRecordedRollbackStays(KubernetesClient client, TestNamespace ns)
            throws IOException {
        InferenceDeployment read;
        try (InputStream in = Files.newInputStream(
                RepoRoot.require().resolve("manifests/samples").resolve("llama-3.1-8b-2gpu.yaml"))) {
            InferenceDeployment d = Serialization.unmarshal(in, InferenceDeployment.class);
            d.getMetadata().setNamespace(ns.name());
            d.getMetadata().setName("up");
            read = client.resource(d).create();
        }
        InferenceDeploymentStatus handled = new InferenceDeploymentStatus();
        handled.revision = "stable";
        handled.rollback = new RollbackStatus();
        handled.rollback.generation = 1L;
        handled.rollback.attempts = 1;
        handled.rollback.handledRevision = "failing";
        InferenceDeployment written = StatusWrites.apply(client, read, handled);
        assertThat(written.getStatus().rollback.handledRevision).isEqualTo("failing");

        InferenceDeploymentStatus fromStaleCopy = new InferenceDeploymentStatus(); // what `read` led to decide again
        fromStaleCopy.revision = "stable";
        assertThatThrownBy(() -> StatusWrites.apply(client, read, fromStaleCopy))
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(409);
                    assertThat(StatusWrites.staleRead(e)).isTrue();
                });
        InferenceDeployment stored = client.resources(InferenceDeployment.class)
                .inNamespace(ns.name())
                .withName("up")
                .get();
        assertThat(stored.getStatus().rollback.handledRevision)
                .as("the recorded rollback is still there")
                .isEqualTo("failing");

        InferenceDeploymentStatus next = Serialization.clone(written.getStatus());
        next.revision = "next";
        assertThat(StatusWrites.apply(client, written, next).getStatus().revision)
                .as("a status computed from the stored copy is written")
                .isEqualTo("next");
    }
}
