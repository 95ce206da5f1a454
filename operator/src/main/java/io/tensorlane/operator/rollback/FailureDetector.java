package io.tensorlane.operator.rollback;

import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.tensorlane.contract.TerminationMessage;
import io.tensorlane.operator.engine.EngineProfile;
import io.tensorlane.operator.render.Renderer;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** Finds failures on the pods of one revision; pure over the observed objects. */
public final class FailureDetector {
    /**
     * A Java heap OOM (the runtime image, which runs the download step in every pod, is Java) is not GPU memory;
     * lowering the GPU fraction would not help.
     */
    static final String JAVA_HEAP_OOM = "java.lang.outofmemoryerror";
    /** Longest message kept in status. */
    static final int MAX_MESSAGE = 512;

    private FailureDetector() {}

    /**
     * The most significant failure on pods labelled {@code tensorlane.io/revision=revision}: CUDA OOM, then host
     * OOMKilled, then CrashLoopBackOff (each from {@code state} or {@code lastState}); then the Deployment's
     * Progressing=False/ProgressDeadlineExceeded when its template has that revision.
     *
     * @param deployment the owned Deployment, or null
     * @param engine the profile of the engine the revision runs (its OOM log lines)
     * @param now used as the time when a pod does not say when it failed
     */
    public static Optional<FailureSignal> detect(
            List<Pod> pods, String revision, Deployment deployment, EngineProfile engine, Instant now) {
        List<FailureSignal> found = new ArrayList<>();
        for (Pod pod : ofRevision(pods, revision)) {
            String name = pod.getMetadata().getName();
            for (ContainerStatus cs : statuses(pod)) {
                for (ContainerStateTerminated t : terminated(cs)) {
                    Instant at = time(t.getFinishedAt(), now);
                    String cuda = cudaOom(t.getMessage(), engine.oomLogMarkers());
                    if (cuda != null) {
                        found.add(new FailureSignal(FailureSignal.Kind.CudaOutOfMemory, name, revision, cuda, at));
                    } else if ("OOMKilled".equals(t.getReason())) {
                        found.add(new FailureSignal(
                                FailureSignal.Kind.OOMKilled,
                                name,
                                revision,
                                "container " + cs.getName() + " was OOMKilled (host memory), exit code "
                                        + t.getExitCode(),
                                at));
                    }
                }
                if (cs.getState() != null
                        && cs.getState().getWaiting() != null
                        && "CrashLoopBackOff".equals(cs.getState().getWaiting().getReason())) {
                    ContainerStateTerminated last =
                            cs.getLastState() == null ? null : cs.getLastState().getTerminated();
                    String detail = last == null
                            ? ""
                            : ": last exit code " + last.getExitCode()
                                    + (last.getReason() == null ? "" : " (" + last.getReason() + ")");
                    found.add(new FailureSignal(
                            FailureSignal.Kind.CrashLoopBackOff,
                            name,
                            revision,
                            "container " + cs.getName() + " restarted " + cs.getRestartCount() + " times" + detail,
                            last == null ? now : time(last.getFinishedAt(), now)));
                }
            }
        }
        Optional<FailureSignal> podFailure =
                found.stream().min(Comparator.comparing(FailureSignal::kind).thenComparing(FailureSignal::pod));
        if (podFailure.isPresent()) {
            return podFailure;
        }
        return progressDeadline(deployment, revision, now);
    }

    private static Optional<FailureSignal> progressDeadline(Deployment d, String revision, Instant now) {
        if (d == null
                || d.getStatus() == null
                || d.getStatus().getConditions() == null
                || !revision.equals(
                        d.getSpec().getTemplate().getMetadata().getLabels().get(Renderer.LABEL_REVISION))) {
            return Optional.empty();
        }
        for (DeploymentCondition c : d.getStatus().getConditions()) {
            if ("Progressing".equals(c.getType())
                    && "False".equals(c.getStatus())
                    && "ProgressDeadlineExceeded".equals(c.getReason())) {
                return Optional.of(new FailureSignal(
                        FailureSignal.Kind.ProgressDeadlineExceeded,
                        null,
                        revision,
                        trim(c.getMessage()),
                        time(c.getLastUpdateTime(), now)));
            }
        }
        return Optional.empty();
    }

    /**
     * The CUDA-OOM description in a termination message, or null: our runtime's JSON ({@link TerminationMessage},
     * reason CudaOutOfMemory) or, for an engine that logs it (FallbackToLogsOnError), the first log line with one of
     * {@code markers} ({@link EngineProfile#oomLogMarkers()}).
     */
    static String cudaOom(String message, List<String> markers) {
        if (message == null || message.isBlank()) {
            return null;
        }
        String trimmed = message.trim();
        if (trimmed.startsWith("{")) {
            try {
                TerminationMessage tm = TerminationMessage.parse(trimmed);
                if (TerminationMessage.CUDA_OUT_OF_MEMORY.equals(tm.reason())) {
                    return trim(
                            tm.message() != null
                                    ? tm.message()
                                    : "CUDA out of memory in phase " + tm.phase() + ": requested " + tm.requestedBytes()
                                            + " bytes, " + tm.freeBytes() + " bytes free");
                }
                return null;
            } catch (IllegalArgumentException notOurs) {
                // not our JSON: fall through to the log-line match
            }
        }
        for (String line : trimmed.split("\\R")) {
            String lower = line.toLowerCase(Locale.ROOT);
            if (lower.contains(JAVA_HEAP_OOM)) {
                continue;
            }
            if (markers.stream().anyMatch(lower::contains)) {
                return trim(line.trim());
            }
        }
        return null;
    }

    /** Since when all {@code expectedReplicas} pods of the revision have been Ready; empty when not all are. */
    public static Optional<Instant> allReadySince(List<Pod> pods, String revision, int expectedReplicas) {
        List<Pod> current = ofRevision(pods, revision).stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .toList();
        if (expectedReplicas < 1 || current.size() < expectedReplicas) {
            return Optional.empty();
        }
        Instant since = Instant.EPOCH;
        for (Pod p : current) {
            PodCondition ready = p.getStatus() == null || p.getStatus().getConditions() == null
                    ? null
                    : p.getStatus().getConditions().stream()
                            .filter(c -> "Ready".equals(c.getType()))
                            .findFirst()
                            .orElse(null);
            if (ready == null || !"True".equals(ready.getStatus())) {
                return Optional.empty();
            }
            Instant t = time(ready.getLastTransitionTime(), null);
            if (t == null) {
                return Optional.empty();
            }
            since = t.isAfter(since) ? t : since;
        }
        return Optional.of(since);
    }

    private static List<Pod> ofRevision(List<Pod> pods, String revision) {
        return pods.stream()
                .filter(p -> p.getMetadata() != null
                        && p.getMetadata().getLabels() != null
                        && revision != null
                        && revision.equals(p.getMetadata().getLabels().get(Renderer.LABEL_REVISION)))
                .sorted(Comparator.comparing(p -> p.getMetadata().getName()))
                .toList();
    }

    private static List<ContainerStatus> statuses(Pod pod) {
        List<ContainerStatus> out = new ArrayList<>();
        if (pod.getStatus() != null) {
            if (pod.getStatus().getInitContainerStatuses() != null) {
                out.addAll(pod.getStatus().getInitContainerStatuses());
            }
            if (pod.getStatus().getContainerStatuses() != null) {
                out.addAll(pod.getStatus().getContainerStatuses());
            }
        }
        return out;
    }

    private static List<ContainerStateTerminated> terminated(ContainerStatus cs) {
        List<ContainerStateTerminated> out = new ArrayList<>();
        if (cs.getState() != null && cs.getState().getTerminated() != null) {
            out.add(cs.getState().getTerminated());
        }
        if (cs.getLastState() != null && cs.getLastState().getTerminated() != null) {
            out.add(cs.getLastState().getTerminated());
        }
        return out;
    }

    private static Instant time(String rfc3339, Instant fallback) {
        if (rfc3339 == null) {
            return fallback;
        }
        try {
            return Instant.parse(rfc3339);
        } catch (DateTimeParseException e) {
            return fallback;
        }
    }

    static String trim(String s) {
        if (s == null) {
            return null;
        }
        return s.length() <= MAX_MESSAGE ? s : s.substring(0, MAX_MESSAGE - 1) + "…";
    }
}
