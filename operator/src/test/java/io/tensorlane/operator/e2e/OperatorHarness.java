package io.tensorlane.operator.e2e;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.tensorlane.operator.OperatorSettings;
import io.tensorlane.operator.reconcile.InferenceDeploymentReconciler;
import io.tensorlane.operator.render.RenderSettings;
import io.tensorlane.operator.support.DecisionMetrics;
import io.tensorlane.operator.topology.GpuTopologyNodeLabeller;
import io.tensorlane.testkit.hub.LocalHub;
import io.tensorlane.testkit.hub.SampleModels;
import java.io.IOException;
import java.io.UncheckedIOException;
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

  private OperatorHarness(KubernetesClient client, String namespace, OperatorSettings settings, RenderSettings render,
      LeaderElectionConfiguration leaderElection) {
    operator = new Operator(o -> {
      o.withKubernetesClient(client).withCloseClientOnStop(false)
          .withConcurrentReconciliationThreads(4).withReconciliationTerminationTimeout(Duration.ofSeconds(5));
      if (leaderElection != null) {
        o.withLeaderElectionConfiguration(leaderElection);
      }
    });
    operator.register(new InferenceDeploymentReconciler(settings, render, metrics),
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

  /** With a loopback Hub serving the models of manifests/samples (header-only, real geometry). */
  public static OperatorHarness start(KubernetesClient client, String namespace, OperatorSettings settings) {
    return start(client, namespace, settings, renderSettings(sampleHubEndpoint()), null);
  }

  /** Render settings of the tests: runtime image tensorlane/tensorlane-runtime:test, the given Hub endpoint. */
  public static RenderSettings renderSettings(String hubEndpoint) {
    return RenderSettings.of("tensorlane", "test").withHubEndpoint(hubEndpoint);
  }

  public static OperatorHarness start(KubernetesClient client, String namespace, OperatorSettings settings,
      RenderSettings render) {
    return start(client, namespace, settings, render, null);
  }

  /** With {@code leaderElection} (null: none): only the holder of the lease reconciles. */
  public static OperatorHarness start(KubernetesClient client, String namespace, OperatorSettings settings,
      LeaderElectionConfiguration leaderElection) {
    return start(client, namespace, settings, renderSettings(sampleHubEndpoint()), leaderElection);
  }

  public static OperatorHarness start(KubernetesClient client, String namespace, OperatorSettings settings,
      RenderSettings render, LeaderElectionConfiguration leaderElection) {
    OperatorHarness h = new OperatorHarness(client, namespace, settings, render, leaderElection);
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
