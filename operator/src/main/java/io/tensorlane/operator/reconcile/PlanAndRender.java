package io.tensorlane.operator.reconcile;

import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.model.ModelResolution;
import io.tensorlane.operator.plan.NodeInfo;
import io.tensorlane.operator.plan.Outcome;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Planner;
import io.tensorlane.operator.plan.PlannerSettings;
import io.tensorlane.operator.render.Rendered;
import io.tensorlane.operator.render.Renderer;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * Calls the pure planner and renderer. A spec they cannot handle (an unexpected exception on a malformed object) becomes
 * an InvalidSpec plan with the message, never a crash or a retry storm: the operator keeps reconciling other objects.
 */
final class PlanAndRender {
    private static final Logger LOG = Logger.getLogger(PlanAndRender.class);

    private PlanAndRender() {}

    static Plan plan(InferenceDeploymentSpec effective, List<NodeInfo> nodes, PlannerSettings settings) {
        try {
            return Planner.plan(effective, nodes, settings);
        } catch (RuntimeException e) {
            LOG.warnf("planner rejected the spec: %s", e.toString());
            return new Plan(
                    Outcome.INVALID_SPEC, "the spec cannot be planned: " + e.getMessage(), null, null, null, List.of());
        }
    }

    static Rendered render(
            InferenceDeployment owner,
            InferenceDeploymentSpec effective,
            Plan plan,
            TensorlaneConfig s,
            ModelResolution model) {
        return Renderer.render(owner, effective, plan, s, model.status(), model.draftStatus());
    }

    /** "2×PCIe RTX PRO 6000 nodes, allreduce Custom, fraction 0.83". */
    static String describe(Plan plan) {
        var p = plan.placement();
        return (p == null ? "?" : p.interconnect() + " " + p.product() + " nodes " + p.nodes()) + ", allreduce "
                + (plan.allreduce() == null ? "?" : plan.allreduce().mode()) + ", static fraction "
                + (plan.memory() == null ? "?" : plan.memory().staticFraction());
    }
}
