package io.tensorlane.testkit.sim;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The kubelet part of {@link GpuNodeSimulator}: plays the pods bound to its nodes (the status each {@link SimRule} or
 * the default asks for, on schedule, with the download step and container logs), finalizes pods being deleted, and
 * nudges the scheduler when a pod finished.
 */
final class SimPodPlayer implements AutoCloseable {
    private static final int FINALIZE_ATTEMPTS = 120; // 60 s at 500 ms
    /** Status writes are retried as long: a kubelet keeps syncing a pod's status until the API server takes it. */
    private static final int WRITE_ATTEMPTS = 120;

    private static final long RETRY_MILLIS = 500;

    private final KubernetesClient client;
    private final GpuNodeSimulator.Options options;
    private final SimRules rules;
    private final Map<String, String> nodeIps; // simulated node name -> InternalIP (the simulator's)
    private final Map<String, Long> gpuMemory; // simulated node name -> bytes of one GPU (the simulator's)
    private final Set<String> seen = ConcurrentHashMap.newKeySet(); // pod UIDs already planned
    private final Set<String> finalizing = ConcurrentHashMap.newKeySet();
    private final Map<String, List<ScheduledFuture<?>>> pending = new ConcurrentHashMap<>();
    private final AtomicInteger podIpCounter = new AtomicInteger();
    private final ScheduledExecutorService kubelet;
    // pod UID -> what was played, when
    private final Map<String, GpuNodeSimulator.Applied> applied = new ConcurrentHashMap<>();
    private final Set<String> nudging = ConcurrentHashMap.newKeySet();
    // pod UID -> number of the latest status written (a retry of an older one is dropped, never overwrites it)
    private final Map<String, Long> writes = new ConcurrentHashMap<>();
    private final AtomicLong writeCounter = new AtomicLong();
    private SimKubelet kubeletEndpoint;
    private volatile SimDownloads downloads;
    private final AtomicInteger nudges = new AtomicInteger();

    SimPodPlayer(
            KubernetesClient client,
            GpuNodeSimulator.Options options,
            SimRules rules,
            Map<String, String> nodeIps,
            Map<String, Long> gpuMemory) {
        this.client = client;
        this.options = options;
        this.rules = rules;
        this.nodeIps = nodeIps;
        this.gpuMemory = gpuMemory;
        this.kubelet = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "gpu-sim-kubelet");
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts the kubelet endpoint (container logs). */
    void start() {
        kubeletEndpoint = new SimKubelet();
    }

    /** The kubelet endpoint, once started, else null. */
    SimKubelet endpoint() {
        return kubeletEndpoint;
    }

    /** The download step of pods bound from now on, or null for none. */
    void downloads(SimDownloads d) {
        downloads = d;
    }

    /** What was last played on a pod (by UID), or null. */
    GpuNodeSimulator.Applied applied(String podUid) {
        return applied.get(podUid);
    }

    /** The pod informer's add/update: plans what to play on a pod bound to a simulated node, once per pod. */
    void onPod(Pod pod) {
        onPod(pod, 1);
    }

    private void onPod(Pod pod, int attempt) {
        String nodeName = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
        if (nodeName == null || !nodeIps.containsKey(nodeName)) {
            return;
        }
        String uid = pod.getMetadata().getUid();
        if (pod.getMetadata().getDeletionTimestamp() != null) {
            if (finalizing.add(uid)) {
                cancel(uid);
                kubelet.execute(() -> forceDelete(pod));
            }
            return;
        }
        if (!seen.add(uid)) {
            return;
        }
        try {
            plan(pod, nodeName, uid);
        } catch (RuntimeException e) {
            // e.g. an outOfMemory rule's owner lookup while the API server restarts: plan it again (later updates of
            // the pod would not, it is marked seen)
            seen.remove(uid);
            if (attempt < WRITE_ATTEMPTS) {
                log("cannot plan pod " + ref(pod) + " (will retry): " + e);
                schedule(uid, RETRY_MILLIS, () -> onPod(pod, attempt + 1));
            } else {
                log("cannot plan pod " + ref(pod) + " after " + attempt + " attempts: " + e);
            }
        }
    }

    private void plan(Pod pod, String nodeName, String uid) {
        PodStatus st = pod.getStatus();
        if (st != null
                && st.getContainerStatuses() != null
                && !st.getContainerStatuses().isEmpty()) {
            return; // already played (this simulator restarted): leave it as it is
        }
        var oom = new SimOwners.LazyOom(client, pod, gpuMemory.get(nodeName));
        SimRule rule = rules.firstMatch(pod, oom);
        SimAction action = rule != null
                ? SimOwners.withNumbers(rule, oom)
                : PodStatuses.restarts(pod) ? SimAction.run() : SimAction.succeed();
        long delay = rule != null && rule.delayMillis() != null
                ? rule.delayMillis()
                : options.startDelay().toMillis();
        var at = new PodStatuses.Placement(
                nodeIps.get(nodeName), nextPodIp(), Instant.now().plusMillis(delay));
        if (rule != null) {
            log("pod " + ref(pod) + " on " + nodeName + ": rule '" + rule.name() + "' -> " + action.type() + " in "
                    + delay + " ms");
        }
        SimDownloads dl = downloads;
        List<String> inits = dl == null ? List.of() : SimDownloads.initContainers(pod);
        if (inits.isEmpty()) {
            schedule(uid, delay, () -> play(pod, at, action));
            return;
        }
        // the download steps first, one after the other (the model's, then a draft model's): Pending with the init
        // container running and progress lines in its log, then the action
        long start = delay;
        for (String init : inits) {
            schedule(uid, start, () -> write(pod, PodStatuses.initializing(pod, at, init), SimAction.Type.Hang));
            boolean draft = SimDownloads.DRAFT_INIT_CONTAINER.equals(init);
            long bytes = dl.bytesFor(dl.bytes() > 0 ? null : SimOwners.weightBytes(client, pod, draft));
            for (SimDownloads.Line line : dl.lines(pod, init, bytes)) {
                schedule(
                        uid,
                        start + line.atMillis(),
                        () -> kubeletEndpoint.append(
                                pod.getMetadata().getNamespace(),
                                pod.getMetadata().getName(),
                                init,
                                line.text()));
            }
            start += dl.duration().toMillis();
        }
        schedule(
                uid, start, () -> play(pod, new PodStatuses.Placement(at.hostIp(), at.podIp(), Instant.now()), action));
    }

    /** {@link GpuNodeSimulator#act}: plays {@code action} now, cancelling what was scheduled for the pod. */
    void act(Pod pod, SimAction action) {
        cancel(pod.getMetadata().getUid());
        PodStatus st = pod.getStatus();
        String hostIp = st != null && st.getHostIP() != null
                ? st.getHostIP()
                : nodeIps.get(pod.getSpec().getNodeName());
        String podIp = st != null && st.getPodIP() != null ? st.getPodIP() : nextPodIp();
        Instant started = st != null && st.getStartTime() != null ? Instant.parse(st.getStartTime()) : Instant.now();
        play(pod, new PodStatuses.Placement(hostIp, podIp, started), action);
    }

    private void play(Pod pod, PodStatuses.Placement at, SimAction action) {
        Instant now = Instant.now();
        switch (action.type()) {
            case Run -> write(pod, PodStatuses.running(pod, at, true), action.type());
            case Hang -> write(pod, PodStatuses.running(pod, at, false), action.type());
            case Succeed -> write(pod, PodStatuses.completed(pod, at, 0, action.message(), now), action.type());
            case CrashLoopBackOff ->
                write(
                        pod,
                        PodStatuses.crashLoop(pod, at, action, action.restarts() == null ? 3 : action.restarts(), now),
                        action.type());
            case OOMKilled, CudaOom, Fail -> {
                if (action.type() == SimAction.Type.Fail && !PodStatuses.restarts(pod)) {
                    write(pod, PodStatuses.completed(pod, at, 1, action.message(), now), action.type());
                    return;
                }
                write(pod, PodStatuses.terminated(pod, at, action, now), action.type());
                if (PodStatuses.restarts(pod)) {
                    schedule(
                            pod.getMetadata().getUid(),
                            options.crashLoopAfter().toMillis(),
                            () -> write(
                                    pod,
                                    PodStatuses.crashLoop(pod, at, action, 1, now),
                                    SimAction.Type.CrashLoopBackOff));
                }
            }
        }
    }

    private void write(Pod pod, PodStatus status, SimAction.Type type) {
        long n = writeCounter.incrementAndGet();
        writes.put(pod.getMetadata().getUid(), n);
        write(pod, status, type, n, 1);
    }

    /**
     * Writes the status; when the API server cannot take it (restarting: refused or closed connections, 5xx, timeouts,
     * beyond the client's own retries) tries again every {@value #RETRY_MILLIS} ms, as a kubelet's status manager does,
     * until a newer status of the pod is written, the pod is gone (404, or another pod of the name: 409) or the
     * attempts run out.
     */
    private void write(Pod pod, PodStatus status, SimAction.Type type, long n, int attempt) {
        String uid = pod.getMetadata().getUid();
        if (!Long.valueOf(n).equals(writes.get(uid))) {
            return; // superseded by a newer status, or the pod is gone
        }
        Pod patch = new PodBuilder()
                .withNewMetadata()
                .withName(pod.getMetadata().getName())
                .withNamespace(pod.getMetadata().getNamespace())
                .withUid(uid) // never write onto a newer pod of the same name
                .endMetadata()
                .withStatus(status)
                .build();
        try {
            client.pods()
                    .inNamespace(pod.getMetadata().getNamespace())
                    .resource(patch)
                    .patchStatus();
            applied.put(uid, new GpuNodeSimulator.Applied(type, Instant.now()));
            if ("Succeeded".equals(status.getPhase()) || "Failed".equals(status.getPhase())) {
                nudgeScheduler(pod.getSpec().getNodeName());
            }
        } catch (RuntimeException e) { // KubernetesClientException; anything else must not end the retries either
            if (code(e) == 404 || code(e) == 409) {
                return;
            }
            if (attempt < WRITE_ATTEMPTS) {
                if (attempt == 1) {
                    log("cannot write status of pod " + ref(pod) + " (will retry): " + e.getMessage());
                }
                schedule(uid, RETRY_MILLIS, () -> write(pod, status, type, n, attempt + 1));
            } else {
                log("cannot write status of pod " + ref(pod) + " after " + attempt + " attempts: " + e.getMessage());
            }
        }
    }

    /**
     * A finished pod frees its GPUs, but the 1.20 scheduler re-examines unschedulable pods only on pod deletion and
     * node changes (else once a minute); bumping a label on the node ({@value GpuNodeSimulator#FREED_LABEL}) makes it
     * look at once, as newer schedulers do by themselves. At most one bump per node in flight.
     */
    private void nudgeScheduler(String node) {
        if (node == null || !nudging.add(node)) {
            return;
        }
        kubelet.schedule(
                () -> {
                    nudging.remove(node);
                    try {
                        SimSupport.retryOnConflict(() -> client.nodes()
                                .withName(node)
                                .edit(n -> {
                                    n.getMetadata()
                                            .getLabels()
                                            .put(
                                                    GpuNodeSimulator.FREED_LABEL,
                                                    Integer.toString(nudges.incrementAndGet()));
                                    return n;
                                }));
                    } catch (KubernetesClientException e) {
                        if (e.getCode() != 404) {
                            log("cannot nudge the scheduler on node " + node + ": " + e.getMessage());
                        }
                    }
                },
                100,
                TimeUnit.MILLISECONDS);
    }

    private void forceDelete(Pod pod) {
        forceDelete(pod, 1);
    }

    /** As a kubelet does, keeps trying while the API server is unreachable (a restart): a pod left Terminating counts. */
    private void forceDelete(Pod pod, int attempt) {
        try {
            client.pods()
                    .inNamespace(pod.getMetadata().getNamespace())
                    .withName(pod.getMetadata().getName())
                    .withGracePeriod(0)
                    .delete();
        } catch (RuntimeException e) { // run by the executor: an exception other than the client's would go unseen
            if (code(e) == 404) {
                return;
            }
            if (attempt < FINALIZE_ATTEMPTS) {
                kubelet.schedule(() -> forceDelete(pod, attempt + 1), RETRY_MILLIS, TimeUnit.MILLISECONDS);
            } else {
                log("cannot finalize pod " + ref(pod) + " after " + attempt + " attempts: " + e.getMessage());
            }
        }
    }

    /** The pod informer's delete: forgets the pod (scheduled statuses, what was played, its logs). */
    void onPodGone(Pod pod) {
        String uid = pod.getMetadata().getUid();
        cancel(uid);
        seen.remove(uid);
        finalizing.remove(uid);
        applied.remove(uid);
        writes.remove(uid);
        if (kubeletEndpoint != null) {
            kubeletEndpoint.forget(
                    pod.getMetadata().getNamespace(), pod.getMetadata().getName());
        }
    }

    private void schedule(String uid, long delayMillis, Runnable task) {
        Runnable safe = () -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                log("simulated kubelet task failed: " + e);
            }
        };
        pending.computeIfAbsent(uid, k -> new CopyOnWriteArrayList<>())
                .add(kubelet.schedule(safe, Math.max(0, delayMillis), TimeUnit.MILLISECONDS));
    }

    private void cancel(String uid) {
        List<ScheduledFuture<?>> tasks = pending.remove(uid);
        if (tasks != null) {
            tasks.forEach(f -> f.cancel(false));
        }
    }

    private static int code(RuntimeException e) {
        return e instanceof KubernetesClientException k ? k.getCode() : 0;
    }

    private String nextPodIp() {
        int n = podIpCounter.getAndIncrement();
        return "10.244." + (n / 250 % 250) + "." + (n % 250 + 1);
    }

    private static String ref(Pod pod) {
        return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    }

    private static void log(String msg) {
        System.err.println("[gpu-sim] " + msg);
    }

    /** Stops the simulated kubelet and its endpoint. */
    @Override
    public void close() {
        kubelet.shutdownNow();
        if (kubeletEndpoint != null) {
            kubeletEndpoint.close();
        }
    }
}
