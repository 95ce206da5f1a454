package io.tensorlane.operator.reconcile;

import io.fabric8.kubernetes.api.model.Condition;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.render.Rendered;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.status.StatusAggregator;
import io.tensorlane.operator.support.DecisionMetrics;
import io.tensorlane.operator.support.EventRecorder;
import java.util.List;
import java.util.Objects;

/**
 * Events for status transitions, one per decision: a condition that turned True (or changed its reason), the model read
 * when no rollout follows it, a revision recorded as stable; the rollout itself is one event ({@link #rollout}) with
 * the plan, the placement and the model it runs.
 */
final class StatusEvents {
    /** Nodes named in a rollout event; the rest are counted. */
    static final int NODES_NAMED = 5;

    private static final List<String> WARNINGS = List.of(
            StatusAggregator.INVALID_SPEC,
            StatusAggregator.UNSCHEDULABLE,
            StatusAggregator.DOES_NOT_FIT,
            StatusAggregator.MEMORY_FRACTION_TOO_HIGH,
            StatusAggregator.DEGRADED,
            StatusAggregator.APPLY_FAILED,
            StatusAggregator.MODEL_UNAVAILABLE);

    private StatusEvents() {}

    /**
     * @param rollingOut the children are applied in this reconcile: the model read and the plan go into its
     *     RolloutStarted event instead of events of their own
     */
    static void emit(
            EventRecorder events,
            DecisionMetrics metrics,
            InferenceDeployment about,
            InferenceDeploymentStatus prev,
            InferenceDeploymentStatus next,
            Plan plan,
            boolean rollingOut) {
        if (modelRead(prev, next) && !rollingOut) {
            events.normal(about, "ModelInspected", model(next.model));
        }
        String prevRevision = prev.lastAppliedSpec == null ? null : prev.lastAppliedSpec.revision;
        String nextRevision = next.lastAppliedSpec == null ? null : next.lastAppliedSpec.revision;
        if (!Objects.equals(prevRevision, nextRevision) && plan.ok()) {
            metrics.decision("outcome", plan.outcome().name());
        }
        // a revision recorded as the rollback target (RollbackDecision.MarkStable)
        var ps = prev.lastStableSpec;
        var ns = next.lastStableSpec;
        boolean stable = ns != null
                && (ps == null
                        || !Objects.equals(ps.revision, ns.revision)
                        || !Objects.equals(ps.generation, ns.generation));
        String nextStable = ns == null ? null : ns.revision;
        for (Condition c : next.conditions) {
            boolean wasTrue = Conditions.find(prev.conditions, c.getType())
                    .filter(p -> Conditions.TRUE.equals(p.getStatus()) && Objects.equals(p.getReason(), c.getReason()))
                    .isPresent();
            if (!Conditions.TRUE.equals(c.getStatus()) || wasTrue) {
                continue;
            }
            if (WARNINGS.contains(c.getType())) {
                metrics.decision("outcome", c.getType());
                events.warning(about, c.getType(), c.getMessage());
            } else if (StatusAggregator.READY.equals(c.getType())) {
                events.normal(about, "Ready", c.getMessage() + (stable ? "; " + stableMessage(nextStable) : ""));
                stable = false;
            }
        }
        if (stable) {
            events.normal(about, "Stable", stableMessage(nextStable));
        }
    }

    /** status.model names another model or commit than before. */
    static boolean modelRead(InferenceDeploymentStatus prev, InferenceDeploymentStatus next) {
        return next.model != null
                && (prev.model == null
                        || !Objects.equals(prev.model.revision, next.model.revision)
                        || !Objects.equals(prev.model.source, next.model.source));
    }

    /**
     * "revision R (Deployment D): nodes a, b (PCIe, P2P Full, RTX PRO 6000, source probe); allreduce Custom (…); static
     * fraction 0.83 (auto), KV cache N tokens[; model …]".
     */
    static String rollout(Rendered r, Plan plan, ModelStatus model) {
        var p = plan.placement();
        var m = plan.memory();
        List<String> nodes = p.nodes();
        String named = String.join(", ", nodes.subList(0, Math.min(NODES_NAMED, nodes.size())))
                + (nodes.size() > NODES_NAMED ? " and " + (nodes.size() - NODES_NAMED) + " more" : "");
        return "revision " + r.revision() + " applied (Deployment "
                + r.deployment().getMetadata().getName() + "): nodes "
                + named + " (" + p.interconnect() + ", P2P " + p.p2p() + ", " + p.product() + ", source " + p.source()
                + "); allreduce " + plan.allreduce().mode() + " ("
                + plan.allreduce().reason() + "); static fraction "
                + m.staticFraction() + " (" + m.fractionSource() + "), KV cache " + m.kvCacheTokens() + " tokens"
                + (model == null ? "" : "; model " + model(model));
    }

    static String model(ModelStatus m) {
        return m.source + " at " + m.revision + ": " + m.architecture + ", " + m.geometry.layers + " layers, "
                + m.weightBytes + " weight bytes in " + m.files + " safetensors file(s)";
    }

    private static String stableMessage(String revision) {
        return "revision " + revision + " has been Ready for the stability window; recorded as the rollback target";
    }
}
