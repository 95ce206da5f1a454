package io.tensorlane.operator.reconcile;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.operator.TensorlaneConfig;
import java.time.Duration;
import java.util.Objects;

/**
 * The operator's writes of an InferenceDeployment's status, each conditioned on the version it was computed from, and
 * what a refused one means ({@link #staleRead}).
 */
public final class StatusWrites {
    /**
     * How soon a reconcile whose status write was refused as computed from a stale read looks again (the caches catch
     * up within milliseconds normally, seconds after the API server was away).
     */
    static final Duration STALE_READ_RETRY = Duration.ofSeconds(1);

    private StatusWrites() {}

    /**
     * True when {@code e} is the API server refusing the operator's status write because the object it was computed
     * from is no longer the stored one (409 Conflict on the resourceVersion precondition of {@link #apply}): the
     * reconcile read a stale copy, and nothing it decided may land. A child's failure ({@link ChildApplyException},
     * whatever its cause) is not.
     */
    static boolean staleRead(Exception e) {
        return ErrorStatus.unwrap(e) instanceof KubernetesClientException k && k.getCode() == 409;
    }

    /**
     * The operator's status write: server-side apply of {@code status} alone on {@code primary}'s status subresource,
     * forced (the operator is its only writer), on condition that {@code primary}'s resourceVersion is still the stored
     * one. A status is computed from the object the reconcile read; when that read was stale (JOSDK's cache of the
     * operator's own writes is dropped by a second write before the watch delivers the first, and after an API server
     * restart the watch may be seconds behind), the write would put back what an earlier write replaced: a rollback
     * already decided and recorded would be forgotten and decided again. The API server refuses such a write with 409
     * Conflict ({@link #staleRead}). Returns the object as the API server stored it.
     */
    public static InferenceDeployment apply(
            KubernetesClient client, InferenceDeployment primary, InferenceDeploymentStatus status) {
        return apply(client, primary, primary.getMetadata().getResourceVersion(), status);
    }

    /** The status write for a status computed on version {@code basedOn}. */
    static InferenceDeployment apply(
            KubernetesClient client, InferenceDeployment primary, String basedOn, InferenceDeploymentStatus status) {
        InferenceDeployment fresh = new InferenceDeployment();
        fresh.getMetadata().setName(primary.getMetadata().getName());
        fresh.getMetadata().setNamespace(primary.getMetadata().getNamespace());
        fresh.getMetadata().setResourceVersion(basedOn);
        fresh.setSpec(null);
        fresh.setStatus(status);
        return client.resource(fresh)
                .subresource("status")
                .patch(
                        new PatchContext.Builder()
                                .withPatchType(PatchType.SERVER_SIDE_APPLY)
                                .withFieldManager(TensorlaneConfig.FIELD_MANAGER)
                                .withForce(true)
                                .build(),
                        fresh);
    }

    /** The reconcile's status write ({@link #apply}), then into JOSDK's cache. */
    static InferenceDeployment write(
            InferenceDeployment primary, InferenceDeploymentStatus status, Context<InferenceDeployment> ctx) {
        return write(primary, primary.getMetadata().getResourceVersion(), status, ctx);
    }

    /** The same for a status computed on version {@code basedOn} of {@code primary}. */
    static InferenceDeployment write(
            InferenceDeployment primary,
            String basedOn,
            InferenceDeploymentStatus status,
            Context<InferenceDeployment> ctx) {
        InferenceDeployment updated = apply(ctx.getClient(), primary, basedOn, status);
        // then into JOSDK's cache so the next reconcile sees it even before the watch event arrives
        InferenceDeployment previous = primary;
        if (!Objects.equals(basedOn, primary.getMetadata().getResourceVersion())) {
            previous = Serialization.clone(primary);
            previous.getMetadata().setResourceVersion(basedOn);
        }
        ctx.eventSourceRetriever()
                .getControllerEventSource()
                .handleRecentResourceUpdate(ResourceID.fromResource(primary), updated, previous);
        return updated;
    }
}
