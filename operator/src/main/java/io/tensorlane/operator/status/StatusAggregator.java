package io.tensorlane.operator.status;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.tensorlane.api.v1alpha1.DownloadStatus;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.api.v1alpha1.RollbackStatus;
import io.tensorlane.operator.model.DownloadProgress;
import io.tensorlane.operator.plan.Outcome;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.render.Renderer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The one owner of InferenceDeployment conditions and phase. Pure: the same input gives an equal status, so the
 * reconciler can skip the status write when nothing changed. Ready is never True while a pod of the deployment is in
 * CrashLoopBackOff or terminated with an error.
 */
public final class StatusAggregator {
    public static final String READY = "Ready";
    public static final String PROGRESSING = "Progressing";
    public static final String DEGRADED = "Degraded";
    public static final String ROLLED_BACK = "RolledBack";
    public static final String INVALID_SPEC = "InvalidSpec";
    public static final String UNSCHEDULABLE = "Unschedulable";
    public static final String DOES_NOT_FIT = "DoesNotFit";
    public static final String MEMORY_FRACTION_TOO_HIGH = "MemoryFractionTooHigh";
    public static final String ROLLBACK_FAILED = "RollbackFailed";
    /** A child's apply failed (transient or not yet retried); cleared once the children are up to date. */
    public static final String APPLY_FAILED = "ApplyFailed";

    public static final String MODEL_UNAVAILABLE = "ModelUnavailable";

    private StatusAggregator() {}

    public static InferenceDeploymentStatus compute(StatusInput in) {
        InferenceDeploymentStatus prev = in.previous() == null ? new InferenceDeploymentStatus() : in.previous();
        InferenceDeploymentStatus s = new InferenceDeploymentStatus();
        Plan plan = in.plan();
        s.observedGeneration = in.generation();
        s.lastAppliedSpec = in.lastApplied();
        s.lastStableSpec = in.lastStable();
        s.rollback = in.rollback();
        s.lastFailure = in.lastFailure();
        s.revision = in.lastApplied() == null ? null : in.lastApplied().revision;
        s.model = in.model() == null ? null : in.model().status();
        s.draftModel = in.model() == null ? null : in.model().draftStatus();
        if (plan != null) {
            s.topology = plan.topologyStatus();
            s.allreduce = plan.allreduceStatus();
            s.memoryPlan = plan.memoryStatus();
        }
        String running = s.revision;
        List<Pod> current = in.pods().stream()
                .filter(p -> running != null && running.equals(revisionOf(p)))
                .toList();
        List<String> hosts = current.stream()
                .map(p -> p.getSpec() == null ? null : p.getSpec().getNodeName())
                .filter(Objects::nonNull)
                .distinct()
                .sorted()
                .toList();
        if (s.topology != null && !hosts.isEmpty()) {
            // once pods run, the nodes they run on (stable); the planner's candidates (nodes with enough free GPUs
            // right
            // now) change with every pod scheduled anywhere and would rewrite every status in a busy cluster
            s.topology.nodes = new ArrayList<>(hosts);
        }
        s.replicas = current.size();
        s.readyReplicas =
                (int) current.stream().filter(StatusAggregator::podReady).count();
        Optional<String> bad = in.pods().stream()
                .map(StatusAggregator::badPod)
                .flatMap(Optional::stream)
                .findFirst();
        boolean allReady = s.readyReplicas >= in.desiredReplicas()
                && s.replicas == in.desiredReplicas()
                && bad.isEmpty()
                && running != null
                && running.equals(in.revision());
        RollbackStatus.Action lastAction = lastAction(in.rollback(), in.generation());
        boolean rolledBack = lastAction == RollbackStatus.Action.Rollback;
        boolean remediating = lastAction != null && !rolledBack;
        // a child the API server's dry-run rejected makes the effective spec invalid: nothing of it was applied
        Outcome outcome = in.rejected() != null ? Outcome.INVALID_SPEC : plan == null ? Outcome.OK : plan.outcome();

        if (outcome != Outcome.OK) {
            s.phase = switch (outcome) {
                case INVALID_SPEC -> Phase.Invalid;
                case UNSCHEDULABLE -> Phase.Unschedulable;
                case INSPECTING_MODEL -> Phase.Progressing;
                case MODEL_UNAVAILABLE -> Phase.Invalid;
                default -> Phase.DoesNotFit;
            };
        } else if (in.failed()) {
            s.phase = Phase.Failed;
        } else if (allReady) {
            s.phase = rolledBack ? Phase.RolledBack : Phase.Ready;
        } else if (in.failureActive() || bad.isPresent()) {
            s.phase = Phase.Degraded;
        } else if (rolledBack) {
            s.phase = Phase.RolledBack;
        } else if (remediating) {
            s.phase = Phase.Remediating;
        } else {
            s.phase = running == null ? Phase.Pending : Phase.Progressing;
        }

        List<Condition> p = prev.conditions;
        long g = in.generation();
        var now = in.now();
        List<Condition> c = new ArrayList<>();
        ChildProblem applyFailed = in.applyFailed();
        boolean ready = outcome == Outcome.OK && !in.failed() && allReady && applyFailed == null;
        c.add(Conditions.next(
                p,
                READY,
                ready,
                ready
                        ? (rolledBack ? "RolledBackAndReady" : "AllReplicasReady")
                        : bad.isPresent()
                                ? "PodFailing"
                                : applyFailed != null && outcome == Outcome.OK ? applyFailed.reason() : s.phase.name(),
                ready
                        ? s.readyReplicas + "/" + in.desiredReplicas() + " replicas Ready on revision " + running
                        : bad.orElse(s.readyReplicas + "/" + in.desiredReplicas() + " replicas Ready"
                                + (running == null ? "" : " on revision " + running)),
                g,
                now));
        boolean progressing = outcome == Outcome.OK && !in.failed() && !allReady && running != null;
        boolean held = outcome == Outcome.OK && in.hold() != null;
        boolean inspecting = outcome == Outcome.INSPECTING_MODEL;
        c.add(Conditions.next(
                p,
                PROGRESSING,
                progressing || inspecting,
                inspecting
                        ? "InspectingModel"
                        : progressing
                                ? (remediating ? "Remediating" : "RollingOut")
                                : allReady ? "RolloutComplete" : held ? "WaitingForPreflight" : s.phase.name(),
                inspecting ? plan.message() : progressing ? "rolling out revision " + running : held ? in.hold() : "",
                g,
                now));
        boolean degraded = in.failed() || (!allReady && (in.failureActive() || bad.isPresent()));
        c.add(Conditions.next(
                p,
                DEGRADED,
                degraded,
                degraded ? (in.failed() ? "RemediationExhausted" : failureReason(in)) : "NoFailure",
                degraded ? failureMessage(in, bad) : "",
                g,
                now));
        c.add(Conditions.next(
                p,
                ROLLED_BACK,
                rolledBack,
                rolledBack ? "RolledBackToStableSpec" : "NotRolledBack",
                rolledBack ? lastReason(in.rollback()) : "",
                g,
                now));
        c.add(
                in.rejected() != null
                        ? Conditions.next(
                                p,
                                INVALID_SPEC,
                                true,
                                in.rejected().reason(),
                                in.rejected().message(),
                                g,
                                now)
                        : outcomeCondition(p, INVALID_SPEC, Outcome.INVALID_SPEC, plan, g, now));
        c.add(outcomeCondition(p, UNSCHEDULABLE, Outcome.UNSCHEDULABLE, plan, g, now));
        c.add(outcomeCondition(p, DOES_NOT_FIT, Outcome.DOES_NOT_FIT, plan, g, now));
        boolean tooHigh = plan != null && plan.memory() != null && plan.memory().fractionTooHigh();
        c.add(Conditions.next(
                p,
                MEMORY_FRACTION_TOO_HIGH,
                tooHigh,
                tooHigh ? "UserFractionLeavesTooLittle" : "FractionFits",
                tooHigh ? String.join("; ", plan.memory().warnings()) : "",
                g,
                now));
        c.add(Conditions.next(
                p,
                ROLLBACK_FAILED,
                in.failed(),
                in.failed() ? "RemediationExhausted" : "NotFailed",
                in.failed() ? failureMessage(in, bad) : "",
                g,
                now));
        c.add(Conditions.next(
                p,
                APPLY_FAILED,
                applyFailed != null,
                applyFailed != null ? applyFailed.reason() : "Applied",
                applyFailed != null ? applyFailed.message() : "",
                g,
                now));
        boolean unavailable = outcome == Outcome.MODEL_UNAVAILABLE;
        c.add(Conditions.next(
                p,
                MODEL_UNAVAILABLE,
                unavailable,
                unavailable
                        ? (in.model() != null && in.model().reason() != null
                                ? in.model().reason()
                                : MODEL_UNAVAILABLE)
                        : "ModelAvailable",
                unavailable
                        ? plan.message()
                        : s.model != null
                                ? s.model.architecture + " " + s.model.source + " at " + s.model.revision
                                : "",
                g,
                now));
        s.conditions = c;
        return s;
    }

    /** {@link #withDownload(InferenceDeploymentStatus, InferenceDeploymentStatus, DownloadStatus, DownloadStatus,
     * Instant)} without a draft model's download. */
    public static InferenceDeploymentStatus withDownload(
            InferenceDeploymentStatus prev, InferenceDeploymentStatus next, DownloadStatus download, Instant now) {
        return withDownload(prev, next, download, null, now);
    }

    /**
     * {@code next} with {@code status.download} and {@code status.draftDownload} set and, while a download runs,
     * Progressing's reason ({@value DownloadProgress#REASON}) and message on it (the step's progress, {@link
     * DownloadProgress#next}; both, the model's first, when pods run both steps).
     */
    public static InferenceDeploymentStatus withDownload(
            InferenceDeploymentStatus prev,
            InferenceDeploymentStatus next,
            DownloadStatus download,
            DownloadStatus draftDownload,
            Instant now) {
        next.download = download;
        next.draftDownload = draftDownload;
        String message = java.util.stream.Stream.of(download, draftDownload)
                .filter(d -> d != null && DownloadProgress.DOWNLOADING.equals(d.phase))
                .map(d -> d.message)
                .reduce((a, b) -> a + "; " + b)
                .orElse(null);
        if (message == null) {
            return next;
        }
        Optional<Condition> progressing =
                Conditions.find(next.conditions, PROGRESSING).filter(c -> Conditions.TRUE.equals(c.getStatus()));
        if (progressing.isPresent()) {
            Long generation = progressing.get().getObservedGeneration();
            next.conditions = Conditions.upsert(
                    next.conditions,
                    Conditions.next(
                            prev == null ? null : prev.conditions,
                            PROGRESSING,
                            true,
                            DownloadProgress.REASON,
                            message,
                            generation,
                            now));
        }
        return next;
    }

    /** The ApplyFailed condition of {@code prev} while it is True (kept until the children are up to date), or null. */
    public static ChildProblem applyFailure(InferenceDeploymentStatus prev) {
        return prev == null
                ? null
                : Conditions.find(prev.conditions, APPLY_FAILED)
                        .filter(c -> Conditions.TRUE.equals(c.getStatus()))
                        .map(c -> new ChildProblem(c.getReason(), c.getMessage()))
                        .orElse(null);
    }

    /** A human line naming the first failing pod, or empty. */
    public static Optional<String> badPod(Pod pod) {
        if (pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null) {
            return Optional.empty();
        }
        for (ContainerStatus cs : pod.getStatus().getContainerStatuses()) {
            var st = cs.getState();
            if (st == null) {
                continue;
            }
            if (st.getWaiting() != null
                    && "CrashLoopBackOff".equals(st.getWaiting().getReason())) {
                return Optional.of("pod " + pod.getMetadata().getName() + " container " + cs.getName()
                        + " is in CrashLoopBackOff");
            }
            if (st.getTerminated() != null
                    && st.getTerminated().getExitCode() != null
                    && st.getTerminated().getExitCode() != 0) {
                return Optional.of("pod " + pod.getMetadata().getName() + " container " + cs.getName() + " terminated: "
                        + st.getTerminated().getReason() + " (exit "
                        + st.getTerminated().getExitCode() + ")");
            }
        }
        return Optional.empty();
    }

    public static boolean podReady(Pod pod) {
        return pod.getMetadata().getDeletionTimestamp() == null
                && pod.getStatus() != null
                && pod.getStatus().getConditions() != null
                && pod.getStatus().getConditions().stream()
                        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    public static String revisionOf(Pod pod) {
        return pod.getMetadata().getLabels() == null
                ? null
                : pod.getMetadata().getLabels().get(Renderer.LABEL_REVISION);
    }

    private static Condition outcomeCondition(
            List<Condition> p, String type, Outcome o, Plan plan, long g, Instant now) {
        boolean on = plan != null && plan.outcome() == o;
        return Conditions.next(p, type, on, on ? type : "No" + type, on ? plan.message() : "", g, now);
    }

    private static RollbackStatus.Action lastAction(RollbackStatus rb, long generation) {
        if (rb == null || rb.history == null || rb.history.isEmpty() || !Objects.equals(rb.generation, generation)) {
            return null;
        }
        return rb.history.get(rb.history.size() - 1).action;
    }

    private static String lastReason(RollbackStatus rb) {
        var a = rb.history.get(rb.history.size() - 1);
        return "attempt " + a.attempt + ": " + a.reason + (a.change == null ? "" : " (" + a.change + ")");
    }

    private static String failureReason(StatusInput in) {
        return in.lastFailure() != null && in.lastFailure().reason != null ? in.lastFailure().reason : "PodFailing";
    }

    private static String failureMessage(StatusInput in, Optional<String> bad) {
        var f = in.lastFailure();
        String base = f == null
                ? bad.orElse("")
                : f.reason + " on pod " + f.pod + " (revision " + f.revision + ")"
                        + (f.message == null ? "" : ": " + f.message);
        if (in.failed()
                && in.rollback() != null
                && in.rollback().history != null
                && !in.rollback().history.isEmpty()) {
            StringBuilder h = new StringBuilder(base).append("; attempts:");
            in.rollback()
                    .history
                    .forEach(a -> h.append(' ')
                            .append(a.attempt)
                            .append('=')
                            .append(a.action)
                            .append(a.change == null ? "" : "(" + a.change + ")"));
            return h.toString();
        }
        return base;
    }
}
