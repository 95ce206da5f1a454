package io.tensorlane.runtime.probe;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.tensorlane.api.v1alpha1.GpuTopology;
import io.tensorlane.api.v1alpha1.GpuTopologySpec;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import java.util.Map;

/**
 * Writes {@code GpuTopology/<node>} with server-side apply: spec.nodeName on the object, then the status through the
 * status subresource, both under the field manager {@value #FIELD_MANAGER} (forcing conflicts: the probe is the one
 * owner of what it measured). The applied status never carries {@code measurement}: the operator's preflight owns that
 * field under its own manager, and an apply only takes the fields it sends, so the preflight's value survives.
 */
public final class Publisher {
    public static final String FIELD_MANAGER = "tensorlane-probe";
    static final Map<String, String> LABELS = Map.of("app.kubernetes.io/managed-by", FIELD_MANAGER);
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private final KubernetesClient client;

    public Publisher(KubernetesClient client) {
        this.client = client;
    }

    /** Applies the object and its status; returns the stored object. */
    public GpuTopology publish(String nodeName, GpuTopologyStatus status) {
        GpuTopology desired = object(nodeName);
        try {
            client.resource(desired)
                    .fieldManager(FIELD_MANAGER)
                    .forceConflicts()
                    .serverSideApply();
            desired.setStatus(applied(status));
            PatchContext ssa = new PatchContext.Builder()
                    .withPatchType(PatchType.SERVER_SIDE_APPLY)
                    .withFieldManager(FIELD_MANAGER)
                    .withForce(true)
                    .build();
            return client.resource(desired).subresource("status").patch(ssa, desired);
        } catch (KubernetesClientException e) {
            throw new ProbeException(
                    ProbeException.Kind.PUBLISH_FAILED, "cannot publish GpuTopology/" + nodeName + ": " + oneLine(e));
        }
    }

    /** The status the probe applies: a copy of {@code status} without {@code measurement} (the preflight's field). */
    static GpuTopologyStatus applied(GpuTopologyStatus status) {
        GpuTopologyStatus copy = SERIALIZATION.clone(status);
        copy.measurement = null;
        return copy;
    }

    /** "HTTP 403 <server message>" for a refusal; the innermost cause for a connection failure. One line. */
    static String oneLine(KubernetesClientException e) {
        if (e.getCode() > 0) {
            String msg = e.getStatus() != null && e.getStatus().getMessage() != null
                    ? e.getStatus().getMessage()
                    : e.getMessage();
            return "HTTP " + e.getCode() + " " + firstLine(msg);
        }
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return firstLine(root == e ? e.getMessage() : root.getClass().getSimpleName() + ": " + root.getMessage());
    }

    private static String firstLine(String s) {
        return String.valueOf(s).lines().findFirst().orElse("");
    }

    /** The object without status: name = node name, spec.nodeName, the managed-by label. */
    static GpuTopology object(String nodeName) {
        GpuTopology t = new GpuTopology();
        t.setMetadata(
                new ObjectMetaBuilder().withName(nodeName).withLabels(LABELS).build());
        GpuTopologySpec spec = new GpuTopologySpec();
        spec.nodeName = nodeName;
        t.setSpec(spec);
        t.setStatus(null);
        return t;
    }
}
