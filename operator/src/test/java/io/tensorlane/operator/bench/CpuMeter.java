package io.tensorlane.operator.bench;

import io.tensorlane.testkit.LocalControlPlane;
import io.tensorlane.testkit.ManagedProcess;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * CPU seconds used by the control plane's processes (from /proc/PID/stat) and by this JVM (the operator, the simulator
 * and the bench), and by the JVM's threads: where a phase's time goes on a machine of two cores.
 */
final class CpuMeter {
    private static final double TICKS = 100.0; // USER_HZ on Linux

    private final Map<String, Long> pids = new LinkedHashMap<>();

    /** The processes of {@code plane} (none when attached to a cluster started elsewhere) and this JVM. */
    CpuMeter(LocalControlPlane plane) {
        if (plane != null) {
            for (ManagedProcess p : plane.processes()) {
                pids.put(p.name(), p.pid());
            }
        }
        pids.put("bench JVM", ProcessHandle.current().pid());
    }

    /** CPU seconds so far per process. */
    Map<String, Double> sample() {
        Map<String, Double> m = new LinkedHashMap<>();
        pids.forEach((name, pid) -> m.put(name, seconds(pid)));
        return m;
    }

    /**
     * CPU seconds so far of this JVM's live threads, grouped by name without digits ("ReconcilerExecutor-#", "vert.x-
     * eventloop-thread-#"): which part of the JVM (reconcilers, the HTTP client, the simulator, the event writer) used it.
     */
    static Map<String, Double> threads() {
        Map<String, Double> m = new java.util.TreeMap<>();
        var mx = ManagementFactory.getThreadMXBean();
        for (var info : mx.getThreadInfo(mx.getAllThreadIds())) {
            long ns = info == null ? -1 : mx.getThreadCpuTime(info.getThreadId());
            if (ns > 0) {
                m.merge(info.getThreadName().replaceAll("\\d+", "#"), ns / 1e9, Double::sum);
            }
        }
        return m;
    }

    /** The {@code top} largest differences {@code after - before}, largest first: "name 12.3 s, ...". */
    static String top(Map<String, Double> before, Map<String, Double> after, int top) {
        return after.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0.0)))
                .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
                .limit(top)
                .map(e -> String.format("%s %.1f s", e.getKey(), e.getValue()))
                .collect(java.util.stream.Collectors.joining(", "));
    }

    /** "kube-apiserver 40.1 s, etcd 6.0 s, ..." of {@code after - before}. */
    static String between(Map<String, Double> before, Map<String, Double> after) {
        StringBuilder b = new StringBuilder();
        after.forEach((k, v) -> b.append(b.length() == 0 ? "" : ", ")
                .append(k)
                .append(' ')
                .append(String.format("%.1f s", v - before.getOrDefault(k, 0.0))));
        return b.toString();
    }

    private static double seconds(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            // fields after the command (which may contain spaces) in parentheses; utime and stime are fields 14 and 15
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICKS;
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }
}
