package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** What the publisher of a GpuTopology declares; everything observed lives in status. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class GpuTopologySpec {
    @JsonPropertyDescription("Name of the Node this topology describes; equals metadata.name.")
    public String nodeName;
}
