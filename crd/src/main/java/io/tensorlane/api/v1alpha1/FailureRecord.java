package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** A failure observed on a pod. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class FailureRecord {
    @JsonPropertyDescription("CudaOutOfMemory, OOMKilled, CrashLoopBackOff or ProgressDeadlineExceeded.")
    public String reason;

    @JsonPropertyDescription("Pod where it was seen.")
    public String pod;

    @JsonPropertyDescription("Revision of that pod.")
    public String revision;

    @JsonPropertyDescription("Details, e.g. the termination message.")
    public String message;

    @JsonPropertyDescription("When it was seen (RFC 3339).")
    public String time;
}
