package io.tensorlane.operator.reconcile;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.operator.status.ApiRejections;
import io.tensorlane.operator.status.ChildProblem;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.status.StatusAggregator;
import io.tensorlane.operator.support.DecisionMetrics;
import io.tensorlane.operator.support.EventRecorder;
import java.time.Duration;
import java.time.Instant;
import java.util.function.BiConsumer;
import org.jboss.logging.Logger;

/**
 * What the reconciler's error-status hook writes (Flink operator style): the ApplyFailed condition naming the object
 * and field, on the status that is true after the failure (never a revision that was not applied), and a Warning event
 * when the problem is new. Retrying is left to JOSDK's retry (its backoff); after its last attempt the reconcile is
 * rescheduled, so a lasting failure keeps being retried slowly instead of being dropped.
 */
final class ErrorStatus {
    /** After JOSDK's last retry, try again this much later. */
    static final Duration AFTER_LAST_RETRY = Duration.ofMinutes(5);

    private static final Logger LOG = Logger.getLogger(ErrorStatus.class);

    private ErrorStatus() {}

    /** The InferenceDeployment itself was not found (its status write answered 404): it was deleted. */
    static boolean primaryGone(Exception e) {
        return unwrap(e) instanceof KubernetesClientException k && k.getCode() == 404;
    }

    /**
     * The resourceVersion the status for {@code e} ({@link #status}) is computed on: the version the failed reconcile
     * wrote before a child failed, else the version it started from.
     */
    static String basedOn(InferenceDeployment primary, Exception e) {
        return unwrap(e) instanceof ChildApplyException c && c.statusAfter() != null && c.basedOn() != null
                ? c.basedOn()
                : primary.getMetadata().getResourceVersion();
    }

    /** The status to write for {@code e}; pure. */
    static InferenceDeploymentStatus status(InferenceDeployment primary, Exception e, Instant now) {
        Throwable cause = unwrap(e);
        InferenceDeploymentStatus base = cause instanceof ChildApplyException c && c.statusAfter() != null
                ? c.statusAfter()
                : primary.getStatus();
        InferenceDeploymentStatus s = base == null ? new InferenceDeploymentStatus() : Serialization.clone(base);
        ChildProblem p = describe(primary.getMetadata().getName(), e);
        s.conditions = Conditions.upsert(
                s.conditions,
                Conditions.next(
                        s.conditions,
                        StatusAggregator.APPLY_FAILED,
                        true,
                        p.reason(),
                        p.message(),
                        primary.getMetadata().getGeneration(),
                        now));
        return s;
    }

    /** Any failure of the reconcile of InferenceDeployment {@code name}: a child's, or the reconcile's own. */
    static ChildProblem describe(String name, Exception e) {
        Throwable t = unwrap(e);
        if (t instanceof ChildApplyException c) {
            return c.problem();
        }
        if (t instanceof KubernetesClientException k) {
            return ApiRejections.describe("InferenceDeployment", name, k);
        }
        return new ChildProblem("ReconcileFailed", ApiRejections.cut("the reconcile failed: " + t));
    }

    /**
     * The failure that explains {@code e}: the first {@link ChildApplyException}, else the first
     * {@link KubernetesClientException} among its causes (JOSDK and Quarkus may wrap what the reconciler threw), else
     * {@code e}.
     */
    static Throwable unwrap(Throwable e) {
        Throwable api = null;
        for (Throwable t = e; t != null && t.getCause() != t; t = t.getCause()) {
            if (t instanceof ChildApplyException) {
                return t;
            }
            if (api == null && t instanceof KubernetesClientException) {
                api = t;
            }
        }
        return api != null ? api : e;
    }

    /**
     * Writes the status for {@code e} through {@code write} (given the resourceVersion it is computed on,
     * {@link #basedOn}; the reconciler's own server-side apply: fields the failed
     * reconcile claimed, such as a revision that was not applied, are removed, which a patch computed against the
     * reconcile's starting object would leave); warns once per problem
     * (repeats are aggregated by the event writer), also when the status cannot be written: then the event is the only
     * place the problem shows.
     */
    static ErrorStatusUpdateControl<InferenceDeployment> control(
            InferenceDeployment primary,
            Exception e,
            Instant now,
            EventRecorder events,
            DecisionMetrics metrics,
            Duration rescheduleAfter,
            BiConsumer<String, InferenceDeploymentStatus> write) {
        if (primaryGone(e)) {
            return ErrorStatusUpdateControl.noStatusUpdate(); // deleted meanwhile: nothing to report on
        }
        InferenceDeploymentStatus before = primary.getStatus();
        InferenceDeploymentStatus s = status(primary, e, now);
        var c = Conditions.find(s.conditions, StatusAggregator.APPLY_FAILED).orElseThrow();
        boolean known = before != null
                && Conditions.find(before.conditions, StatusAggregator.APPLY_FAILED)
                        .filter(b -> Conditions.TRUE.equals(b.getStatus())
                                && c.getMessage().equals(b.getMessage()))
                        .isPresent();
        LOG.warnf(
                "%s/%s: %s",
                primary.getMetadata().getNamespace(), primary.getMetadata().getName(), c.getMessage());
        if (!known) {
            metrics.decision("outcome", StatusAggregator.APPLY_FAILED);
            events.warning(primary, c.getReason(), c.getMessage());
        }
        events.commit();
        try {
            write.accept(basedOn(primary, e), s);
        } catch (RuntimeException w) {
            LOG.warnf(
                    "%s/%s: the status could not be written either: %s",
                    primary.getMetadata().getNamespace(), primary.getMetadata().getName(), w.getMessage());
        }
        ErrorStatusUpdateControl<InferenceDeployment> control = ErrorStatusUpdateControl.noStatusUpdate();
        return rescheduleAfter == null ? control : control.rescheduleAfter(rescheduleAfter);
    }
}
