package io.tensorlane.operator.e2e;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
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
   * (HF_ENDPOINT), so an operator restarted in a test must see the same one or every revision would change.
   */
  private static LocalHub sampleHub;

  private static synchronized LocalHub sampleHub() {
    if (sampleHub == null) {
      try {
        sampleHub = SampleModels.serve(new LocalHub());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return sampleHub;
  }

  private OperatorHarness(KubernetesClient client, String namespace, OperatorSettings settings, RenderSettings render) {
    operator = new Operator(o -> o.withKubernetesClient(client).withCloseClientOnStop(false)
        .withConcurrentReconciliationThreads(4).withReconciliationTerminationTimeout(Duration.ofSeconds(5)));
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
    return start(client, namespace, settings, renderSettings(sampleHub().endpoint()));
  }

  /** Render settings of the tests: runtime image tensorlane/tensorlane-runtime:test, the given Hub endpoint. */
  public static RenderSettings renderSettings(String hubEndpoint) {
    return RenderSettings.of("tensorlane", "test").withHubEndpoint(hubEndpoint);
  }

  public static OperatorHarness start(KubernetesClient client, String namespace, OperatorSettings settings,
      RenderSettings render) {
    OperatorHarness h = new OperatorHarness(client, namespace, settings, render);
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
