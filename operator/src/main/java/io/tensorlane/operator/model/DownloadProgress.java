package io.tensorlane.operator.model;

import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.tensorlane.api.v1alpha1.DownloadStatus;
import io.tensorlane.contract.FetchProgress;
import io.tensorlane.operator.render.ModelVolumes;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The hf:// download step of a deployment's pods (init container {@value ModelVolumes#INIT_CONTAINER}, and for an hf://
 * draft model {@value ModelVolumes#DRAFT_INIT_CONTAINER}: one {@link Step} each) in its status: which pods run it (pod
 * status), how far the slowest is (the {@link FetchProgress} line of its log), and whether it ended. Each step has its
 * own status field (status.download, status.draftDownload), events and messages, the draft's naming it ("fetching draft
 * model org/name@rev: …"). Pure; the reconciler reads the logs ({@link FetchLogs}) and {@code
 * StatusAggregator.withDownload} puts the result in the status. Status changes at most once
 * per {@value #STEP_PERCENT}% step or {@link #MIN_INTERVAL}, so a download of any size costs a handful of writes.
 */
public final class DownloadProgress {
    public static final String DOWNLOADING = "Downloading";
    public static final String COMPLETE = "Complete";
    public static final String FAILED = "Failed";
    /** The Progressing condition's reason while a download step runs. */
    public static final String REASON = "DownloadingModel";

    public static final int STEP_PERCENT = 10;
    public static final Duration MIN_INTERVAL = Duration.ofSeconds(30);

    private DownloadProgress() {}

    /** A download step of the pod: spec.model's or the draft model's. */
    public enum Step {
        /** spec.model: init container {@value ModelVolumes#INIT_CONTAINER}, status.download. */
        MODEL(ModelVolumes.INIT_CONTAINER, ""),
        /** spec.serving.speculative.draftModel: {@value ModelVolumes#DRAFT_INIT_CONTAINER}, status.draftDownload. */
        DRAFT(ModelVolumes.DRAFT_INIT_CONTAINER, "draft model ");

        private final String container;
        private final String label;

        Step(String container, String label) {
            this.container = container;
            this.label = label;
        }

        /** The init container that runs it. */
        public String container() {
            return container;
        }

        /** What its messages call the model before its name ("" for spec.model's, "draft model " for the draft's). */
        String label() {
            return label;
        }
    }

    /** Where one pod's download step stands. */
    public enum State {
        NONE,
        RUNNING,
        DONE,
        FAILED
    }

    /**
     * One pod's download step.
     *
     * @param pod      pod name
     * @param state    from the pod's init container status
     * @param model    org/name@rev from the step's --source (null: no step)
     * @param progress the last progress line of its log (RUNNING only; null when none was read yet)
     * @param failure  FAILED: reason, exit code and termination message
     */
    public record PodDownload(String pod, State state, String model, FetchProgress progress, String failure) {
        public PodDownload withProgress(FetchProgress p) {
            return new PodDownload(pod, state, model, p, failure);
        }
    }

    /** spec.model's download step of {@code pod} ({@link #observe(Pod, Step)}). */
    public static PodDownload observe(Pod pod) {
        return observe(pod, Step.MODEL);
    }

    /** Download step {@code step} of {@code pod} from its spec and status (no log yet). */
    public static PodDownload observe(Pod pod, Step step) {
        String name = pod.getMetadata().getName();
        var init = pod.getSpec() == null || pod.getSpec().getInitContainers() == null
                ? null
                : pod.getSpec().getInitContainers().stream()
                        .filter(c -> step.container().equals(c.getName()))
                        .findFirst()
                        .orElse(null);
        if (init == null || pod.getMetadata().getDeletionTimestamp() != null) {
            return new PodDownload(name, State.NONE, null, null, null);
        }
        String model = modelOf(init.getArgs());
        ContainerStatus st = pod.getStatus() == null || pod.getStatus().getInitContainerStatuses() == null
                ? null
                : pod.getStatus().getInitContainerStatuses().stream()
                        .filter(c -> step.container().equals(c.getName()))
                        .findFirst()
                        .orElse(null);
        if (st == null || st.getState() == null) {
            return new PodDownload(name, State.NONE, model, null, null);
        }
        if (st.getState().getRunning() != null) {
            return new PodDownload(name, State.RUNNING, model, null, null);
        }
        ContainerStateTerminated t = st.getState().getTerminated();
        if (t == null && st.getState().getWaiting() != null && st.getLastState() != null) {
            t = st.getLastState().getTerminated(); // back-off after a failed attempt
        }
        if (t != null && t.getExitCode() != null && t.getExitCode() == 0) {
            return new PodDownload(name, State.DONE, model, null, null);
        }
        if (t != null) {
            String msg = t.getMessage() == null || t.getMessage().isBlank()
                    ? ""
                    : ": " + t.getMessage().strip();
            return new PodDownload(
                    name,
                    State.FAILED,
                    model,
                    null,
                    "pod " + name + " step " + step.container() + " exited " + t.getExitCode()
                            + (t.getReason() == null ? "" : " (" + t.getReason() + ")") + msg);
        }
        return new PodDownload(name, State.NONE, model, null, null);
    }

    /** org/name@rev of {@code --source hf://org/name@rev}, or null. */
    static String modelOf(List<String> args) {
        if (args == null) {
            return null;
        }
        int i = args.indexOf("--source");
        if (i < 0 || i + 1 >= args.size()) {
            return null;
        }
        String s = args.get(i + 1);
        return s.startsWith("hf://") ? s.substring("hf://".length()) : s;
    }

    /** The next status.download ({@link #next(DownloadStatus, List, Instant, Step)} of spec.model's step). */
    public static DownloadStatus next(DownloadStatus prev, List<PodDownload> pods, Instant now) {
        return next(prev, pods, now, Step.MODEL);
    }

    /**
     * The next status of download step {@code step} (status.download, status.draftDownload) from the pods' {@code
     * step}: {@code prev} itself when nothing worth a write changed (same phase, model and pod count, same {@value
     * #STEP_PERCENT}% step, less than {@link #MIN_INTERVAL} since the last update), else a fresh one.
     */
    public static DownloadStatus next(DownloadStatus prev, List<PodDownload> pods, Instant now, Step step) {
        String what = step.label();
        List<PodDownload> running =
                pods.stream().filter(p -> p.state() == State.RUNNING).toList();
        if (!running.isEmpty()) {
            // the slowest pod: the rollout waits for it; a pod whose log has no progress yet counts as the slowest
            PodDownload slowest = running.stream()
                    .min(Comparator.comparingInt(DownloadProgress::bucketOf)
                            .thenComparingLong(p ->
                                    p.progress() == null ? -1 : p.progress().doneBytes()))
                    .orElseThrow();
            FetchProgress p = slowest.progress();
            String model = p != null ? p.model() : slowest.model();
            DownloadStatus d = status(
                    DOWNLOADING,
                    model,
                    running.size(),
                    p == null ? null : p.doneBytes(),
                    p == null ? null : p.totalBytes(),
                    p == null ? null : p.percent(),
                    "fetching " + what + model + ": "
                            + (p == null ? "starting" : p.describe())
                            + (running.size() > 1 ? " (slowest of " + running.size() + " pods)" : ""),
                    now);
            boolean same = prev != null
                    && DOWNLOADING.equals(prev.phase)
                    && Objects.equals(prev.model, model)
                    && Objects.equals(prev.pods, d.pods)
                    && bucket(prev) == bucket(d)
                    && !olderThan(prev, now);
            return same ? prev : d;
        }
        Optional<PodDownload> failed =
                pods.stream().filter(p -> p.state() == State.FAILED).findFirst();
        if (failed.isPresent()) {
            String model = failed.get().model();
            DownloadStatus d = status(
                    FAILED,
                    model,
                    0,
                    prev == null ? null : prev.doneBytes,
                    prev == null ? null : prev.totalBytes,
                    prev == null ? null : prev.percent,
                    "fetching " + what + model + " failed: " + failed.get().failure(),
                    now);
            return prev != null && FAILED.equals(prev.phase) && Objects.equals(prev.message, d.message) ? prev : d;
        }
        if (prev != null && DOWNLOADING.equals(prev.phase)) {
            Optional<PodDownload> done = pods.stream()
                    .filter(p -> p.state() == State.DONE && Objects.equals(p.model(), prev.model))
                    .findFirst();
            if (done.isPresent()) {
                long total = prev.totalBytes == null ? 0 : prev.totalBytes;
                return status(
                        COMPLETE,
                        prev.model,
                        0,
                        total,
                        total,
                        100,
                        "fetched " + what + prev.model
                                + (total > 0
                                        ? " ("
                                                + new FetchProgress(
                                                                prev.model, FetchProgress.COMPLETE, total, total, 0, 0)
                                                        .describe()
                                                        .replace(" (100%)", "")
                                                + ")"
                                        : ""),
                        now);
            }
            // the downloading pods are gone (deleted or replaced) without finishing: nothing runs now
            return null;
        }
        return prev;
    }

    /** The event of spec.model's step ({@link #event(DownloadStatus, DownloadStatus, Step)}). */
    public static String[] event(DownloadStatus prev, DownloadStatus next) {
        return event(prev, next, Step.MODEL);
    }

    /**
     * The event for a change of phase of download step {@code step} (one per transition), or null: {type, reason,
     * message}; the draft's messages name the draft model.
     */
    public static String[] event(DownloadStatus prev, DownloadStatus next, Step step) {
        String was = prev == null ? null : prev.phase;
        String is = next == null ? null : next.phase;
        if (is == null || is.equals(was) && Objects.equals(prev.model, next.model)) {
            return null;
        }
        return switch (is) {
            case DOWNLOADING ->
                new String[] {
                    "Normal",
                    "DownloadStarted",
                    "fetching " + step.label() + next.model + " in " + next.pods + " pod(s) (init container "
                            + step.container() + ")"
                };
            case COMPLETE -> new String[] {"Normal", "DownloadComplete", next.message};
            default -> new String[] {"Warning", "DownloadFailed", next.message};
        };
    }

    private static DownloadStatus status(
            String phase, String model, int pods, Long done, Long total, Integer percent, String message, Instant now) {
        DownloadStatus d = new DownloadStatus();
        d.phase = phase;
        d.model = model;
        d.pods = pods;
        d.doneBytes = done;
        d.totalBytes = total;
        d.percent = percent;
        d.message = message;
        d.updatedAt = now.toString();
        return d;
    }

    private static int bucketOf(PodDownload p) {
        return p.progress() == null ? -1 : p.progress().percent() / STEP_PERCENT;
    }

    /** -1 before the first progress line, else the 10% step (100% is its own step). */
    private static int bucket(DownloadStatus d) {
        return d.percent == null ? -1 : d.percent / STEP_PERCENT;
    }

    private static boolean olderThan(DownloadStatus d, Instant now) {
        try {
            return d.updatedAt == null
                    || !Instant.parse(d.updatedAt).plus(MIN_INTERVAL).isAfter(now);
        } catch (java.time.format.DateTimeParseException e) {
            return true;
        }
    }
}
