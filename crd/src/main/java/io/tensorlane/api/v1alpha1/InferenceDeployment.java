package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/** A tensor-parallel LLM inference deployment whose placement, allreduce and memory plan Tensorlane decides. */
@Group(InferenceDeployment.GROUP)
@Version(InferenceDeployment.VERSION)
@Kind("InferenceDeployment")
@Plural("inferencedeployments")
@Singular("inferencedeployment")
@ShortNames("infd")
@AdditionalPrinterColumn(name = "Engine", jsonPath = ".spec.engine.type", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "TP",
        jsonPath = ".spec.parallelism.tensor",
        type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
        name = "Ready",
        jsonPath = ".status.readyReplicas",
        type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Replicas", jsonPath = ".spec.replicas", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
        name = "Interconnect",
        jsonPath = ".status.topology.interconnect",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Allreduce",
        jsonPath = ".status.allreduce.mode",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "MemFraction",
        jsonPath = ".status.memoryPlan.staticFraction",
        type = AdditionalPrinterColumn.Type.NUMBER)
@AdditionalPrinterColumn(name = "Phase", jsonPath = ".status.phase", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Age",
        jsonPath = ".metadata.creationTimestamp",
        type = AdditionalPrinterColumn.Type.DATE)
public class InferenceDeployment extends CustomResource<InferenceDeploymentSpec, InferenceDeploymentStatus>
        implements Namespaced {
    public static final String GROUP = "tensorlane.io";
    public static final String VERSION = "v1alpha1";

    @Override
    protected InferenceDeploymentStatus initStatus() {
        return new InferenceDeploymentStatus();
    }

    @Override
    @io.fabric8.generator.annotation.Required
    @JsonPropertyDescription("Desired state, written by the user (kubectl or GitOps); the operator never modifies it.")
    public InferenceDeploymentSpec getSpec() {
        return super.getSpec();
    }

    @Override
    @JsonPropertyDescription("Observed state and the operator's decisions; written only by the operator.")
    public InferenceDeploymentStatus getStatus() {
        return super.getStatus();
    }
}
