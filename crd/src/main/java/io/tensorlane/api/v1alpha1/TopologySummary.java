package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.ArrayList;
import java.util.List;

/** Classification of a node's GPUs. */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public class TopologySummary {
    @JsonPropertyDescription("Number of GPUs.")
    public Integer gpuCount;

    @JsonPropertyDescription("GPU product (the common one; 'mixed' when products differ).")
    public String product;

    @JsonPropertyDescription("Smallest per-GPU memory in bytes.")
    public Long gpuMemoryBytes;

    @JsonPropertyDescription("NVLink (every pair over NVLink), PCIe (no NVLink), Mixed, or NotApplicable (one GPU).")
    public Interconnect interconnect;

    @JsonPropertyDescription("Full (every pair P2P-capable), Partial, None, or NotApplicable (one GPU).")
    public P2p p2p;

    @JsonPropertyDescription("GPU index groups that share a PCIe switch or NUMA node (NVLink nodes: one island).")
    public List<List<Integer>> islands = new ArrayList<>();

    @JsonPropertyDescription("High for a probe result, Low for a heuristic.")
    public String confidence;

    /** Interconnect classes. */
    public enum Interconnect {
        NVLink,
        PCIe,
        Mixed,
        NotApplicable
    }

    /** P2P classes. */
    public enum P2p {
        Full,
        Partial,
        None,
        NotApplicable
    }
}
