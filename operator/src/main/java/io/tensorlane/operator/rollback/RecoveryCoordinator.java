package io.tensorlane.operator.rollback;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.contract.Allreduce;
import io.tensorlane.operator.engine.EngineProfiles;
import io.tensorlane.operator.plan.AllreduceChoice;
import io.tensorlane.operator.support.DecisionMetrics;
import io.tensorlane.operator.support.EventRecorder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * The rollback state machine's step: feeds the pure {@link FailureDetector} and {@link RollbackDecider} what lives in
 * status and what the caches show, turns the decision into the next rollback state and the effective spec, and queues
 * the event and metric of the decision. All state it reads and returns lives in status, so an operator restart resumes
 * exactly where it stopped (status.rollback.handledRevision prevents handling one failure twice).
 */
public final class RecoveryCoordinator {
    private final EventRecorder events;
    private final DecisionMetrics metrics;
    private final Duration backoffBase;

    public RecoveryCoordinator(EventRecorder events, DecisionMetrics metrics, Duration backoffBase) {
        this.events = events;
        this.metrics = metrics;
        this.backoffBase = backoffBase;
    }

    /**
     * @param pods the pods of the owned Deployment (every revision), from the informer cache
     * @param deployment the owned Deployment, or null
     */
    public RecoveryStep step(InferenceDeployment primary, List<Pod> pods, Deployment deployment, Instant now) {
        long gen = primary.getMetadata().getGeneration();
        InferenceDeploymentSpec user = primary.getSpec();
        InferenceDeploymentStatus st =
                primary.getStatus() == null ? new InferenceDeploymentStatus() : primary.getStatus();
        InferenceDeploymentSpec effective = RollbackDecider.effectiveSpec(user, gen, st);
        boolean failed = st.phase == Phase.Failed && st.rollback != null && Objects.equals(st.rollback.generation, gen);
        var applied = st.lastAppliedSpec;
        if (applied == null || applied.revision == null) {
            return new RecoveryStep(
                    null, effective, false, st.lastStableSpec, st.rollback, st.lastFailure, failed, false, null);
        }
        int replicas = user.replicas == null ? 1 : user.replicas;
        FailureSignal failure = FailureDetector.detect(
                        pods, applied.revision, deployment, EngineProfiles.of(applied.spec), now)
                .orElse(null);
        Instant readySince =
                FailureDetector.allReadySince(pods, applied.revision, replicas).orElse(null);
        double fraction =
                st.memoryPlan != null && st.memoryPlan.staticFraction != null ? st.memoryPlan.staticFraction : 0;
        Allreduce mode = AllreduceChoice.of(st.allreduce);
        RollbackDecision d = RollbackDecider.decide(new RollbackInput(
                gen,
                user,
                applied,
                st.lastStableSpec,
                st.rollback,
                failure,
                readySince,
                fraction,
                mode,
                now,
                backoffBase));
        boolean active = failure != null;
        var stable = st.lastStableSpec;
        var rb = st.rollback;
        var lastFailure = failure != null && isNew(st, failure) ? failure.toRecord() : st.lastFailure;
        Duration requeue = null;
        boolean newTarget = false;
        HasMetadata about = primary;
        if (d instanceof RollbackDecision.Wait w) {
            requeue = Duration.between(now, w.until()).isNegative()
                    ? Duration.ofSeconds(1)
                    : Duration.between(now, w.until());
        } else if (d instanceof RollbackDecision.MarkStable m) {
            stable = m.stable(); // its event comes with the status that records it (StatusEvents)
        } else if (d instanceof RollbackDecision.Report r) {
            rb = r.status() == null ? rb : r.status();
            if (r.failure() != null && isNew(st, r.failure())) {
                events.warning(
                        about,
                        r.failure().kind().name(),
                        "pod " + r.failure().pod() + ": " + r.failure().message() + "; " + r.why());
            }
        } else if (d instanceof RollbackDecision.Rollback r) {
            effective = r.target();
            rb = r.status();
            newTarget = true;
            metrics.rollback("Rollback");
            events.warning(
                    about,
                    "Rollback",
                    "rolled back to the last stable spec (revision " + (stable == null ? "?" : stable.revision) + "): "
                            + r.reason());
        } else if (d instanceof RollbackDecision.Remediate r) {
            effective = r.target();
            rb = r.status();
            newTarget = true;
            metrics.rollback(r.action().name());
            events.warning(
                    about,
                    "Remediated",
                    r.action() + ": " + r.change() + " after " + r.failure().kind() + " on pod "
                            + r.failure().pod());
        } else if (d instanceof RollbackDecision.GiveUp g) {
            rb = g.status() == null ? rb : g.status();
            if (!failed) {
                metrics.rollback("Exhausted");
                events.warning(about, "RollbackFailed", g.message());
            }
            failed = true;
        }
        return new RecoveryStep(d, effective, newTarget, stable, rb, lastFailure, failed, active, requeue);
    }

    private static boolean isNew(InferenceDeploymentStatus st, FailureSignal f) {
        var last = st.lastFailure;
        return last == null
                || !Objects.equals(last.pod, f.pod())
                || !Objects.equals(last.reason, f.kind().name())
                || !Objects.equals(last.revision, f.revision());
    }
}
