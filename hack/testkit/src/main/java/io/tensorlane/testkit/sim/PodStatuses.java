package io.tensorlane.testkit.sim;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerState;
import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.tensorlane.contract.TerminationMessage;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The pod statuses a kubelet would report, as pure functions of the pod, the node's and pod's IPs and the time. The
 * simulator writes them through the status subresource.
 */
public final class PodStatuses {
    private PodStatuses() {}

    /** Where the pod runs and when its containers started. */
    public record Placement(String hostIp, String podIp, Instant started) {}

    /** Running; every container running, Ready as given. */
    public static PodStatus running(Pod pod, Placement at, boolean ready) {
        List<ContainerStatus> cs = new ArrayList<>();
        for (Container c : containers(pod)) {
            cs.add(base(pod, c, at)
                    .withReady(ready)
                    .withStarted(true)
                    .withRestartCount(0)
                    .withState(new ContainerStateBuilder()
                            .withNewRunning()
                            .withStartedAt(ts(at.started()))
                            .endRunning()
                            .build())
                    .build());
        }
        return status(pod, at, "Running", ready, cs);
    }

    /**
     * Pending while init container {@code init} runs (the ones before it Completed): what a kubelet shows during a
     * download step; the app containers wait in PodInitializing.
     */
    public static PodStatus initializing(Pod pod, Placement at, String init) {
        List<ContainerStatus> inits = new ArrayList<>();
        boolean before = true;
        for (Container c : pod.getSpec().getInitContainers()) {
            boolean it = c.getName().equals(init);
            ContainerStatusBuilder b = base(pod, c, at).withReady(false).withRestartCount(0);
            inits.add((it
                            ? b.withStarted(true).withState(runningState(at))
                            : before
                                    ? b.withState(completedState(pod, c, at))
                                    : b.withState(new ContainerStateBuilder()
                                            .withNewWaiting()
                                            .withReason("PodInitializing")
                                            .endWaiting()
                                            .build()))
                    .build());
            before &= !it;
        }
        List<ContainerStatus> cs = new ArrayList<>();
        for (Container c : containers(pod)) {
            cs.add(base(pod, c, at)
                    .withReady(false)
                    .withStarted(false)
                    .withRestartCount(0)
                    .withState(new ContainerStateBuilder()
                            .withNewWaiting()
                            .withReason("PodInitializing")
                            .endWaiting()
                            .build())
                    .build());
        }
        PodStatus st = status(pod, at, "Pending", false, cs);
        st.setInitContainerStatuses(inits);
        st.getConditions().stream()
                .filter(c -> "Initialized".equals(c.getType()))
                .forEach(c -> c.setStatus("False"));
        return st;
    }

    private static ContainerState completedState(Pod pod, Container c, Placement at) {
        return new ContainerStateBuilder()
                .withNewTerminated()
                .withExitCode(0)
                .withReason("Completed")
                .withStartedAt(ts(at.started()))
                .withFinishedAt(ts(at.started()))
                .withContainerID(containerId(pod, c))
                .endTerminated()
                .build();
    }

    /**
     * {@code target} container terminated by {@code action} (OOMKilled, CudaOom or Fail); others keep running. Under
     * restartPolicy Always the pod stays Running (not Ready) as the kubelet is about to restart it; otherwise it Failed.
     */
    public static PodStatus terminated(Pod pod, Placement at, SimAction action, Instant finished) {
        ContainerState term = terminatedState(pod, action, at.started(), finished);
        String target = targetContainer(pod, action);
        List<ContainerStatus> cs = new ArrayList<>();
        for (Container c : containers(pod)) {
            boolean hit = c.getName().equals(target);
            ContainerStatusBuilder b =
                    base(pod, c, at).withReady(false).withRestartCount(0).withStarted(!hit);
            cs.add((hit ? b.withState(term) : b.withState(runningState(at))).build());
        }
        return status(pod, at, restarts(pod) ? "Running" : "Failed", false, cs);
    }

    /**
     * {@code target} container waiting in CrashLoopBackOff after {@code restartCount} restarts; its last state is the
     * termination {@code action} describes (CrashLoopBackOff alone: Error, exit 1).
     */
    public static PodStatus crashLoop(Pod pod, Placement at, SimAction action, int restartCount, Instant finished) {
        ContainerState last = terminatedState(pod, action, at.started(), finished);
        String target = targetContainer(pod, action);
        List<ContainerStatus> cs = new ArrayList<>();
        for (Container c : containers(pod)) {
            boolean hit = c.getName().equals(target);
            ContainerStatusBuilder b = base(pod, c, at).withReady(false).withStarted(!hit);
            if (hit) {
                b.withRestartCount(restartCount)
                        .withLastState(last)
                        .withState(new ContainerStateBuilder()
                                .withNewWaiting()
                                .withReason("CrashLoopBackOff")
                                .withMessage("back-off 10s restarting failed container=" + c.getName() + " pod="
                                        + pod.getMetadata().getName() + "_"
                                        + pod.getMetadata().getNamespace() + "("
                                        + pod.getMetadata().getUid() + ")")
                                .endWaiting()
                                .build());
            } else {
                b.withRestartCount(0).withState(runningState(at));
            }
            cs.add(b.build());
        }
        return status(pod, at, "Running", false, cs);
    }

    /** Every container exited with {@code exitCode} (0: Completed, phase Succeeded; else Error, phase Failed). */
    public static PodStatus completed(Pod pod, Placement at, int exitCode, String message, Instant finished) {
        List<ContainerStatus> cs = new ArrayList<>();
        for (Container c : containers(pod)) {
            cs.add(base(pod, c, at)
                    .withReady(false)
                    .withStarted(false)
                    .withRestartCount(0)
                    .withState(new ContainerStateBuilder()
                            .withNewTerminated()
                            .withExitCode(exitCode)
                            .withReason(exitCode == 0 ? "Completed" : "Error")
                            .withMessage(message)
                            .withStartedAt(ts(at.started()))
                            .withFinishedAt(ts(finished))
                            .withContainerID(containerId(pod, c))
                            .endTerminated()
                            .build())
                    .build());
        }
        return status(pod, at, exitCode == 0 ? "Succeeded" : "Failed", false, cs);
    }

    /**
     * The termination message of a CUDA OOM: the runtime's own {@link TerminationMessage} (kernels module), so the
     * simulator writes exactly what the runtime writes and the operator parses.
     */
    public static String cudaOomMessage(SimAction a) {
        return TerminationMessage.cudaOom(
                        a.phase() == null ? TerminationMessage.PHASE_IPC_BUFFERS : a.phase(),
                        a.requestedBytes() == null ? 0 : a.requestedBytes(),
                        a.freeBytes() == null ? 0 : a.freeBytes(),
                        null,
                        null,
                        null,
                        null)
                .toJson();
    }

    /** True when the kubelet would restart failed containers of this pod (restartPolicy Always, the default). */
    public static boolean restarts(Pod pod) {
        String policy = pod.getSpec() == null ? null : pod.getSpec().getRestartPolicy();
        return policy == null || "Always".equals(policy);
    }

    static String targetContainer(Pod pod, SimAction action) {
        List<Container> cs = containers(pod);
        if (action.container() != null && cs.stream().anyMatch(c -> c.getName().equals(action.container()))) {
            return action.container();
        }
        return cs.isEmpty() ? null : cs.get(0).getName();
    }

    private static ContainerState terminatedState(Pod pod, SimAction action, Instant started, Instant finished) {
        String target = targetContainer(pod, action);
        int exit;
        String reason;
        String message;
        switch (action.type()) {
            case OOMKilled -> {
                exit = 137;
                reason = "OOMKilled";
                message = null;
            }
            case CudaOom -> {
                exit = 1;
                reason = "Error";
                message = cudaOomMessage(action);
            }
            default -> {
                exit = 1;
                reason = "Error";
                message = action.message();
            }
        }
        return new ContainerStateBuilder()
                .withNewTerminated()
                .withExitCode(exit)
                .withReason(reason)
                .withMessage(message)
                .withStartedAt(ts(started))
                .withFinishedAt(ts(finished))
                .withContainerID("sim://" + pod.getMetadata().getUid() + "/" + target)
                .endTerminated()
                .build();
    }

    private static ContainerState runningState(Placement at) {
        return new ContainerStateBuilder()
                .withNewRunning()
                .withStartedAt(ts(at.started()))
                .endRunning()
                .build();
    }

    private static ContainerStatusBuilder base(Pod pod, Container c, Placement at) {
        return new ContainerStatusBuilder()
                .withName(c.getName())
                .withImage(c.getImage())
                .withImageID("sim://" + c.getImage())
                .withContainerID(containerId(pod, c));
    }

    private static String containerId(Pod pod, Container c) {
        return "sim://" + pod.getMetadata().getUid() + "/" + c.getName();
    }

    private static PodStatus status(Pod pod, Placement at, String phase, boolean ready, List<ContainerStatus> cs) {
        String now = ts(at.started());
        List<PodCondition> conds = new ArrayList<>(List.of(
                cond("Initialized", true, now),
                cond("Ready", ready, now),
                cond("ContainersReady", ready, now),
                cond("PodScheduled", true, now)));
        List<ContainerStatus> inits = new ArrayList<>();
        if (pod.getSpec() != null && pod.getSpec().getInitContainers() != null) { // past the init step: all Completed
            for (Container c : pod.getSpec().getInitContainers()) {
                inits.add(base(pod, c, at)
                        .withReady(false)
                        .withRestartCount(0)
                        .withState(completedState(pod, c, at))
                        .build());
            }
        }
        return new PodStatusBuilder()
                .withInitContainerStatuses(inits)
                .withPhase(phase)
                .withHostIP(at.hostIp())
                .withPodIP(at.podIp())
                .withPodIPs(new PodIP(at.podIp()))
                .withStartTime(now)
                .withQosClass(pod.getStatus() == null ? null : pod.getStatus().getQosClass())
                .withConditions(conds)
                .withContainerStatuses(cs)
                .build();
    }

    private static PodCondition cond(String type, boolean status, String now) {
        return new PodConditionBuilder()
                .withType(type)
                .withStatus(status ? "True" : "False")
                .withLastTransitionTime(now)
                .build();
    }

    private static List<Container> containers(Pod pod) {
        return pod.getSpec() == null || pod.getSpec().getContainers() == null
                ? List.of()
                : pod.getSpec().getContainers();
    }

    static String ts(Instant t) {
        return t.truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
    }
}
