package io.tensorlane.operator.e2e;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.tensorlane.operator.OperatorSettings;
import io.tensorlane.operator.reconcile.InferenceDeploymentReconciler;
import io.tensorlane.operator.render.RenderSettings;
import io.tensorlane.operator.support.DecisionMetrics;
import io.tensorlane.operator.topology.GpuTopologyNodeLabeller;
import java.time.Duration;

/**
 * Runs the operator in-process, in the test JVM, through JOSDK's {@link Operator} API with a client pointed at the
 * local kube-apiserver of the testkit: the same reconciler classes the Quarkus application registers, without Quarkus
 * test start-up (seconds per class on 2 cores). The InferenceDeployment controller watches the test namespace only;
 * the node labeller watches the (cluster-scoped) nodes.
 */
public final class OperatorHarness implements AutoCloseable {
  private final Operator operator;
  private final DecisionMetrics metrics = DecisionMetrics.inMemory();

  private OperatorHarness(KubernetesClient client, String namespace, OperatorSettings settings,
      LeaderElectionConfiguration leaderElection) {
    operator = new Operator(o -> {
      o.withKubernetesClient(client).withCloseClientOnStop(false)
          .withConcurrentReconciliationThreads(4).withReconciliationTerminationTimeout(Duration.ofSeconds(5));
      if (leaderElection != null) {
        o.withLeaderElectionConfiguration(leaderElection);
      }
    });
    operator.register(new InferenceDeploymentReconciler(settings, RenderSettings.of("tensorlane", "test"), metrics),
        o -> o.settingNamespace(namespace));
    operator.register(new GpuTopologyNodeLabeller(settings, metrics));
  }

  /**
   * Test settings: fast requeue, a short heuristic grace, 1 s rollback backoff, and no preflight gate (no preflight
   * Job can measure a simulated GPU; the gate and the PreflightReconciler have their own test).
   */
  public static OperatorSettings testSettings() {
    return OperatorSettings.defaults().withRequeue(Duration.ofSeconds(1)).withHeuristicGrace(Duration.ofSeconds(3))
        .withPreflightGate(false).withRollbackBackoff(Duration.ofSeconds(1));
  }

  public static OperatorHarness start(KubernetesClient client, String namespace) {
    return start(client, namespace, testSettings());
  }

  public static OperatorHarness start(KubernetesClient client, String namespace, OperatorSettings settings) {
    return start(client, namespace, settings, null);
  }

  /** With {@code leaderElection} (null: none): only the holder of the lease reconciles. */
  public static OperatorHarness start(KubernetesClient client, String namespace, OperatorSettings settings,
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
