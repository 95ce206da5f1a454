package io.tensorlane.operator.preflight;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.tensorlane.api.v1alpha1.GpuTopology;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.Measurement;

/**
 * Writes {@code GpuTopology.status.measurement} by server-side apply through the status subresource under its own
 * field manager {@value #FIELD_MANAGER}: it owns the measurement alone, so the probe's and the node labeller's status
 * fields are left as they are, and a success replaces an earlier failure field by field (an SSA drops fields this
 * manager no longer sets).
 */
public final class PreflightRecorder {
    public static final String FIELD_MANAGER = "tensorlane-preflight";

    private PreflightRecorder() {}

    public static GpuTopology record(KubernetesClient client, String node, Measurement measurement) {
        GpuTopology patch = new GpuTopology();
        patch.setMetadata(new ObjectMetaBuilder().withName(node).build());
        patch.setSpec(null);
        GpuTopologyStatus status = new GpuTopologyStatus();
        status.measurement = measurement;
        patch.setStatus(status);
        PatchContext ssa = new PatchContext.Builder()
                .withPatchType(PatchType.SERVER_SIDE_APPLY)
                .withFieldManager(FIELD_MANAGER)
                .withForce(true)
                .build();
        return client.resource(patch).subresource("status").patch(ssa, patch);
    }
}
