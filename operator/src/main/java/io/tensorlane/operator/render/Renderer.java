package io.tensorlane.operator.render;

import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.operator.plan.Plan;

/** Renders the Deployment and Service of an InferenceDeployment from an effective spec and its (OK) plan. */
public final class Renderer {
  private Renderer() {
  }

  /**
   * @param owner the primary (name, namespace, uid for the owner reference)
   * @param effective the effective spec that was planned (may differ from owner.getSpec() after rollback/remediation)
   * @param plan an OK plan for {@code effective}
   */
  public static Rendered render(InferenceDeployment owner, InferenceDeploymentSpec effective, Plan plan,
      RenderSettings settings) {
    throw new UnsupportedOperationException("in progress");
  }
}
