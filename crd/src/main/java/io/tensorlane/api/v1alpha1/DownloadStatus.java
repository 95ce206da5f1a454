package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * The hf:// download step (init container fetch-model) of the deployment's pods, as the operator reads it from the
 * step's log. Updated at most once per 10% or 30 s.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class DownloadStatus {
    @JsonPropertyDescription("The model being fetched, org/name@commit.")
    public String model;

    @JsonPropertyDescription(
            "Downloading (some pod's download step runs: fetch-model, or fetch-draft-model for status.draftDownload), "
                    + "Complete, or Failed (the step exited with an error; message says why).")
    public String phase;

    @JsonPropertyDescription("Pods whose download step runs now.")
    public Integer pods;

    @JsonPropertyDescription("Bytes on disk in the slowest downloading pod (resumed parts included).")
    public Long doneBytes;

    @JsonPropertyDescription("Bytes of the files to fetch (0 until the step has listed them).")
    public Long totalBytes;

    @JsonPropertyDescription("doneBytes / totalBytes in whole percent.")
    public Integer percent;

    @JsonPropertyDescription("For a person, e.g. fetching org/name@commit: 3.2 of 16.1 GB (20%); for the draft model "
            + "fetching draft model org/name@commit: 0.4 of 2.5 GB (16%).")
    public String message;

    @JsonPropertyDescription("When this was last updated (RFC 3339).")
    public String updatedAt;
}
