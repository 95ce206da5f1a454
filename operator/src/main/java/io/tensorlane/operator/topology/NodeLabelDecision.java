package io.tensorlane.operator.topology;

import io.fabric8.kubernetes.api.model.Quantity;
import io.tensorlane.api.v1alpha1.GpuTopology;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.operator.plan.TopologyLabels;
import io.tensorlane.operator.render.Renderer;
import io.tensorlane.topology.GfdHeuristic;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What the node labeller should do for one node, decided from the node's labels and GPU capacity and its GpuTopology.
 * Pure; {@link GpuTopologyNodeLabeller} only carries it out.
 *
 * @param labels the tensorlane.io/gpu-* labels the node must carry (empty: none; keys absent here are removed)
 * @param heuristic a heuristic topology to create or refresh (null: nothing to write); never set over a probe result
 * @param stale the node's probe result is older than the limit (condition Stale on the GpuTopology)
 * @param reason a one-line explanation for logs and events
 */
public record NodeLabelDecision(Map<String, String> labels, GpuTopologyStatus heuristic, boolean stale, String reason) {

    /** The label keys the labeller owns. */
    public static final List<String> KEYS = List.of(
            TopologyLabels.INTERCONNECT, TopologyLabels.P2P, TopologyLabels.GPU_COUNT, TopologyLabels.GPU_PRODUCT);

    /** Decides for one node; {@code topology} is its GpuTopology or null. */
    public static NodeLabelDecision decide(
            Map<String, String> nodeLabels,
            Map<String, Quantity> capacity,
            GpuTopology topology,
            Instant now,
            Duration maxAge) {
        GpuTopologyStatus status = topology == null ? null : topology.getStatus();
        if (topology != null && (status == null || status.source == null)) {
            // created by its publisher, status not written yet: never take it over
            return new NodeLabelDecision(Map.of(), null, false, "GpuTopology has no status yet");
        }
        boolean probe = status != null && status.source != GpuTopologyStatus.Source.heuristic;
        if (probe) {
            boolean stale = isStale(status, now, maxAge);
            return new NodeLabelDecision(
                    TopologyLabels.forTopology(status),
                    null,
                    stale,
                    stale ? "probe result from " + status.probeTime + " is older than " + maxAge : "probe result");
        }
        // no probe result: a heuristic from GFD labels, for GPU nodes only
        if (gpuCapacity(capacity) <= 0) {
            return new NodeLabelDecision(
                    status == null ? Map.of() : TopologyLabels.forTopology(status),
                    null,
                    false,
                    "node has no " + Renderer.GPU_RESOURCE + " capacity");
        }
        GfdHeuristic.Result derived = GfdHeuristic.derive(nodeLabels);
        if (!derived.derived()) {
            return new NodeLabelDecision(
                    status == null ? Map.of() : TopologyLabels.forTopology(status), null, false, derived.reason());
        }
        GpuTopologyStatus wanted = derived.status();
        boolean same = status != null
                && Objects.equals(summaryKey(status), summaryKey(wanted))
                && Objects.equals(status.gpus.size(), wanted.gpus.size());
        return new NodeLabelDecision(
                TopologyLabels.forTopology(wanted),
                same ? null : wanted,
                false,
                "heuristic from GPU Feature Discovery labels (rule " + derived.rule() + ": " + derived.reason() + ")");
    }

    /** A probe result older than {@code maxAge} (or without a parseable probe time) is stale; heuristics never are. */
    public static boolean isStale(GpuTopologyStatus status, Instant now, Duration maxAge) {
        if (status == null || status.source == GpuTopologyStatus.Source.heuristic || maxAge == null) {
            return false;
        }
        if (status.probeTime == null) {
            return true;
        }
        try {
            return Instant.parse(status.probeTime).plus(maxAge).isBefore(now);
        } catch (DateTimeParseException e) {
            return true;
        }
    }

    /** The owned labels as the node carries them now. */
    public static Map<String, String> current(Map<String, String> nodeLabels) {
        Map<String, String> out = new LinkedHashMap<>();
        if (nodeLabels != null) {
            KEYS.forEach(k -> {
                if (nodeLabels.containsKey(k)) {
                    out.put(k, nodeLabels.get(k));
                }
            });
        }
        return out;
    }

    /** True when the node already carries exactly the wanted labels. */
    public boolean satisfiedBy(Map<String, String> nodeLabels) {
        return current(nodeLabels).equals(labels);
    }

    public static int gpuCapacity(Map<String, Quantity> capacity) {
        Quantity q = capacity == null ? null : capacity.get(Renderer.GPU_RESOURCE);
        if (q == null) {
            return 0;
        }
        int plain = plainInt(q);
        if (plain >= 0) {
            return plain;
        }
        try {
            return q.getNumericalAmount().intValue();
        } catch (ArithmeticException | NumberFormatException e) {
            return 0;
        }
    }

    /**
     * A GPU count is almost always a plain decimal ("8"): read it without {@link Quantity}'s BigDecimal parse, which
     * showed up in profiles (the observer sums every pod's request on every reconcile); -1 for anything else.
     */
    private static int plainInt(Quantity q) {
        String a = q.getAmount();
        if (a == null
                || a.isEmpty()
                || a.length() > 9
                || q.getFormat() != null && !q.getFormat().isEmpty()) {
            return -1;
        }
        int v = 0;
        for (int i = 0; i < a.length(); i++) {
            char c = a.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            v = v * 10 + (c - '0');
        }
        return v;
    }

    private static Map<String, String> summaryKey(GpuTopologyStatus s) {
        return TopologyLabels.forTopology(s);
    }
}
