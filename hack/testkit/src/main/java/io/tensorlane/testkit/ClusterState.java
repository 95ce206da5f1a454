package io.tensorlane.testkit;

import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@code <state>/state.json} records about a running control plane, so that another process (the shell's
 * {@code down}, a test JVM reusing it) can find it and stop it by PID.
 *
 * @param version     Kubernetes version
 * @param kubeconfig  admin kubeconfig
 * @param masterUrl   API server URL
 * @param etcdData    etcd data directory (removed on stop)
 * @param pids        process name to PID, in start order
 * @param logs        process name to log file
 */
public record ClusterState(
        String version,
        String kubeconfig,
        String masterUrl,
        String etcdData,
        Map<String, Long> pids,
        Map<String, String> logs) {
    public static final String FILE = "state.json";

    static ClusterState of(LocalControlPlane plane) {
        Map<String, Long> pids = new LinkedHashMap<>();
        Map<String, String> logs = new LinkedHashMap<>();
        for (ManagedProcess p : plane.processes()) {
            pids.put(p.name(), p.pid());
            logs.put(p.name(), p.log().toString());
        }
        return new ClusterState(
                KubeBinaries.VERSION,
                plane.cluster().kubeconfig().toString(),
                plane.cluster().masterUrl(),
                plane.etcdData().toString(),
                pids,
                logs);
    }

    void write(Path stateDir) {
        try {
            Path tmp = stateDir.resolve(FILE + ".tmp");
            Files.writeString(tmp, Serialization.asJson(this));
            Files.move(tmp, stateDir.resolve(FILE), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + stateDir.resolve(FILE), e);
        }
    }

    /** The state in {@code stateDir}, or null when there is none. */
    public static ClusterState read(Path stateDir) {
        Path f = stateDir.resolve(FILE);
        if (!Files.isRegularFile(f)) {
            return null;
        }
        try {
            return Serialization.jsonMapper().readValue(Files.readString(f), ClusterState.class);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + f, e);
        }
    }

    /** The recorded processes (matched by PID and binary name, so a reused PID is never signalled). */
    public List<ManagedProcess> processes() {
        List<ManagedProcess> list = new ArrayList<>();
        pids.forEach((name, pid) ->
                list.add(ManagedProcess.ofPid(name, pid, Path.of(logs.getOrDefault(name, "/dev/null")))));
        return list;
    }

    /** True when every recorded process still runs. */
    public boolean allAlive() {
        return processes().stream().allMatch(ManagedProcess::isAlive);
    }

    /** Stops the recorded processes by PID and removes the etcd data and the state directory. */
    public static boolean stop(Path stateDir) {
        ClusterState s = read(stateDir);
        if (s == null) {
            return false;
        }
        LocalControlPlane.stopProcesses(s.processes());
        StateDirs.deleteTree(Path.of(s.etcdData()));
        StateDirs.deleteTree(stateDir);
        return true;
    }
}
