package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;

/** What the operator observed and decided. Written only by the operator, through the status subresource. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class InferenceDeploymentStatus {
    @JsonPropertyDescription("metadata.generation of the spec this status describes.")
    public Long observedGeneration;

    @JsonPropertyDescription(
            "Lifecycle phase: Pending, Progressing, Ready, Degraded, RolledBack, Remediating, Failed, Invalid, "
                    + "Unschedulable or DoesNotFit.")
    public Phase phase;

    @JsonPropertyDescription("Conditions (metav1.Condition): Ready, Progressing, Degraded, RolledBack, InvalidSpec, "
            + "Unschedulable, DoesNotFit, MemoryFractionTooHigh, RollbackFailed, ApplyFailed, ModelUnavailable.")
    public List<Condition> conditions = new ArrayList<>();

    @JsonPropertyDescription("Pods of the current revision.")
    public Integer replicas;

    @JsonPropertyDescription("Pods of the current revision that are Ready.")
    public Integer readyReplicas;

    @JsonPropertyDescription("Hash of the rendered pod template currently applied.")
    public String revision;

    @JsonPropertyDescription("The model as read from its source: architecture, geometry, weight bytes, revision.")
    public ModelStatus model;

    @JsonPropertyDescription("The draft model of spec.serving.speculative.draftModel as read from its source (the same "
            + "facts as status.model); absent without draft-model speculation.")
    public ModelStatus draftModel;

    @JsonPropertyDescription("The hf:// download step of the pods (init container fetch-model): progress read from its "
            + "log. A draft model's download is status.draftDownload.")
    public DownloadStatus download;

    @JsonPropertyDescription("The hf:// download step of the draft model of spec.serving.speculative.draftModel (init "
            + "container fetch-draft-model, which runs after fetch-model): the same fields as status.download; absent "
            + "without an hf:// draft model.")
    public DownloadStatus draftDownload;

    @JsonPropertyDescription("The node topology the plan was made for.")
    public TopologyChoice topology;

    @JsonPropertyDescription("Per-GPU memory plan with its breakdown.")
    public MemoryPlanStatus memoryPlan;

    @JsonPropertyDescription("Allreduce decision and its reason.")
    public AllreduceDecision allreduce;

    @JsonPropertyDescription("The effective spec last applied to the Deployment (user spec plus any remediation).")
    public AppliedSpec lastAppliedSpec;

    @JsonPropertyDescription(
            "The last effective spec whose replicas were all Ready for the stability window with no OOM; the "
                    + "rollback target.")
    public AppliedSpec lastStableSpec;

    @JsonPropertyDescription("Rollback / remediation state for the current generation.")
    public RollbackStatus rollback;

    @JsonPropertyDescription("The most recent failure observed on a pod of the applied revision.")
    public FailureRecord lastFailure;
}
