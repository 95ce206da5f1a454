package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;

/** Parallelism inside one pod. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ParallelismSpec {
    @Required
    @Min(1)
    @Max(8)
    @JsonPropertyDescription("Tensor-parallel degree: GPUs per pod, all on one node (1-8).")
    public Integer tensor;
}
