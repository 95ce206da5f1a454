package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/** The GPU topology of one node (name = node name), published by the runtime's probe or derived from GFD labels. */
@Group(InferenceDeployment.GROUP)
@Version(InferenceDeployment.VERSION)
@Kind("GpuTopology")
@Plural("gputopologies")
@Singular("gputopology")
@ShortNames("gputopo")
@AdditionalPrinterColumn(
        name = "GPUs",
        jsonPath = ".status.summary.gpuCount",
        type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
        name = "Product",
        jsonPath = ".status.summary.product",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Interconnect",
        jsonPath = ".status.summary.interconnect",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "P2P", jsonPath = ".status.summary.p2p", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Source", jsonPath = ".status.source", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Age",
        jsonPath = ".metadata.creationTimestamp",
        type = AdditionalPrinterColumn.Type.DATE)
public class GpuTopology extends CustomResource<GpuTopologySpec, GpuTopologyStatus> {
    @Override
    protected GpuTopologyStatus initStatus() {
        return new GpuTopologyStatus();
    }

    @Override
    @JsonPropertyDescription("Identity of the node this topology describes.")
    public GpuTopologySpec getSpec() {
        return super.getSpec();
    }

    @Override
    @JsonPropertyDescription("Observed GPU topology of the node: GPUs, link matrix, classification, measurements.")
    public GpuTopologyStatus getStatus() {
        return super.getStatus();
    }
}
