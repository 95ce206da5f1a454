package io.tensorlane.operator.status;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns the API server's answer to a child's apply into a {@link ChildProblem} for status. Pure. A rejection (422
 * Invalid, 400 Bad Request, or a server-side-apply patch the server cannot type, which a 1.20 API server answers with
 * 500 "failed to create typed patch object") is the spec's fault and will not go away by retrying; anything else
 * (conflicts, timeouts, 5xx, RBAC) is an apply failure that the reconcile retries with backoff. Used by both
 * reconcilers of an InferenceDeployment (its children, the preflight Job).
 */
public final class ApiRejections {
    /** Longest message kept (the API server's own can be long). */
    public static final int MAX_MESSAGE = 2000;

    /** Child field paths → the spec field the user writes (the first match is named as a hint). */
    static final Map<String, String> SPEC_FIELDS = new LinkedHashMap<>();

    static {
        SPEC_FIELDS.put(".tolerations", "spec.placement.tolerations");
        SPEC_FIELDS.put(".affinity", "spec.placement.nodeSelector");
        SPEC_FIELDS.put(".env", "spec.engine.env");
        SPEC_FIELDS.put(".image", "spec.engine.image");
        SPEC_FIELDS.put(".args", "spec.engine.args");
        SPEC_FIELDS.put("Port", "spec.serving.port");
        SPEC_FIELDS.put(".ports", "spec.serving.port");
        SPEC_FIELDS.put("nvidia.com/gpu", "spec.parallelism.tensor");
        SPEC_FIELDS.put("metadata.name", "metadata.name");
        SPEC_FIELDS.put("metadata.labels", "metadata.name");
        SPEC_FIELDS.put("selector", "metadata.name");
    }

    private ApiRejections() {}

    /** True when the server refused the object itself (retrying the same object cannot succeed). */
    public static boolean isRejection(int code, String message) {
        return code == 422
                || code == 400
                || code == 500 && message != null && message.contains("failed to create typed patch object");
    }

    /** True for a {@link KubernetesClientException} that {@link #isRejection} says is a rejection. */
    public static boolean isRejection(Throwable e) {
        return e instanceof KubernetesClientException k && isRejection(k.getCode(), message(k));
    }

    /**
     * "Deployment llama rejected by the API server: spec.template.spec.tolerations[0].operator: Unsupported value:
     * "Maybe" (set by spec.placement.tolerations)".
     */
    public static ChildProblem describe(String kind, String name, KubernetesClientException e) {
        String text = message(e);
        boolean rejected = isRejection(e.getCode(), text);
        List<String> causes = new ArrayList<>();
        Status st = e.getStatus();
        if (st != null && st.getDetails() != null && st.getDetails().getCauses() != null) {
            for (StatusCause c : st.getDetails().getCauses()) {
                causes.add(
                        (c.getField() == null || c.getField().isBlank() ? "" : c.getField() + ": ") + c.getMessage());
            }
        }
        // a rejection is best told by its field causes; anything else by the server's whole message (it says why: a
        // quota,
        // a namespace being terminated, who is forbidden what)
        String detail = causes.isEmpty() || !rejected ? text : String.join("; ", causes);
        String hint = specField(detail);
        String message = kind + " " + name
                + (rejected ? " rejected by the API server: " : " could not be applied (HTTP " + e.getCode() + "): ")
                + detail + (hint == null ? "" : " (set by " + hint + ")");
        return new ChildProblem(kind + (rejected ? "Rejected" : "ApplyFailed"), cut(message));
    }

    /** The spec field a child field path comes from, or null. */
    static String specField(String detail) {
        return SPEC_FIELDS.entrySet().stream()
                .filter(m -> detail.contains(m.getKey()))
                .map(Map.Entry::getValue)
                .findFirst()
                .orElse(null);
    }

    private static String message(KubernetesClientException e) {
        Status st = e.getStatus();
        return st != null && st.getMessage() != null ? st.getMessage() : String.valueOf(e.getMessage());
    }

    /** {@code s}, cut to {@link #MAX_MESSAGE} characters. */
    public static String cut(String s) {
        return s.length() <= MAX_MESSAGE ? s : s.substring(0, MAX_MESSAGE - 1) + "…";
    }
}
