package io.tensorlane.operator.e2e;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.testkit.RepoRoot;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.time.Duration;
import java.util.function.Predicate;
import org.awaitility.Awaitility;

/** The committed samples (manifests/samples) and small helpers to wait on status. */
final class Samples {
    static final String SEED_PCIE = "llama-3.3-70b-8x-rtx-pro-6000-pcie.yaml";
    static final String SMALL_2GPU = "llama-3.1-8b-2gpu.yaml";

    private Samples() {}

    /** A sample, renamed and placed in {@code namespace}, with a short stability window for tests. */
    static InferenceDeployment load(String file, String namespace, String name) {
        try (InputStream in = Files.newInputStream(
                RepoRoot.require().resolve("manifests/samples").resolve(file))) {
            InferenceDeployment d = Serialization.unmarshal(in, InferenceDeployment.class);
            d.getMetadata().setNamespace(namespace);
            d.getMetadata().setName(name);
            d.getSpec().rollout.stabilityWindowSeconds = 2;
            return d;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static InferenceDeployment get(KubernetesClient client, String ns, String name) {
        return client.resources(InferenceDeployment.class)
                .inNamespace(ns)
                .withName(name)
                .get();
    }

    static InferenceDeployment await(
            KubernetesClient client,
            String ns,
            String name,
            Duration timeout,
            Predicate<InferenceDeployment> condition) {
        try {
            return Awaitility.await()
                    .atMost(timeout)
                    .pollInterval(Duration.ofMillis(200))
                    .ignoreExceptions()
                    .until(() -> get(client, ns, name), d -> d != null && condition.test(d));
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            InferenceDeployment last = get(client, ns, name);
            throw new AssertionError(
                    "InferenceDeployment " + ns + "/" + name + " did not reach the expected state in " + timeout
                            + "; status: " + (last == null ? "(gone)" : Serialization.asJson(last.getStatus())),
                    e);
        }
    }

    static Predicate<InferenceDeployment> phase(Phase phase) {
        return d -> d.getStatus() != null
                && d.getStatus().phase == phase
                && d.getMetadata().getGeneration().equals(d.getStatus().observedGeneration);
    }
}
