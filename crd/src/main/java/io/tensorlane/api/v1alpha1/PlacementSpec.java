package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.kubernetes.api.model.Toleration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Where pods may run. */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public class PlacementSpec {
    @Default("Any")
    @JsonPropertyDescription("Required GPU interconnect of the node: Any, NVLink or PCIe. Default Any.")
    public InterconnectRequirement interconnect = InterconnectRequirement.Any;

    @JsonPropertyDescription("Extra node labels the node must carry.")
    public Map<String, String> nodeSelector = new LinkedHashMap<>();

    @JsonPropertyDescription("Tolerations added to the pods (GPU nodes are often tainted).")
    public List<Toleration> tolerations = new ArrayList<>();

    /** Interconnect a deployment may require. */
    public enum InterconnectRequirement {
        Any,
        NVLink,
        PCIe
    }
}
