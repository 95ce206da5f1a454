package io.tensorlane.testkit.sim;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.Map;
import java.util.function.Predicate;

/**
 * "When a pod like this starts on a simulated node, do that after so long." Rules are checked in order, first match
 * wins; a pod that matches none gets the simulator's default (Run, or Succeed for pods that do not restart).
 *
 * <p>Rules are plain data, so they can also be written as YAML into the ConfigMap {@code tensorlane-sim-rules}
 * (key {@code rules.yaml}) in the simulator's namespace:
 *
 * <pre>
 * - name: seed-oom
 *   namespace: demo
 *   memoryFractionAtLeast: 0.93
 *   action: {type: CudaOom, phase: ipc-buffers, requestedBytes: 25165824, freeBytes: 4194304}
 *   delayMillis: 2000
 * </pre>
 *
 * @param name                  for logs
 * @param namespace             the pod's namespace must equal this (null: any)
 * @param labels                the pod must carry all of these labels (null/empty: any)
 * @param memoryFractionAtLeast the memory fraction the pod is started with ({@link PodFacts#memoryFraction}) must be at
 *                              least this (null: not checked; a pod with no fraction does not match)
 * @param outOfMemory           true: the pod's start-up must not fit its GPU ({@link SimMemory#startupOom}, the same
 *                              budget as the operator's planner); a CudaOom action without numbers gets the failing
 *                              allocation's phase, size and free bytes
 * @param env                   an environment variable (any container) whose numeric value must be at least {@code min}
 * @param arg                   a command-line flag ({@code --flag v} or {@code --flag=v}) whose value must be at least {@code min}
 * @param action                what to do
 * @param delayMillis           after how long (null: the simulator's default delay)
 * @param predicate             in-process only: any further condition (not serialized)
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record SimRule(
        String name,
        String namespace,
        Map<String, String> labels,
        Double memoryFractionAtLeast,
        Boolean outOfMemory,
        Threshold env,
        Threshold arg,
        SimAction action,
        Long delayMillis,
        @JsonIgnore Predicate<Pod> predicate) {

    /** A numeric lower bound on a named value. */
    public record Threshold(String name, double min) {}

    public SimRule {
        if (action == null) {
            throw new IllegalArgumentException("simulator rule '" + name + "' has no action");
        }
        labels = labels == null ? Map.of() : Map.copyOf(labels);
    }

    /** Starts a rule that matches every pod; narrow it with the {@code with*} methods. */
    public static SimRule forAllPods(String name, SimAction action) {
        return new SimRule(name, null, null, null, null, null, null, action, null, null);
    }

    public SimRule inNamespace(String ns) {
        return new SimRule(
                name, ns, labels, memoryFractionAtLeast, outOfMemory, env, arg, action, delayMillis, predicate);
    }

    public SimRule withLabels(Map<String, String> l) {
        return new SimRule(
                name, namespace, l, memoryFractionAtLeast, outOfMemory, env, arg, action, delayMillis, predicate);
    }

    public SimRule withMemoryFractionAtLeast(double min) {
        return new SimRule(name, namespace, labels, min, outOfMemory, env, arg, action, delayMillis, predicate);
    }

    /** Matches only pods whose start-up does not fit their GPU ({@link SimMemory}). */
    public SimRule whenOutOfMemory() {
        return new SimRule(
                name, namespace, labels, memoryFractionAtLeast, true, env, arg, action, delayMillis, predicate);
    }

    public SimRule withEnvAtLeast(String var, double min) {
        return new SimRule(
                name,
                namespace,
                labels,
                memoryFractionAtLeast,
                outOfMemory,
                new Threshold(var, min),
                arg,
                action,
                delayMillis,
                predicate);
    }

    public SimRule withArgAtLeast(String flag, double min) {
        return new SimRule(
                name,
                namespace,
                labels,
                memoryFractionAtLeast,
                outOfMemory,
                env,
                new Threshold(flag, min),
                action,
                delayMillis,
                predicate);
    }

    public SimRule withDelayMillis(long ms) {
        return new SimRule(
                name, namespace, labels, memoryFractionAtLeast, outOfMemory, env, arg, action, ms, predicate);
    }

    public SimRule withPredicate(Predicate<Pod> p) {
        return new SimRule(
                name, namespace, labels, memoryFractionAtLeast, outOfMemory, env, arg, action, delayMillis, p);
    }

    /** True when {@code pod} satisfies every condition of this rule (an outOfMemory rule needs the node: never). */
    public boolean matches(Pod pod) {
        return matches(pod, java.util.Optional::empty);
    }

    /**
     * True when {@code pod} satisfies every condition of this rule.
     *
     * @param oom the allocation that fails at the pod's start-up, asked only by an outOfMemory rule
     */
    public boolean matches(
            Pod pod, java.util.function.Supplier<java.util.Optional<io.tensorlane.contract.MemoryBudget.Oom>> oom) {
        var meta = pod.getMetadata();
        if (namespace != null && !namespace.equals(meta.getNamespace())) {
            return false;
        }
        Map<String, String> podLabels = meta.getLabels() == null ? Map.of() : meta.getLabels();
        if (!labels.entrySet().stream().allMatch(e -> e.getValue().equals(podLabels.get(e.getKey())))) {
            return false;
        }
        if (memoryFractionAtLeast != null
                && !(PodFacts.memoryFraction(pod).orElse(Double.NEGATIVE_INFINITY) >= memoryFractionAtLeast)) {
            return false;
        }
        if (Boolean.TRUE.equals(outOfMemory) && oom.get().isEmpty()) {
            return false;
        }
        if (env != null && !(PodFacts.envNumber(pod, env.name()).orElse(Double.NEGATIVE_INFINITY) >= env.min())) {
            return false;
        }
        if (arg != null && !(PodFacts.argNumber(pod, arg.name()).orElse(Double.NEGATIVE_INFINITY) >= arg.min())) {
            return false;
        }
        return predicate == null || predicate.test(pod);
    }
}
