package io.tensorlane.operator.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.operator.support.DecisionMetrics;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * Server-side applies a child (Deployment, Service) with the operator's field manager, forcing conflicts, but only when
 * the desired object differs from what was last applied: the desired object's hash is stored in the annotation
 * {@value #APPLIED_HASH} and compared with the live child's, so an unchanged spec causes no API write.
 */
public final class ChildApplier {
    public static final String APPLIED_HASH = "tensorlane.io/applied-hash";

    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(ChildApplier.class);

    private final KubernetesClient client;
    private final String fieldManager;
    private final DecisionMetrics metrics;
    private final BiConsumer<HasMetadata, HasMetadata> onApplied;

    /**
     * With {@code onApplied} told of every write: the object as the API server stored it, and the live child it
     * replaced (null when there was none).
     */
    public ChildApplier(
            KubernetesClient client,
            String fieldManager,
            DecisionMetrics metrics,
            BiConsumer<HasMetadata, HasMetadata> onApplied) {
        this.client = client;
        this.fieldManager = fieldManager;
        this.metrics = metrics;
        this.onApplied = onApplied;
    }

    /** True when {@code live} already carries what {@code desired} would apply. */
    public static boolean upToDate(HasMetadata desired, HasMetadata live) {
        if (live == null) {
            return false;
        }
        Map<String, String> a = live.getMetadata().getAnnotations();
        return a != null && hash(desired).equals(a.get(APPLIED_HASH));
    }

    /** Applies {@code desired} unless {@code live} is up to date; returns whether a write was sent. */
    public <T extends HasMetadata> boolean apply(T desired, HasMetadata live) {
        if (upToDate(desired, live)) {
            return false;
        }
        T applied = client.resource(prepare(desired))
                .fieldManager(fieldManager)
                .forceConflicts()
                .serverSideApply();
        metrics.applied(desired.getKind());
        onApplied.accept(applied, live);
        return true;
    }

    /** Deletes {@code child} (best effort: a failure is logged; the owner reference still ties it to its owner). */
    public void deleteQuietly(HasMetadata child) {
        try {
            client.resource(child).delete();
        } catch (RuntimeException e) {
            LOG.warnf(
                    "could not delete %s %s/%s: %s",
                    child.getKind(),
                    child.getMetadata().getNamespace(),
                    child.getMetadata().getName(),
                    e.getMessage());
        }
    }

    /**
     * The API server's verdict on {@code desired} without storing it (server-side apply with dryRun=All: admission,
     * validation and defaulting run, nothing is written); nothing is sent when {@code live} is up to date.
     *
     * @throws io.fabric8.kubernetes.client.KubernetesClientException when the server refuses it
     */
    public <T extends HasMetadata> void dryRun(T desired, HasMetadata live) {
        if (!upToDate(desired, live)) {
            client.resource(prepare(desired))
                    .dryRun()
                    .fieldManager(fieldManager)
                    .forceConflicts()
                    .serverSideApply();
        }
    }

    /** {@code desired} with its applied-hash annotation, ready for server-side apply. */
    private static <T extends HasMetadata> T prepare(T desired) {
        String h = hash(desired);
        Map<String, String> annotations = new HashMap<>(
                desired.getMetadata().getAnnotations() == null
                        ? Map.of()
                        : desired.getMetadata().getAnnotations());
        annotations.put(APPLIED_HASH, h);
        desired.getMetadata().setAnnotations(annotations);
        desired.getMetadata().setResourceVersion(null);
        desired.getMetadata().setManagedFields(null);
        return desired;
    }

    /** sha256 of the desired object without its applied-hash annotation (first 16 hex). */
    public static String hash(HasMetadata desired) {
        Map<String, String> annotations = desired.getMetadata().getAnnotations();
        String saved = annotations == null ? null : annotations.get(APPLIED_HASH);
        if (saved != null) {
            annotations.remove(APPLIED_HASH);
        }
        try {
            byte[] json = Serialization.asJson(desired).getBytes(StandardCharsets.UTF_8);
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(json))
                    .substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        } finally {
            if (saved != null) {
                annotations.put(APPLIED_HASH, saved);
            }
        }
    }
}
