package io.tensorlane.testkit.sim;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.tensorlane.api.v1alpha1.GpuTopology;
import io.tensorlane.topology.TopologyFixtures;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A kwok-like GPU node simulator against a real API server.
 *
 * <ul>
 *   <li>{@link #addNode} registers a Ready {@code Node} with {@code nvidia.com/gpu} capacity and GFD labels from a
 *       topology fixture ({@link TopologyFixtures}), removes the {@code node.kubernetes.io/not-ready} taint admission
 *       puts on new nodes, and publishes the node's {@code GpuTopology} as the probe would (spec.nodeName, status
 *       through the status subresource, {@code source: probe}).
 *   <li>It plays the kubelet for pods the real scheduler binds to its nodes (a pod informer, no polling; see
 *       {@code SimPodPlayer}): after a delay it writes the status a kubelet would — Running/Ready by default, or what
 *       the first matching {@link SimRule} says (OOMKilled, CUDA OOM with a JSON termination message,
 *       CrashLoopBackOff, Hang, Succeed, Fail). Pods that do not restart (Jobs) Succeed by default.
 *   <li>Rules come from {@link #addRule}/{@link #setRules} and from the ConfigMap {@value #RULES_CONFIGMAP} (key
 *       {@value #RULES_KEY}, a YAML list of {@link SimRule}) in the simulator's namespace; in-process rules come first.
 *   <li>Pods being deleted on its nodes are finalized at once (grace period 0): there is no kubelet to do it.
 * </ul>
 *
 * There is no node heartbeat: the local control plane runs without the node-lifecycle controller.
 */
public final class GpuNodeSimulator implements AutoCloseable {
    public static final String RULES_CONFIGMAP = "tensorlane-sim-rules";
    public static final String RULES_KEY = "rules.yaml";
    /** Node label the simulator bumps when a pod on the node finished (see {@code SimPodPlayer.nudgeScheduler}). */
    public static final String FREED_LABEL = "tensorlane.io/sim-freed";

    /**
     * @param namespace      where the rules ConfigMap lives (created if missing)
     * @param namePrefix     prefix of generated node names
     * @param startDelay     default delay from binding to the kubelet's first status
     * @param crashLoopAfter delay from a termination to CrashLoopBackOff (restartPolicy Always)
     */
    public record Options(String namespace, String namePrefix, Duration startDelay, Duration crashLoopAfter) {
        public static Options defaults() {
            return new Options("tensorlane-sim", "", Duration.ofMillis(300), Duration.ofSeconds(1));
        }

        public Options withNamespace(String ns) {
            return new Options(ns, namePrefix, startDelay, crashLoopAfter);
        }

        public Options withNamePrefix(String p) {
            return new Options(namespace, p, startDelay, crashLoopAfter);
        }

        public Options withStartDelay(Duration d) {
            return new Options(namespace, namePrefix, d, crashLoopAfter);
        }

        public Options withCrashLoopAfter(Duration d) {
            return new Options(namespace, namePrefix, startDelay, d);
        }
    }

    private final KubernetesClient client;
    private final Options options;
    private final Map<String, String> nodeIps = new ConcurrentHashMap<>(); // simulated node name -> InternalIP
    private final Map<String, Long> gpuMemory = new ConcurrentHashMap<>(); // simulated node name -> bytes of one GPU
    private final SimRules rules;
    private final SimPodPlayer player;
    private final AtomicInteger nodeCounter = new AtomicInteger();
    private final AtomicInteger nodeIpCounter = new AtomicInteger();
    private SharedIndexInformer<Pod> podInformer;
    private final List<SharedIndexInformer<?>> informers = new ArrayList<>();

    public GpuNodeSimulator(KubernetesClient client, Options options) {
        this.client = client;
        this.options = options;
        this.rules = new SimRules(options.namespace() + "/" + RULES_CONFIGMAP);
        this.player = new SimPodPlayer(client, options, rules, nodeIps, gpuMemory);
    }

    /** Creates the namespace if needed and starts the pod and rules informers; returns when they are synced. */
    public GpuNodeSimulator start() {
        String crd = io.fabric8.kubernetes.client.CustomResource.getCRDName(GpuTopology.class);
        if (client.apiextensions()
                        .v1()
                        .customResourceDefinitions()
                        .withName(crd)
                        .get()
                == null) {
            throw new IllegalStateException("the GpuTopology CRD (" + crd + ") is not installed in "
                    + client.getMasterUrl() + ": kubectl apply -k manifests/crds (or Crds.install(client)) first");
        }
        if (client.namespaces().withName(options.namespace()).get() == null) {
            try {
                client.namespaces()
                        .resource(new NamespaceBuilder()
                                .withNewMetadata()
                                .withName(options.namespace())
                                .endMetadata()
                                .build())
                        .create();
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409) {
                    throw e;
                }
            }
        }
        informers.add(client.configMaps()
                .inNamespace(options.namespace())
                .withName(RULES_CONFIGMAP)
                .inform(SimSupport.handler(rules::onConfigMap, cm -> rules.onConfigMap(null)), 0));
        player.start();
        podInformer = client.pods().inAnyNamespace().inform(SimSupport.handler(player::onPod, player::onPodGone), 0);
        informers.add(podInformer);
        // the client re-lists after a 410 and re-watches after a dropped connection by itself; it stops for good only
        // on an error it cannot handle (an event it cannot read), and then no pod is played or finalized any more
        podInformer.stopped().whenComplete((v, e) -> {
            if (e != null) {
                System.err.println("[gpu-sim] the pod informer stopped: " + e);
            }
        });
        return this;
    }

    // ---- nodes ------------------------------------------------------------------------------------------------

    /** Adds a node built from {@code fixture} with a generated unique name; returns the name once it is schedulable. */
    public String addNode(String fixture) {
        return addNode(options.namePrefix() + fixture + "-" + nodeCounter.getAndIncrement(), fixture, Map.of());
    }

    /** Adds (or re-asserts) node {@code name} from {@code fixture} with extra labels; returns when it is schedulable. */
    public String addNode(String name, String fixture, Map<String, String> extraLabels) {
        var topo = TopologyFixtures.load(fixture);
        if (topo.summary != null && topo.summary.gpuMemoryBytes != null) {
            gpuMemory.put(name, topo.summary.gpuMemoryBytes);
        }
        String ip = nodeIps.computeIfAbsent(name, n -> {
            int i = nodeIpCounter.getAndIncrement();
            return "10.99." + (i / 250 % 250) + "." + (i % 250 + 1);
        });
        Instant now = Instant.now();
        SimKubelet endpoint = player.endpoint();
        Node desired = SimNodes.node(name, fixture, topo, extraLabels, ip, now, endpoint == null ? 0 : endpoint.port());
        Node node = client.nodes().withName(name).get();
        if (node == null) {
            node = client.nodes().resource(desired).create();
        } else {
            node = SimSupport.retryOnConflict(() -> client.nodes()
                    .withName(name)
                    .edit(n -> {
                        n.getMetadata().getLabels().putAll(desired.getMetadata().getLabels());
                        return n;
                    }));
            patchNodeStatus(desired);
        }
        // admission (TaintNodesByCondition) taints every new node not-ready; there is no node controller to lift it.
        // Controllers (e.g. the TTL annotator) touch new nodes too, hence the retry on 409.
        if (hasLifecycleTaint(node)) {
            node = SimSupport.retryOnConflict(() -> client.nodes()
                    .withName(name)
                    .edit(n -> {
                        n.getSpec().getTaints().removeIf(t -> t.getKey().startsWith("node.kubernetes.io/"));
                        return n;
                    }));
        }
        GpuTopology topology = SimNodes.topology(node);
        GpuTopology existing =
                client.resources(GpuTopology.class).withName(name).get();
        if (existing == null) {
            existing = client.resources(GpuTopology.class).resource(topology).create();
        }
        existing.getMetadata().setResourceVersion(null);
        existing.setStatus(SimNodes.probeStatus(topo, now));
        client.resources(GpuTopology.class).resource(existing).patchStatus();
        if (podInformer != null) { // pods bound before this simulator (re)started
            podInformer.getStore().list().stream()
                    .filter(p -> name.equals(p.getSpec().getNodeName()))
                    .forEach(player::onPod);
        }
        return name;
    }

    private static boolean hasLifecycleTaint(Node node) {
        return node.getSpec().getTaints() != null
                && node.getSpec().getTaints().stream().anyMatch(t -> t.getKey().startsWith("node.kubernetes.io/"));
    }

    private void patchNodeStatus(Node desired) {
        Node patch = new io.fabric8.kubernetes.api.model.NodeBuilder()
                .withNewMetadata()
                .withName(desired.getMetadata().getName())
                .endMetadata()
                .withStatus(desired.getStatus())
                .build();
        client.nodes().resource(patch).patchStatus();
    }

    /** Removes a simulated node, its GpuTopology and (force) the pods bound to it. */
    public void removeNode(String name) {
        nodeIps.remove(name);
        client.nodes().withName(name).withGracePeriod(0).delete();
        client.resources(GpuTopology.class).withName(name).delete();
        for (Pod p : client.pods()
                .inAnyNamespace()
                .withField("spec.nodeName", name)
                .list()
                .getItems()) {
            client.pods()
                    .inNamespace(p.getMetadata().getNamespace())
                    .withName(p.getMetadata().getName())
                    .withGracePeriod(0)
                    .delete();
        }
    }

    /** Names of the nodes this simulator plays. */
    public Set<String> nodes() {
        return Set.copyOf(nodeIps.keySet());
    }

    // ---- rules (see SimRules) ---------------------------------------------------------------------------------

    /** Appends an in-process rule (checked before the ConfigMap's; first match wins). */
    public void addRule(SimRule rule) {
        rules.add(rule);
    }

    public void setRules(List<SimRule> newRules) {
        rules.set(newRules);
    }

    public void clearRules() {
        rules.clear();
    }

    /** In-process rules followed by the ConfigMap's. */
    public List<SimRule> rules() {
        return rules.all();
    }

    /** Parses the ConfigMap's YAML list of rules; {@link IllegalArgumentException} with a clear message on bad input. */
    public static List<SimRule> parseRules(String yaml) {
        return SimRules.parse(yaml);
    }

    /** What the simulated kubelet last did to a pod, and when it wrote that status (for latency benchmarks). */
    public record Applied(SimAction.Type type, Instant at) {}

    /** What was last played on a pod (by UID), or null; forgotten when the pod is deleted. */
    public Applied applied(String podUid) {
        return player.applied(podUid);
    }

    // ---- the kubelet (see SimPodPlayer) -----------------------------------------------------------------------

    /**
     * Pods with the download step (init container {@value SimDownloads#INIT_CONTAINER}) bound from now on run it for
     * {@code duration} first, logging the runtime's progress lines for {@code bytes}; null turns it off (the default:
     * such pods start at once).
     */
    public void simulateDownloads(Duration duration, long bytes) {
        player.downloads(duration == null ? null : new SimDownloads(duration, bytes));
    }

    /** The simulated kubelet endpoint (container logs), once started. */
    public SimKubelet kubeletEndpoint() {
        return player.endpoint();
    }

    /**
     * Plays {@code action} on a pod of a simulated node now, cancelling what was scheduled for it; e.g. finish a
     * preflight pod that a {@link SimAction#hang()} rule kept running with {@code SimAction.succeed(resultJson)}.
     */
    public void act(Pod pod, SimAction action) {
        player.act(pod, action);
    }

    /** Stops the informers and the simulated kubelet; the nodes stay (remove them with {@link #removeNode}). */
    @Override
    public void close() {
        informers.forEach(SharedIndexInformer::close);
        player.close();
    }
}
