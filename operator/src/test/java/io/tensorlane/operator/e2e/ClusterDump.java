package io.tensorlane.operator.e2e;

import io.fabric8.kubernetes.api.model.ContainerState;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatus;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.testkit.LocalControlPlane;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What a fault test prints when a deployment did not converge: the namespace's pods as the API server has them (phase,
 * deletionTimestamp, finalizers, owner, node, containers, what the simulated kubelet last played), its ReplicaSets
 * and Deployments with their replica counts, the operator's Warning events (a decision made twice shows as a count of 2
 * or a second event), and the tail of kube-controller-manager's log. It tells a pod the
 * controllers never deleted from one the simulated kubelet never finalized, and both from a pod only the operator's
 * cache still holds (the operator's status names it, the API server has no such pod).
 */
final class ClusterDump {
    private ClusterDump() {}

    static String of(KubernetesClient client, String ns, GpuNodeSimulator sim, LocalControlPlane plane) {
        StringBuilder b = new StringBuilder();
        try {
            b.append("pods in ").append(ns).append(" (API server):\n");
            for (Pod p : client.pods().inNamespace(ns).list().getItems()) {
                var m = p.getMetadata();
                var st = p.getStatus();
                GpuNodeSimulator.Applied played = sim == null ? null : sim.applied(m.getUid());
                b.append("  ")
                        .append(m.getName())
                        .append(" phase=")
                        .append(st == null ? null : st.getPhase())
                        .append(" deletionTimestamp=")
                        .append(m.getDeletionTimestamp())
                        .append(" finalizers=")
                        .append(m.getFinalizers())
                        .append(" owner=")
                        .append(owner(p))
                        .append(" node=")
                        .append(p.getSpec().getNodeName())
                        .append(" played=")
                        .append(played == null ? null : played.type() + "@" + played.at())
                        .append(" containers=")
                        .append(
                                st == null || st.getContainerStatuses() == null
                                        ? "[]"
                                        : st.getContainerStatuses().stream()
                                                .map(ClusterDump::container)
                                                .collect(Collectors.joining(", ", "[", "]")))
                        .append('\n');
            }
            b.append("replicasets (spec/status replicas, ready, available, generation/observed):\n");
            for (ReplicaSet rs :
                    client.apps().replicaSets().inNamespace(ns).list().getItems()) {
                var s = Optional.ofNullable(rs.getStatus());
                b.append(workload(
                        rs,
                        rs.getSpec().getReplicas(),
                        s.map(ReplicaSetStatus::getReplicas),
                        s.map(ReplicaSetStatus::getObservedGeneration),
                        Map.entry("ready", s.map(ReplicaSetStatus::getReadyReplicas)),
                        Map.entry("available", s.map(ReplicaSetStatus::getAvailableReplicas))));
            }
            b.append(
                    "deployments (spec/status replicas, updated, ready, available, unavailable, generation/observed):\n");
            for (Deployment d :
                    client.apps().deployments().inNamespace(ns).list().getItems()) {
                var s = Optional.ofNullable(d.getStatus());
                b.append(workload(
                        d,
                        d.getSpec().getReplicas(),
                        s.map(DeploymentStatus::getReplicas),
                        s.map(DeploymentStatus::getObservedGeneration),
                        Map.entry("updated", s.map(DeploymentStatus::getUpdatedReplicas)),
                        Map.entry("ready", s.map(DeploymentStatus::getReadyReplicas)),
                        Map.entry("available", s.map(DeploymentStatus::getAvailableReplicas)),
                        Map.entry("unavailable", s.map(DeploymentStatus::getUnavailableReplicas))));
            }
            b.append("the operator's Warning events (object, reason, count, message):\n");
            client.v1().events().inNamespace(ns).list().getItems().stream()
                    .filter(ev ->
                            "InferenceDeployment".equals(ev.getInvolvedObject().getKind())
                                    && "Warning".equals(ev.getType()))
                    .forEach(ev -> b.append("  ")
                            .append(ev.getInvolvedObject().getName())
                            .append(' ')
                            .append(ev.getReason())
                            .append(" count=")
                            .append(ev.getCount())
                            .append(" last=")
                            .append(ev.getLastTimestamp())
                            .append(": ")
                            .append(ev.getMessage())
                            .append('\n'));
        } catch (RuntimeException e) {
            b.append("  (cannot list: ").append(e.getMessage()).append(")\n");
        }
        if (plane != null) {
            plane.processes().stream()
                    .filter(p -> p.name().equals("kube-controller-manager"))
                    .findFirst()
                    .ifPresent(cm -> b.append("kube-controller-manager log ")
                            .append(cm.log())
                            .append(", its last ")
                            .append(LOG_LINES)
                            .append(" errors and lines about ")
                            .append(ns)
                            .append(" (endpoints left out):\n")
                            .append(controllerLog(cm.log(), ns)));
        }
        return b.toString();
    }

    static final int LOG_LINES = 40;

    /** Errors (klog E lines) and lines naming the namespace, without the endpoints controllers' noise; cut to 300. */
    static String controllerLog(Path log, String ns) {
        try (Stream<String> lines = Files.lines(log)) {
            List<String> picked = lines.filter(l -> l.startsWith("E") || l.contains(ns))
                    .filter(l -> !l.contains("ndpoint"))
                    .map(l -> l.length() > 300 ? l.substring(0, 300) + "..." : l)
                    .toList();
            return String.join("\n", picked.subList(Math.max(0, picked.size() - LOG_LINES), picked.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(cannot read: " + e.getMessage() + ")";
        }
    }

    /**
     * One ReplicaSet or Deployment: "  name rev=R spec/status k=v ... gen=G/O" (a value absent with the status prints
     * null).
     */
    @SafeVarargs
    static String workload(
            HasMetadata o,
            Integer specReplicas,
            Optional<Integer> statusReplicas,
            Optional<Long> observedGeneration,
            Map.Entry<String, Optional<Integer>>... named) {
        StringBuilder b = new StringBuilder("  ")
                .append(o.getMetadata().getName())
                .append(" rev=")
                .append(o.getMetadata().getAnnotations().get(FaultInvariants.KUBE_REVISION))
                .append(' ')
                .append(specReplicas)
                .append('/')
                .append(statusReplicas.orElse(null));
        for (Map.Entry<String, Optional<Integer>> e : named) {
            b.append(' ').append(e.getKey()).append('=').append(e.getValue().orElse(null));
        }
        return b.append(" gen=")
                .append(o.getMetadata().getGeneration())
                .append('/')
                .append(observedGeneration.orElse(null))
                .append('\n')
                .toString();
    }

    private static String owner(HasMetadata o) {
        List<OwnerReference> refs = o.getMetadata().getOwnerReferences();
        return refs == null || refs.isEmpty()
                ? null
                : refs.stream().map(r -> r.getKind() + "/" + r.getName()).collect(Collectors.joining(","));
    }

    private static String container(ContainerStatus cs) {
        ContainerState s = cs.getState();
        String state = s == null
                ? "?"
                : s.getRunning() != null
                        ? "running"
                        : s.getWaiting() != null
                                ? "waiting:" + s.getWaiting().getReason()
                                : s.getTerminated() != null
                                        ? "terminated:" + s.getTerminated().getReason() + "("
                                                + s.getTerminated().getExitCode() + ")"
                                        : "?";
        return cs.getName() + " " + state + " ready=" + cs.getReady() + " restarts=" + cs.getRestartCount();
    }
}
