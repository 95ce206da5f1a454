package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** One GPU. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class GpuInfo {
    @JsonPropertyDescription("Device index (NVML / CUDA_VISIBLE_DEVICES order).")
    public Integer index;

    @JsonPropertyDescription("GPU UUID.")
    public String uuid;

    @JsonPropertyDescription("Product name, e.g. NVIDIA H200.")
    public String product;

    @JsonPropertyDescription("Total memory in bytes.")
    public Long memoryBytes;

    @JsonPropertyDescription("PCI bus id, e.g. 00000000:18:00.0.")
    public String pciBusId;

    @JsonPropertyDescription("NUMA node; absent when unknown.")
    public Integer numaNode;

    @JsonPropertyDescription("Compute capability, e.g. 9.0.")
    public String computeCapability;
}
