package io.tensorlane.operator.e2e;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.TestConfig;
import io.tensorlane.operator.reconcile.InferenceDeploymentReconciler;
import io.tensorlane.operator.support.DecisionMetrics;
import io.tensorlane.operator.topology.GpuTopologyNodeLabeller;
import io.tensorlane.testkit.hub.LocalHub;
import io.tensorlane.testkit.hub.SampleModels;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs the operator in-process, in the test JVM, through JOSDK's {@link Operator} API with a client pointed at the
 * local kube-apiserver of the testkit: the same reconciler classes the Quarkus application registers, without Quarkus
 * test start-up (seconds per class on 2 cores). The InferenceDeployment controller watches the test namespace only;
 * the node labeller watches the (cluster-scoped) nodes.
 */
public final class OperatorHarness implements AutoCloseable {
    private final Operator operator;
    private final DecisionMetrics metrics = DecisionMetrics.inMemory();

    /**
     * One loopback Hub with the sample models for the whole test JVM: its endpoint is part of the rendered pod template
     * (HF_ENDPOINT), so an operator restarted in a test must see the same one or every revision would change. An operator
     * process a test starts ({@link OperatorProcess}) gets this JVM's endpoint through {@value #HUB_PROPERTY}.
     */
    private static LocalHub sampleHub;

    static final String HUB_PROPERTY = "tensorlane.test.hub-endpoint";

    static synchronized String sampleHubEndpoint() {
        String given = System.getProperty(HUB_PROPERTY);
        if (given != null) {
            return given;
        }
        if (sampleHub == null) {
            try {
                sampleHub = SampleModels.serve(new LocalHub());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return sampleHub.endpoint();
    }

    private OperatorHarness(
            KubernetesClient client,
            String namespace,
            TensorlaneConfig settings,
            LeaderElectionConfiguration leaderElection) {
        operator = new Operator(o -> {
            o.withKubernetesClient(client)
                    .withCloseClientOnStop(false)
                    .withConcurrentReconciliationThreads(4)
                    .withReconciliationTerminationTimeout(Duration.ofSeconds(5));
            if (leaderElection != null) {
                o.withLeaderElectionConfiguration(leaderElection);
            }
        });
        operator.register(new InferenceDeploymentReconciler(settings, metrics), o -> o.settingNamespace(namespace));
        operator.register(new GpuTopologyNodeLabeller(settings, metrics));
    }

    /**
     * Test settings ({@link TestConfig} with overrides): fast requeue, a short heuristic grace, 1 s rollback backoff, no
     * preflight gate (no preflight Job can measure a simulated GPU; the gate and the PreflightReconciler have their own
     * test), runtime image tensorlane/tensorlane-runtime:test and the loopback Hub with the sample models; then {@code
     * overrides} ({@code key, value, ...}), which win.
     */
    public static TensorlaneConfig testSettings(String... overrides) {
        List<String> kv = new ArrayList<>(List.of(
                "tensorlane.requeue-while-rolling-out",
                "1s",
                "tensorlane.heuristic-grace",
                "3s",
                "tensorlane.preflight.enabled",
                "false",
                "tensorlane.rollback-backoff",
                "1s",
                "tensorlane.runtime-image",
                "tensorlane/tensorlane-runtime:test",
                "tensorlane.model.hub-endpoint",
                sampleHubEndpoint()));
        kv.addAll(List.of(overrides));
        return TestConfig.with(kv.toArray(String[]::new));
    }

    public static OperatorHarness start(KubernetesClient client, String namespace) {
        return start(client, namespace, testSettings());
    }

    public static OperatorHarness start(KubernetesClient client, String namespace, TensorlaneConfig settings) {
        return start(client, namespace, settings, null);
    }

    /** With {@code leaderElection} (null: none): only the holder of the lease reconciles. */
    public static OperatorHarness start(
            KubernetesClient client,
            String namespace,
            TensorlaneConfig settings,
            LeaderElectionConfiguration leaderElection) {
        OperatorHarness h = new OperatorHarness(client, namespace, settings, leaderElection);
        h.operator.start();
        return h;
    }

    public DecisionMetrics metrics() {
        return metrics;
    }

    @Override
    public void close() {
        operator.stop();
    }
}
