package io.tensorlane.operator.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.AppliedSpec;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.api.v1alpha1.RollbackStatus;
import io.tensorlane.operator.render.Rendered;
import io.tensorlane.operator.status.ApiRejections;
import io.tensorlane.operator.status.ChildProblem;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.status.StatusAggregator;
import java.util.Objects;

/**
 * The children of one rendered revision (Deployment, Service): checked together with the API server's dry-run before
 * either is written, so a revision with a rejected child never reaches the running Deployment; then applied. A first
 * rollout (no child yet) skips the dry-run: there is nothing running to protect, and a refused first apply is undone.
 * A failure names the child.
 */
final class Children {
    private final ChildApplier applier;

    Children(ChildApplier applier) {
        this.applier = applier;
    }

    /** True when both live children carry what {@code r} would apply. */
    static boolean current(Rendered r, Observation obs) {
        return ChildApplier.upToDate(r.deployment(), obs.deployment())
                && ChildApplier.upToDate(r.service(), obs.service());
    }

    /**
     * The first child the API server rejects, or null when both would be accepted.
     *
     * @throws ChildApplyException when the dry-run itself fails (not a rejection); nothing was written
     */
    ChildProblem dryRun(Rendered r, Observation obs) {
        ChildProblem p = dryRun(r.deployment(), obs.deployment());
        return p != null ? p : dryRun(r.service(), obs.service());
    }

    private ChildProblem dryRun(HasMetadata desired, HasMetadata live) {
        try {
            applier.dryRun(desired, live);
            return null;
        } catch (KubernetesClientException e) {
            ChildProblem p = ApiRejections.describe(
                    desired.getKind(), desired.getMetadata().getName(), e);
            if (ApiRejections.isRejection(e)) {
                return p;
            }
            throw new ChildApplyException(p, null, e);
        }
    }

    /**
     * Applies the Deployment, then the Service; returns whether the Deployment was written.
     *
     * @param onDeploymentWritten runs once the Deployment was written (before the Service is applied)
     *
     * @param written the status as written before the apply (it names the new revision)
     * @param before the status before this reconcile
     * @throws ChildApplyException naming the child; it carries the status that is true afterwards (the written one with
     *     the revision of {@code before} when the Deployment was not applied)
     */
    boolean apply(
            Rendered r,
            Observation obs,
            InferenceDeploymentStatus written,
            InferenceDeploymentStatus before,
            Runnable onDeploymentWritten) {
        boolean deploymentWritten;
        try {
            deploymentWritten = applier.apply(r.deployment(), obs.deployment());
        } catch (KubernetesClientException e) {
            throw new ChildApplyException(
                    ApiRejections.describe(
                            "Deployment", r.deployment().getMetadata().getName(), e),
                    withRevisionOf(written, before),
                    e);
        }
        if (deploymentWritten) {
            onDeploymentWritten.run();
        }
        try {
            applier.apply(r.service(), obs.service());
        } catch (KubernetesClientException e) {
            throw new ChildApplyException(
                    ApiRejections.describe("Service", r.service().getMetadata().getName(), e), written, e);
        }
        return deploymentWritten;
    }

    /**
     * The revision the status may keep claiming when this reconcile applies nothing because the API server rejected a
     * child: {@code last}, unless no Deployment exists. Then nothing runs, and a claimed revision can only be one the
     * API server refused (the status written just before a refused first apply, still in the cache while the withdrawing
     * write is on its way) or one whose Deployment was deleted; claiming it would say a refused revision runs.
     */
    static AppliedSpec stillClaimed(AppliedSpec last, Observation obs, ChildProblem rejected) {
        return rejected != null && obs.deployment() == null ? null : last;
    }

    /**
     * True when the children may be applied without a dry-run first: neither exists yet (no running revision to
     * protect) and the last try was not refused ({@code before} carries no ApplyFailed and no rejected child). A
     * rejection of the real apply then says what a dry-run would have said, and the next reconcile dry-runs again.
     */
    static boolean firstTry(Observation obs, InferenceDeploymentStatus before) {
        return obs.deployment() == null
                && obs.service() == null
                && StatusAggregator.applyFailure(before) == null
                && Conditions.find(before.conditions, StatusAggregator.INVALID_SPEC)
                        .filter(c -> Conditions.TRUE.equals(c.getStatus())
                                && c.getReason() != null
                                && c.getReason().endsWith("Rejected"))
                        .isEmpty();
    }

    /**
     * The first apply ({@link #firstTry}), without a dry-run: the Service, then the Deployment; a Deployment the API server
     * refuses takes the Service just created with it, so a refused first revision leaves no child behind, as the dry-run
     * would have.
     *
     * @throws ChildApplyException naming the child, with {@code written} claiming the revision of {@code before}
     */
    void applyFirst(
            Rendered r,
            InferenceDeploymentStatus written,
            InferenceDeploymentStatus before,
            Runnable onDeploymentWritten) {
        try {
            applier.apply(r.service(), null);
        } catch (KubernetesClientException e) {
            throw new ChildApplyException(
                    ApiRejections.describe("Service", r.service().getMetadata().getName(), e),
                    withRevisionOf(written, before),
                    e);
        }
        try {
            applier.apply(r.deployment(), null);
        } catch (KubernetesClientException e) {
            applier.deleteQuietly(r.service());
            throw new ChildApplyException(
                    ApiRejections.describe(
                            "Deployment", r.deployment().getMetadata().getName(), e),
                    withRevisionOf(written, before),
                    e);
        }
        onDeploymentWritten.run();
    }

    /**
     * {@code written} claiming the applied revision of {@code before}; unless {@code written} records a rollback or
     * remediation attempt that {@code before} does not ({@link #newAttempt}): then {@code written} as it is, its target
     * still claimed, as right after its status write. Put back, the failing revision would be claimed beside a
     * rollback record saying its failure was handled: the next reconcile would take that failing spec as the effective
     * one ({@code RollbackDecider.effectiveSpec}), find its failure "already handled" and never roll back.
     */
    static InferenceDeploymentStatus withRevisionOf(
            InferenceDeploymentStatus written, InferenceDeploymentStatus before) {
        InferenceDeploymentStatus s = Serialization.clone(written);
        if (newAttempt(before.rollback, written.rollback)) {
            return s; // the next reconcile applies the target (its effective spec) and decides nothing again
        }
        s.lastAppliedSpec = before.lastAppliedSpec;
        s.revision = before.revision;
        return s;
    }

    /** True when {@code written} holds an attempt (a Rollback or a remediation step) that {@code before} does not. */
    static boolean newAttempt(RollbackStatus before, RollbackStatus written) {
        return written != null
                && written.attempts != null
                && written.attempts > 0
                && (before == null
                        || !Objects.equals(before.generation, written.generation)
                        || !Objects.equals(before.attempts, written.attempts));
    }
}
