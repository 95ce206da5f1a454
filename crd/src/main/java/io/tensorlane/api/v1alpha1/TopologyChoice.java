package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.ArrayList;
import java.util.List;

/** The topology class the plan targets. */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public class TopologyChoice {
    @JsonPropertyDescription("Nodes that satisfy the placement (pods get node affinity to them).")
    public List<String> nodes = new ArrayList<>();

    @JsonPropertyDescription("GPU product on those nodes.")
    public String product;

    @JsonPropertyDescription("Interconnect of those nodes: NVLink, PCIe, Mixed or NotApplicable.")
    public String interconnect;

    @JsonPropertyDescription("Peer-to-peer state among the GPUs: Full, Partial, None or NotApplicable.")
    public String p2p;

    @JsonPropertyDescription("Per-GPU memory in bytes.")
    public Long gpuMemoryBytes;

    @JsonPropertyDescription("Where the topology came from: probe or heuristic.")
    public String source;
}
