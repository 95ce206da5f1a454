package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelGeometry;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.ParallelismSpec;
import io.tensorlane.operator.TestConfig;
import io.tensorlane.operator.engine.EngineProfiles;
import io.tensorlane.topology.TopologyFixtures;
import java.time.Instant;
import java.util.Map;
import java.util.function.Consumer;

/** Specs and nodes shared by the planner, renderer and rollback tests. */
public final class Fixtures {
    public static final Instant NOW = Instant.parse("2026-11-29T12:00:00Z");
    public static final PlannerSettings SETTINGS =
            new PlannerSettings(NOW, TestConfig.defaults().measurementMaxAge(), EngineProfiles::problem);

    private Fixtures() {}

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

    /** Llama-3.2-1B's geometry (16 layers, hidden 2048, 32 heads, 8 KV heads of 64), a draft model's in the tests. */
    public static ModelGeometry llama1bGeometry() {
        ModelGeometry g = new ModelGeometry();
        g.layers = 16;
        g.hiddenSize = 2048;
        g.attentionHeads = 32;
        g.kvHeads = 8;
        g.headDim = 64;
        g.vocabSize = 128_256;
        g.intermediateSize = 8192;
        return g;
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

    /**
     * Llama-3.1-405B-Instruct-FP8 as in manifests/samples (126 layers, hidden 16384, 128 heads, 8 KV heads; weights
     * approximately 410 GB, the sample's figure), without the sample's NVLink requirement.
     */
    public static InferenceDeploymentSpec llama405bFp8(int tensor) {
        InferenceDeploymentSpec s = llama70b(tensor);
        s.model.name = "meta-llama/Llama-3.1-405B-Instruct-FP8";
        s.model.dtype = io.tensorlane.api.v1alpha1.ModelSpec.DType.fp8;
        s.model.weightBytes = 410_000_000_000L;
        s.model.geometry.layers = 126;
        s.model.geometry.hiddenSize = 16384;
        s.model.geometry.attentionHeads = 128;
        s.model.geometry.intermediateSize = 53248;
        return s;
    }

    /** The demo's GPU nodes for a best-fit test: 2 × H200 8-GPU NVLink and 3 × L40S 2-GPU, all GPUs free. */
    public static java.util.List<NodeInfo> h200AndL40s() {
        return java.util.List.of(
                node("h200-0", TopologyFixtures.H200_SXM_8, 0),
                node("h200-1", TopologyFixtures.H200_SXM_8, 0),
                node("l40s-0", TopologyFixtures.L40S_2, 0),
                node("l40s-1", TopologyFixtures.L40S_2, 0),
                node("l40s-2", TopologyFixtures.L40S_2, 0));
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

    public static NodeInfo node(
            String name, String fixture, int used, Consumer<GpuTopologyStatus> change, boolean stale) {
        NodeInfo n = node(name, fixture, used);
        change.accept(n.topology());
        return new NodeInfo(name, n.labels(), n.allocatableGpus(), used, n.topology(), stale);
    }

    /** A node without GPUs and without a GpuTopology. */
    public static NodeInfo cpuNode(String name) {
        return new NodeInfo(name, Map.of(), 0, 0, null, false);
    }
}
