package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelGeometry;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.ParallelismSpec;
import io.tensorlane.topology.TopologyFixtures;
import java.time.Instant;
import java.util.Map;
import java.util.function.Consumer;

/** Specs and nodes shared by the planner, renderer and rollback tests. */
public final class Fixtures {
  public static final Instant NOW = Instant.parse("2026-11-29T12:00:00Z");
  public static final PlannerSettings SETTINGS = PlannerSettings.defaults(NOW);

  private Fixtures() {
  }

  /** Llama-3.3-70B-Instruct in bf16 (config.json geometry; 141,107,412,992 bytes of weights). */
  public static InferenceDeploymentSpec llama70b(int tensor) {
    InferenceDeploymentSpec s = new InferenceDeploymentSpec();
    s.model = new ModelSpec();
    s.model.name = "meta-llama/Llama-3.3-70B-Instruct";
    s.model.weightBytes = 141_107_412_992L;
    ModelGeometry g = new ModelGeometry();
    g.layers = 80;
    g.hiddenSize = 8192;
    g.attentionHeads = 64;
    g.kvHeads = 8;
    g.headDim = 128;
    g.vocabSize = 128256;
    g.intermediateSize = 28672;
    s.model.geometry = g;
    s.parallelism = new ParallelismSpec();
    s.parallelism.tensor = tensor;
    return s;
  }

  /** Llama-3.1-8B in bf16 (32 layers, hidden 4096, 32 heads, 8 KV heads; 16,060,522,496 bytes). */
  public static InferenceDeploymentSpec llama8b(int tensor) {
    InferenceDeploymentSpec s = llama70b(tensor);
    s.model.name = "meta-llama/Llama-3.1-8B-Instruct";
    s.model.weightBytes = 16_060_522_496L;
    s.model.geometry.layers = 32;
    s.model.geometry.hiddenSize = 4096;
    s.model.geometry.attentionHeads = 32;
    s.model.geometry.intermediateSize = 14336;
    return s;
  }

  public static InferenceDeploymentSpec with(InferenceDeploymentSpec s, Consumer<InferenceDeploymentSpec> change) {
    change.accept(s);
    return s;
  }

  /** A node with a recorded fixture topology, all GPUs allocatable, {@code used} of them taken. */
  public static NodeInfo node(String name, String fixture, int used) {
    GpuTopologyStatus t = TopologyFixtures.load(fixture);
    int gpus = t.summary.gpuCount;
    return new NodeInfo(name, Map.of("kubernetes.io/hostname", name), gpus, used, t, false);
  }

  public static NodeInfo node(String name, String fixture, int used, Consumer<GpuTopologyStatus> change,
      boolean stale) {
    NodeInfo n = node(name, fixture, used);
    change.accept(n.topology());
    return new NodeInfo(name, n.labels(), n.allocatableGpus(), used, n.topology(), stale);
  }

  /** A node without GPUs and without a GpuTopology. */
  public static NodeInfo cpuNode(String name) {
    return new NodeInfo(name, Map.of(), 0, 0, null, false);
  }
}
