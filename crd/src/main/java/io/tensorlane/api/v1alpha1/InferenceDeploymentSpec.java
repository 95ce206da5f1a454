package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;

/** What the user asks for. The operator never writes it. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class InferenceDeploymentSpec {
    @Required
    @JsonPropertyDescription(
            "The model to serve: name, weights source, dtype and geometry (used by the memory planner).")
    public ModelSpec model;

    @Default("{}")
    @JsonPropertyDescription("The serving engine that runs in the pods, its image and extra arguments.")
    public EngineSpec engine = new EngineSpec();

    @Required
    @JsonPropertyDescription("How the model is split across the GPUs of one pod.")
    public ParallelismSpec parallelism;

    @Min(0)
    @Max(1000)
    @Default("1")
    @JsonPropertyDescription(
            "Number of model replicas (pods); each takes parallelism.tensor GPUs on one node. Default 1.")
    public Integer replicas = 1;

    @Default("{}")
    @JsonPropertyDescription("Request-shape limits that size activations and the KV cache.")
    public ServingSpec serving = new ServingSpec();

    @Default("{}")
    @JsonPropertyDescription("Where pods may run: required GPU interconnect, node selector and tolerations.")
    public PlacementSpec placement = new PlacementSpec();

    @Default("{}")
    @JsonPropertyDescription(
            "Allreduce implementation between the GPUs of a pod: Auto (chosen from the topology), Custom or NCCL.")
    public AllreduceSpec allreduce = new AllreduceSpec();

    @Default("{}")
    @JsonPropertyDescription("GPU memory budget: the static memory fraction (auto or a number) and a reserve.")
    public MemorySpec memory = new MemorySpec();

    @Default("{}")
    @JsonPropertyDescription(
            "Rollout behaviour: availability, progress deadline and automatic rollback/remediation on OOM.")
    public RolloutSpec rollout = new RolloutSpec();
}
