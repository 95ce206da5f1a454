package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** An effective spec as it was applied: the user's spec with any remediation overrides folded in. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class AppliedSpec {
    @JsonPropertyDescription("metadata.generation of the user spec it came from.")
    public Long generation;

    @JsonPropertyDescription("Revision (pod-template hash) rendered from it.")
    public String revision;

    @JsonPropertyDescription("When it was applied or became stable (RFC 3339).")
    public String time;

    @JsonPropertyDescription("The effective spec.")
    public InferenceDeploymentSpec spec;
}
