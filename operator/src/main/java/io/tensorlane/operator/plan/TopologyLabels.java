package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.TopologySummary;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The node labels that mirror a node's GpuTopology, and the one sanitizer for their values. The node labeller writes
 * {@link #forTopology}; the renderer's node affinity selects on the same keys and values.
 */
public final class TopologyLabels {
    /** NVLink, PCIe, Mixed or NotApplicable ({@link TopologySummary.Interconnect}). */
    public static final String INTERCONNECT = "tensorlane.io/gpu-interconnect";
    /** Full, Partial, None or NotApplicable ({@link TopologySummary.P2p}). */
    public static final String P2P = "tensorlane.io/gpu-p2p";
    /** Number of GPUs of the node, a decimal integer (node affinity uses {@code Gt}). */
    public static final String GPU_COUNT = "tensorlane.io/gpu-count";
    /** GPU product, sanitized: "NVIDIA H200" becomes "NVIDIA-H200". */
    public static final String GPU_PRODUCT = "tensorlane.io/gpu-product";

    private static final int MAX_VALUE_LENGTH = 63;

    private TopologyLabels() {}

    /** The labels a node with this topology carries; empty when the topology has no summary. */
    public static Map<String, String> forTopology(GpuTopologyStatus topology) {
        Map<String, String> labels = new LinkedHashMap<>();
        TopologySummary s = topology == null ? null : topology.summary;
        if (s == null) {
            return labels;
        }
        if (s.interconnect != null) {
            labels.put(INTERCONNECT, s.interconnect.name());
        }
        if (s.p2p != null) {
            labels.put(P2P, s.p2p.name());
        }
        if (s.gpuCount != null) {
            labels.put(GPU_COUNT, Integer.toString(s.gpuCount));
        }
        if (s.product != null) {
            labels.put(GPU_PRODUCT, sanitize(s.product));
        }
        return labels;
    }

    /**
     * Turns any string into a valid label value: at most 63 characters of {@code [A-Za-z0-9._-]}, starting and ending
     * with an alphanumeric. Runs of other characters (spaces, parentheses, slashes) become one '-'. Blank or
     * all-invalid input gives "unknown". Deterministic, so the labeller and the affinity agree.
     */
    public static String sanitize(String value) {
        if (value == null) {
            return "unknown";
        }
        StringBuilder out = new StringBuilder();
        boolean pendingDash = false;
        for (char c : value.trim().toCharArray()) {
            boolean ok = (c >= 'a' && c <= 'z')
                    || (c >= 'A' && c <= 'Z')
                    || (c >= '0' && c <= '9')
                    || c == '.'
                    || c == '_'
                    || c == '-';
            if (!ok) {
                pendingDash = true;
                continue;
            }
            if (pendingDash && out.length() > 0) {
                out.append('-');
            }
            pendingDash = false;
            out.append(c);
        }
        int end = Math.min(out.length(), MAX_VALUE_LENGTH);
        int start = 0;
        while (start < end && !alphanumeric(out.charAt(start))) {
            start++;
        }
        while (end > start && !alphanumeric(out.charAt(end - 1))) {
            end--;
        }
        return start == end ? "unknown" : out.substring(start, end);
    }

    private static boolean alphanumeric(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    }
}
