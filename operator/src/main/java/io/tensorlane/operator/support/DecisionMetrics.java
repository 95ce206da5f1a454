package io.tensorlane.operator.support;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * Counters of the operator's decisions, next to QOSDK's own reconcile count/duration metrics on /q/metrics:
 * {@code tensorlane_decisions_total{type,value}} (type: allreduce, outcome, placement), {@code tensorlane_rollbacks_total
 * {action}} (Rollback, LowerMemoryFraction, ShrinkAllreduceBuffer, FallBackToNccl, Exhausted), {@code
 * tensorlane_applies_total{kind}} (server-side applies actually sent), {@code tensorlane_node_labels_total{op}}, and
 * {@link EventSink}'s {@code tensorlane_events_pending} / {@code tensorlane_events_dropped_total}.
 */
public final class DecisionMetrics {
    private final MeterRegistry registry;

    public DecisionMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** For tests and the benchmark. */
    public static DecisionMetrics inMemory() {
        return new DecisionMetrics(new SimpleMeterRegistry());
    }

    public MeterRegistry registry() {
        return registry;
    }

    public void decision(String type, String value) {
        registry.counter("tensorlane.decisions", "type", type, "value", value == null ? "none" : value)
                .increment();
    }

    public void rollback(String action) {
        registry.counter("tensorlane.rollbacks", "action", action).increment();
    }

    public void applied(String kind) {
        registry.counter("tensorlane.applies", "kind", kind).increment();
    }

    public void nodeLabels(String op) {
        registry.counter("tensorlane.node.labels", "op", op).increment();
    }

    /** Sum of every counter {@code name} carrying {@code tags} (all of them when no tags are given). */
    public double count(String name, String... tags) {
        return registry.find(name).tags(tags).counters().stream()
                .mapToDouble(c -> c.count())
                .sum();
    }
}
