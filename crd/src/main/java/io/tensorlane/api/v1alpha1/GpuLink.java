package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** The link between two GPUs (a < b), as `nvidia-smi topo -m` would show it, plus P2P capabilities. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class GpuLink {
    @JsonPropertyDescription("Index of the first GPU.")
    public Integer a;

    @JsonPropertyDescription("Index of the second GPU.")
    public Integer b;

    @JsonPropertyDescription(
            "Path type: NV (NVLink), PIX (one PCIe switch), PXB (several switches), PHB (host bridge), NODE "
                    + "(within a NUMA node), SYS (across NUMA nodes).")
    public LinkType type;

    @JsonPropertyDescription("Number of active NVLinks between the pair (0 over PCIe).")
    public Integer nvlinks;

    @JsonPropertyDescription("Driver reports P2P read.")
    public Boolean p2pRead;

    @JsonPropertyDescription("Driver reports P2P write.")
    public Boolean p2pWrite;

    @JsonPropertyDescription("Driver reports P2P atomics.")
    public Boolean p2pAtomics;

    @JsonPropertyDescription(
            "A real write/read-back over P2P succeeded (only with --measure); false overrides the driver.")
    public Boolean p2pVerified;

    @JsonPropertyDescription("Measured unidirectional copy bandwidth a->b in GB/s (only with --measure).")
    public Double bandwidthGBps;

    /** Path types, best first. */
    public enum LinkType {
        NV,
        PIX,
        PXB,
        PHB,
        NODE,
        SYS
    }

    /** P2P usable: driver says read and write work and no real check contradicted it. */
    public boolean p2pUsable() {
        return Boolean.TRUE.equals(p2pRead) && Boolean.TRUE.equals(p2pWrite) && !Boolean.FALSE.equals(p2pVerified);
    }
}
