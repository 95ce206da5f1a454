package io.tensorlane.testkit.sim;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** The simulator's rules: in-process ones first, then the ConfigMap's (reloaded on change). Thread-safe. */
final class SimRules {
    private static final ObjectMapper YAML =
            new ObjectMapper(new YAMLFactory()).configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);

    private final String configMapRef;
    private final List<SimRule> inProcess = new CopyOnWriteArrayList<>();
    private volatile List<SimRule> fromConfigMap = List.of();

    SimRules(String configMapRef) {
        this.configMapRef = configMapRef;
    }

    void add(SimRule rule) {
        inProcess.add(rule);
    }

    synchronized void set(List<SimRule> rules) {
        inProcess.clear();
        inProcess.addAll(rules);
    }

    void clear() {
        inProcess.clear();
    }

    List<SimRule> all() {
        List<SimRule> all = new ArrayList<>(inProcess);
        all.addAll(fromConfigMap);
        return all;
    }

    /** The first rule that matches, or null. */
    SimRule firstMatch(Pod pod) {
        return firstMatch(pod, java.util.Optional::empty);
    }

    /** The first rule that matches, or null; {@code oom} is asked only by an outOfMemory rule. */
    SimRule firstMatch(
            Pod pod, java.util.function.Supplier<java.util.Optional<io.tensorlane.contract.MemoryBudget.Oom>> oom) {
        return all().stream().filter(r -> r.matches(pod, oom)).findFirst().orElse(null);
    }

    /** A new or changed ConfigMap (null: deleted). Bad YAML keeps the previous rules and says why. */
    void onConfigMap(ConfigMap cm) {
        String yaml = cm == null || cm.getData() == null ? null : cm.getData().get(GpuNodeSimulator.RULES_KEY);
        try {
            fromConfigMap = yaml == null ? List.of() : parse(yaml);
            log("rules from ConfigMap " + configMapRef + ": " + fromConfigMap.size());
        } catch (IllegalArgumentException e) {
            log("ignoring ConfigMap " + configMapRef + " (keeping " + fromConfigMap.size() + " previous rules): "
                    + e.getMessage());
        }
    }

    static List<SimRule> parse(String yaml) {
        try {
            List<SimRule> parsed = YAML.readValue(yaml, new TypeReference<List<SimRule>>() {});
            return parsed == null ? List.of() : List.copyOf(parsed);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(
                    "invalid simulator rules: " + e.getOriginalMessage()
                            + (e.getLocation() != null
                                    ? " (line " + e.getLocation().getLineNr() + ")"
                                    : ""),
                    e);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("invalid simulator rules: " + e.getMessage(), e);
        }
    }

    private static void log(String msg) {
        System.err.println("[gpu-sim] " + msg);
    }
}
