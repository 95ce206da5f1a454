package io.tensorlane.operator.status;

import io.fabric8.kubernetes.api.model.Pod;
import io.tensorlane.api.v1alpha1.AppliedSpec;
import io.tensorlane.api.v1alpha1.FailureRecord;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.api.v1alpha1.RollbackStatus;
import io.tensorlane.operator.model.ModelResolution;
import io.tensorlane.operator.plan.Plan;
import java.time.Instant;
import java.util.List;

/**
 * Everything the status is computed from.
 *
 * @param generation metadata.generation
 * @param previous the status as it is now (conditions keep their lastTransitionTime when unchanged)
 * @param plan the plan of the effective spec
 * @param revision revision of the effective spec (null when the plan is not OK)
 * @param desiredReplicas spec.replicas
 * @param pods pods of the owned Deployment, all revisions
 * @param lastApplied status.lastAppliedSpec after this reconcile
 * @param lastStable status.lastStableSpec after this reconcile
 * @param rollback status.rollback after this reconcile
 * @param lastFailure status.lastFailure after this reconcile
 * @param failureActive a failure is observed on pods of the running revision now
 * @param failed remediation/rollback gave up for this generation (phase Failed)
 * @param hold why the rollout waits (e.g. for the preflight), or null
 * @param rejected the API server's dry-run rejected a child of the effective spec (phase Invalid, InvalidSpec names the
 *     object and field), or null
 * @param applyFailed the last apply of a child failed and the children are not up to date yet (ApplyFailed), or null
 * @param model what is known about the model (status.model, the ModelUnavailable reason), or null
 */
public record StatusInput(
        long generation,
        InferenceDeploymentStatus previous,
        Plan plan,
        String revision,
        int desiredReplicas,
        List<Pod> pods,
        AppliedSpec lastApplied,
        AppliedSpec lastStable,
        RollbackStatus rollback,
        FailureRecord lastFailure,
        boolean failureActive,
        boolean failed,
        String hold,
        Instant now,
        ChildProblem rejected,
        ChildProblem applyFailed,
        ModelResolution model) {}
