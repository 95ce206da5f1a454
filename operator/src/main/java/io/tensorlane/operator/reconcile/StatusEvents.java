package io.tensorlane.operator.reconcile;

import io.fabric8.kubernetes.api.model.Condition;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.status.StatusAggregator;
import io.tensorlane.operator.support.DecisionMetrics;
import io.tensorlane.operator.support.EventRecorder;
import java.util.List;
import java.util.Objects;

/** Events for status transitions: a new plan, and each condition that turned True (or changed its reason). */
final class StatusEvents {
  private static final List<String> WARNINGS = List.of(StatusAggregator.INVALID_SPEC, StatusAggregator.UNSCHEDULABLE,
      StatusAggregator.DOES_NOT_FIT, StatusAggregator.MEMORY_FRACTION_TOO_HIGH, StatusAggregator.DEGRADED,
      StatusAggregator.APPLY_FAILED, StatusAggregator.MODEL_UNAVAILABLE);

  private StatusEvents() {
  }

  static void emit(EventRecorder events, DecisionMetrics metrics, InferenceDeployment about,
      InferenceDeploymentStatus prev, InferenceDeploymentStatus next, Plan plan) {
    if (next.model != null && (prev.model == null || !Objects.equals(prev.model.revision, next.model.revision)
        || !Objects.equals(prev.model.source, next.model.source))) {
      events.normal(about, "ModelInspected", next.model.source + " at " + next.model.revision + ": "
          + next.model.architecture + ", " + next.model.geometry.layers + " layers, " + next.model.weightBytes
          + " weight bytes in " + next.model.files + " safetensors file(s)");
    }
    String prevRevision = prev.lastAppliedSpec == null ? null : prev.lastAppliedSpec.revision;
    String nextRevision = next.lastAppliedSpec == null ? null : next.lastAppliedSpec.revision;
    if (!Objects.equals(prevRevision, nextRevision) && plan.ok()) {
      metrics.decision("outcome", plan.outcome().name());
      events.normal(about, "Placement", "nodes " + plan.placement().nodes() + " (" + plan.placement().interconnect()
          + ", P2P " + plan.placement().p2p() + ", " + plan.placement().product() + ", source "
          + plan.placement().source() + ")");
      events.normal(about, "Planned", "revision " + nextRevision + ": allreduce " + plan.allreduce().mode() + " ("
          + plan.allreduce().reason() + "); static fraction " + plan.memory().staticFraction() + " ("
          + plan.memory().fractionSource() + "), KV cache " + plan.memory().kvCacheTokens() + " tokens");
    }
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
        events.normal(about, "Ready", c.getMessage());
      }
    }
  }
}
