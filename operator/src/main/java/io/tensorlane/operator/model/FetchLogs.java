package io.tensorlane.operator.model;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.tensorlane.contract.FetchProgress;
import io.tensorlane.operator.render.ModelVolumes;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Reads the last {@link FetchProgress} line of a running download step from its log (GET pods/log, container
 * {@value ModelVolumes#INIT_CONTAINER} or, for a draft model, {@value ModelVolumes#DRAFT_INIT_CONTAINER}; the last
 * {@value #TAIL_LINES} lines): the only I/O of the download progress.
 * At most one read per pod per {@link #MIN_READ_INTERVAL} (reconciles triggered by other events reuse the last answer),
 * so N downloading pods cost N small GETs per interval. A read that fails keeps the last answer.
 */
public final class FetchLogs {
    private static final Logger LOG = Logger.getLogger(FetchLogs.class);
    public static final int TAIL_LINES = 40;
    public static final Duration MIN_READ_INTERVAL = Duration.ofSeconds(10);
    private static final Duration FORGET_AFTER = Duration.ofMinutes(10);

    private record Read(Instant at, FetchProgress progress) {}

    private final Map<String, Read> byPodUid = new ConcurrentHashMap<>(); // pod UID/container -> last answer

    /** Every pod's spec.model download step, the running ones with their last progress line. */
    public List<DownloadProgress.PodDownload> observe(KubernetesClient client, List<Pod> pods, Instant now) {
        return observe(client, pods, now, DownloadProgress.Step.MODEL);
    }

    /** Every pod's download step {@code step}, the running ones with their last progress line (its container's log). */
    public List<DownloadProgress.PodDownload> observe(
            KubernetesClient client, List<Pod> pods, Instant now, DownloadProgress.Step step) {
        // answers of pods not seen for a while (deleted mid-download) are dropped
        byPodUid.values().removeIf(r -> r.at().plus(FORGET_AFTER).isBefore(now));
        return pods.stream()
                .map(p -> {
                    DownloadProgress.PodDownload d = DownloadProgress.observe(p, step);
                    if (d.state() != DownloadProgress.State.RUNNING) {
                        byPodUid.remove(key(p, step));
                        return d;
                    }
                    return d.withProgress(progress(client, p, now, step));
                })
                .toList();
    }

    /** One answer per pod and step. */
    private static String key(Pod pod, DownloadProgress.Step step) {
        return pod.getMetadata().getUid() + "/" + step.container();
    }

    private FetchProgress progress(KubernetesClient client, Pod pod, Instant now, DownloadProgress.Step step) {
        String uid = key(pod, step);
        Read last = byPodUid.get(uid);
        if (last != null && last.at().plus(MIN_READ_INTERVAL).isAfter(now)) {
            return last.progress();
        }
        FetchProgress p = last == null ? null : last.progress();
        try {
            String log = client.pods()
                    .inNamespace(pod.getMetadata().getNamespace())
                    .withName(pod.getMetadata().getName())
                    .inContainer(step.container())
                    .tailingLines(TAIL_LINES)
                    .getLog();
            p = FetchProgress.last(log).orElse(p);
        } catch (KubernetesClientException e) {
            // 403: the ClusterRole lacks pods/log; 400/404: the container is not started or the pod went away; 5xx: the
            // kubelet cannot be reached. Progress is optional: the status says "starting" and the rollout goes on.
            LOG.debugf(
                    "cannot read the %s log of pod %s/%s: %s",
                    step.container(),
                    pod.getMetadata().getNamespace(),
                    pod.getMetadata().getName(),
                    e.getMessage());
        }
        byPodUid.put(uid, new Read(now, p));
        return p;
    }
}
