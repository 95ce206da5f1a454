package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;

/** Observed GPU topology of one node. */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public class GpuTopologyStatus {
    @JsonPropertyDescription("The GPUs of the node, by index.")
    public List<GpuInfo> gpus = new ArrayList<>();

    @JsonPropertyDescription("The link matrix: one entry per unordered GPU pair (a < b).")
    public List<GpuLink> links = new ArrayList<>();

    @JsonPropertyDescription("Classification of the node: interconnect, P2P state and islands.")
    public TopologySummary summary;

    @JsonPropertyDescription(
            "Results of the last preflight Job on this node (selftest + short bench), written by the operator; "
                    + "the probe never writes it.")
    public Measurement measurement;

    @JsonPropertyDescription(
            "Where this came from: probe (measured on the node) or heuristic (derived from GPU Feature "
                    + "Discovery labels; low confidence).")
    public Source source;

    @JsonPropertyDescription("When the probe ran (RFC 3339).")
    public String probeTime;

    @JsonPropertyDescription("Version of the probe that produced this.")
    public String probeVersion;

    @JsonPropertyDescription("NVIDIA driver version on the node.")
    public String driverVersion;

    @JsonPropertyDescription("Conditions, e.g. Stale when the probe result is older than the operator's limit.")
    public List<Condition> conditions = new ArrayList<>();

    /** Origin of the topology. */
    public enum Source {
        probe,
        heuristic
    }
}
