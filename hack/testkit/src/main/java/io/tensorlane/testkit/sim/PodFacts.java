package io.tensorlane.testkit.sim;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.tensorlane.contract.EngineEnv;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;

/** What a rule can read from a pod spec: numeric env values, numeric flag values, the memory fraction. Pure. */
public final class PodFacts {
    /** Flags that carry the static memory fraction: SGLang, vLLM, the Tensorlane runtime. */
    public static final List<String> MEMORY_FRACTION_FLAGS =
            List.of("--mem-fraction-static", "--gpu-memory-utilization", "--memory-fraction");
    /** Environment variables that carry it (the engine env contract's name). */
    public static final List<String> MEMORY_FRACTION_ENV = List.of(EngineEnv.MEMORY_FRACTION);

    private PodFacts() {}

    /** The largest memory fraction any container is started with, by flag or env; empty when none is given. */
    public static OptionalDouble memoryFraction(Pod pod) {
        double best = Double.NaN;
        for (String f : MEMORY_FRACTION_FLAGS) {
            best = max(best, argNumber(pod, f));
        }
        for (String e : MEMORY_FRACTION_ENV) {
            best = max(best, envNumber(pod, e));
        }
        return Double.isNaN(best) ? OptionalDouble.empty() : OptionalDouble.of(best);
    }

    /** The largest numeric value of env var {@code name} over the pod's containers. */
    public static OptionalDouble envNumber(Pod pod, String name) {
        double best = Double.NaN;
        for (Container c : containers(pod)) {
            for (EnvVar e : c.getEnv() == null ? List.<EnvVar>of() : c.getEnv()) {
                if (name.equals(e.getName())) {
                    best = max(best, parse(e.getValue()));
                }
            }
        }
        return Double.isNaN(best) ? OptionalDouble.empty() : OptionalDouble.of(best);
    }

    /** The largest numeric value of flag {@code flag} ({@code --flag v} or {@code --flag=v}) in commands and args. */
    public static OptionalDouble argNumber(Pod pod, String flag) {
        double best = Double.NaN;
        for (Container c : containers(pod)) {
            List<String> words = new ArrayList<>();
            if (c.getCommand() != null) {
                words.addAll(c.getCommand());
            }
            if (c.getArgs() != null) {
                words.addAll(c.getArgs());
            }
            for (int i = 0; i < words.size(); i++) {
                String w = words.get(i);
                if (w.equals(flag) && i + 1 < words.size()) {
                    best = max(best, parse(words.get(i + 1)));
                } else if (w.startsWith(flag + "=")) {
                    best = max(best, parse(w.substring(flag.length() + 1)));
                }
            }
        }
        return Double.isNaN(best) ? OptionalDouble.empty() : OptionalDouble.of(best);
    }

    private static List<Container> containers(Pod pod) {
        return pod.getSpec() == null || pod.getSpec().getContainers() == null
                ? List.of()
                : pod.getSpec().getContainers();
    }

    private static OptionalDouble parse(String s) {
        try {
            return s == null ? OptionalDouble.empty() : OptionalDouble.of(Double.parseDouble(s.trim()));
        } catch (NumberFormatException e) {
            return OptionalDouble.empty();
        }
    }

    private static double max(double best, OptionalDouble v) {
        if (v.isEmpty()) {
            return best;
        }
        return Double.isNaN(best) ? v.getAsDouble() : Math.max(best, v.getAsDouble());
    }
}
