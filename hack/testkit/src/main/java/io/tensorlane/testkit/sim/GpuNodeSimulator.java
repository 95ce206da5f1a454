package io.tensorlane.testkit.sim;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A kwok-like GPU node simulator against a real API server.
 *
 * <ul>
 *   <li>{@link #addNode} registers a Ready {@code Node} with {@code nvidia.com/gpu} capacity and GFD labels from a
 *       topology fixture ({@link TopologyFixtures}), removes the {@code node.kubernetes.io/not-ready} taint admission
 *       puts on new nodes, and publishes the node's {@code GpuTopology} as the probe would (spec.nodeName, status
 *       through the status subresource, {@code source: probe}).
 *   <li>It plays the kubelet for pods the real scheduler binds to its nodes (a pod informer, no polling): after a
 *       delay it writes the status a kubelet would — Running/Ready by default, or what the first matching
 *       {@link SimRule} says (OOMKilled, CUDA OOM with a JSON termination message, CrashLoopBackOff, Hang, Succeed,
 *       Fail). Pods that do not restart (Jobs) Succeed by default.
 *   <li>Rules come from {@link #addRule}/{@link #setRules} and from the ConfigMap {@value #RULES_CONFIGMAP} (key
 *       {@value #RULES_KEY}, a YAML list of {@link SimRule}) in the simulator's namespace; in-process rules come first.
 *   <li>Pods being deleted on its nodes are finalized at once (grace period 0): there is no kubelet to do it.
 * </ul>
 *
 * There is no node heartbeat: the local control plane runs without the node-lifecycle controller.
 */
public final class GpuNodeSimulator implements AutoCloseable {
  private static final int FINALIZE_ATTEMPTS = 120; // 60 s at 500 ms

  public static final String RULES_CONFIGMAP = "tensorlane-sim-rules";
  public static final String RULES_KEY = "rules.yaml";
  /** Node label the simulator bumps when a pod on the node finished (see {@code nudgeScheduler}). */
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
  private final Set<String> seen = ConcurrentHashMap.newKeySet(); // pod UIDs already planned
  private final Set<String> finalizing = ConcurrentHashMap.newKeySet();
  private final Map<String, List<ScheduledFuture<?>>> pending = new ConcurrentHashMap<>();
  private final AtomicInteger nodeCounter = new AtomicInteger();
  private final AtomicInteger nodeIpCounter = new AtomicInteger();
  private final AtomicInteger podIpCounter = new AtomicInteger();
  private SharedIndexInformer<Pod> podInformer;
  private final ScheduledExecutorService kubelet;
  private final List<SharedIndexInformer<?>> informers = new ArrayList<>();
  private final Map<String, Applied> applied = new ConcurrentHashMap<>(); // pod UID -> what was played, when
  private final Set<String> nudging = ConcurrentHashMap.newKeySet();
  private SimKubelet kubeletEndpoint;
  private volatile SimDownloads downloads;
  private final AtomicInteger nudges = new AtomicInteger();

  public GpuNodeSimulator(KubernetesClient client, Options options) {
    this.client = client;
    this.options = options;
    this.rules = new SimRules(options.namespace() + "/" + RULES_CONFIGMAP);
    this.kubelet = Executors.newScheduledThreadPool(2, r -> {
      Thread t = new Thread(r, "gpu-sim-kubelet");
      t.setDaemon(true);
      return t;
    });
  }

  /** Creates the namespace if needed and starts the pod and rules informers; returns when they are synced. */
  public GpuNodeSimulator start() {
    String crd = io.fabric8.kubernetes.client.CustomResource.getCRDName(GpuTopology.class);
    if (client.apiextensions().v1().customResourceDefinitions().withName(crd).get() == null) {
      throw new IllegalStateException("the GpuTopology CRD (" + crd + ") is not installed in " + client.getMasterUrl()
          + ": kubectl apply -k manifests/crds (or Crds.install(client)) first");
    }
    if (client.namespaces().withName(options.namespace()).get() == null) {
      try {
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(options.namespace())
            .endMetadata().build()).create();
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409) {
          throw e;
        }
      }
    }
    informers.add(client.configMaps().inNamespace(options.namespace()).withName(RULES_CONFIGMAP)
        .inform(SimSupport.handler(rules::onConfigMap, cm -> rules.onConfigMap(null)), 0));
    kubeletEndpoint = new SimKubelet();
    podInformer = client.pods().inAnyNamespace().inform(SimSupport.handler(this::onPod, this::onPodGone), 0);
    informers.add(podInformer);
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
    Node desired = SimNodes.node(name, fixture, topo, extraLabels, ip, now,
        kubeletEndpoint == null ? 0 : kubeletEndpoint.port());
    Node node = client.nodes().withName(name).get();
    if (node == null) {
      node = client.nodes().resource(desired).create();
    } else {
      node = SimSupport.retryOnConflict(() -> client.nodes().withName(name).edit(n -> {
        n.getMetadata().getLabels().putAll(desired.getMetadata().getLabels());
        return n;
      }));
      patchNodeStatus(desired);
    }
    // admission (TaintNodesByCondition) taints every new node not-ready; there is no node controller to lift it.
    // Controllers (e.g. the TTL annotator) touch new nodes too, hence the retry on 409.
    if (hasLifecycleTaint(node)) {
      node = SimSupport.retryOnConflict(() -> client.nodes().withName(name).edit(n -> {
        n.getSpec().getTaints().removeIf(t -> t.getKey().startsWith("node.kubernetes.io/"));
        return n;
      }));
    }
    GpuTopology topology = SimNodes.topology(node);
    GpuTopology existing = client.resources(GpuTopology.class).withName(name).get();
    if (existing == null) {
      existing = client.resources(GpuTopology.class).resource(topology).create();
    }
    existing.getMetadata().setResourceVersion(null);
    existing.setStatus(SimNodes.probeStatus(topo, now));
    client.resources(GpuTopology.class).resource(existing).patchStatus();
    if (podInformer != null) { // pods bound before this simulator (re)started
      podInformer.getStore().list().stream().filter(p -> name.equals(p.getSpec().getNodeName())).forEach(this::onPod);
    }
    return name;
  }

  private static boolean hasLifecycleTaint(Node node) {
    return node.getSpec().getTaints() != null
        && node.getSpec().getTaints().stream().anyMatch(t -> t.getKey().startsWith("node.kubernetes.io/"));
  }

  private void patchNodeStatus(Node desired) {
    Node patch = new io.fabric8.kubernetes.api.model.NodeBuilder().withNewMetadata()
        .withName(desired.getMetadata().getName()).endMetadata().withStatus(desired.getStatus()).build();
    client.nodes().resource(patch).patchStatus();
  }

  /** Removes a simulated node, its GpuTopology and (force) the pods bound to it. */
  public void removeNode(String name) {
    nodeIps.remove(name);
    client.nodes().withName(name).withGracePeriod(0).delete();
    client.resources(GpuTopology.class).withName(name).delete();
    for (Pod p : client.pods().inAnyNamespace().withField("spec.nodeName", name).list().getItems()) {
      client.pods().inNamespace(p.getMetadata().getNamespace()).withName(p.getMetadata().getName())
          .withGracePeriod(0).delete();
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
    return applied.get(podUid);
  }

  // ---- the kubelet ------------------------------------------------------------------------------------------

  private void onPod(Pod pod) {
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
    PodStatus st = pod.getStatus();
    if (st != null && st.getContainerStatuses() != null && !st.getContainerStatuses().isEmpty()) {
      return; // already played (this simulator restarted): leave it as it is
    }
    var oom = new SimOwners.LazyOom(client, pod, gpuMemory.get(nodeName));
    SimRule rule = rules.firstMatch(pod, oom);
    SimAction action = rule != null ? SimOwners.withNumbers(rule, oom)
        : PodStatuses.restarts(pod) ? SimAction.run() : SimAction.succeed();
    long delay = rule != null && rule.delayMillis() != null ? rule.delayMillis() : options.startDelay().toMillis();
    var at = new PodStatuses.Placement(nodeIps.get(nodeName), nextPodIp(), Instant.now().plusMillis(delay));
    if (rule != null) {
      log("pod " + ref(pod) + " on " + nodeName + ": rule '" + rule.name() + "' -> " + action.type() + " in " + delay + " ms");
    }
    SimDownloads dl = downloads;
    String init = dl == null ? null : SimDownloads.initContainer(pod);
    if (init == null) {
      schedule(uid, delay, () -> play(pod, at, action));
      return;
    }
    // the download step first: Pending with the init container running and progress lines in its log, then the action
    schedule(uid, delay, () -> write(pod, PodStatuses.initializing(pod, at, init), SimAction.Type.Hang));
    for (SimDownloads.Line line : dl.lines(pod)) {
      schedule(uid, delay + line.atMillis(), () -> kubeletEndpoint.append(pod.getMetadata().getNamespace(),
          pod.getMetadata().getName(), init, line.text()));
    }
    long end = delay + dl.duration().toMillis();
    schedule(uid, end, () -> play(pod, new PodStatuses.Placement(at.hostIp(), at.podIp(), Instant.now()), action));
  }

  /**
   * Pods with the download step (init container {@value SimDownloads#INIT_CONTAINER}) bound from now on run it for
   * {@code duration} first, logging the runtime's progress lines for {@code bytes}; null turns it off (the default:
   * such pods start at once).
   */
  public void simulateDownloads(Duration duration, long bytes) {
    downloads = duration == null ? null : new SimDownloads(duration, bytes);
  }

  /** The simulated kubelet endpoint (container logs), once started. */
  public SimKubelet kubeletEndpoint() {
    return kubeletEndpoint;
  }

  /**
   * Plays {@code action} on a pod of a simulated node now, cancelling what was scheduled for it; e.g. finish a
   * preflight pod that a {@link SimAction#hang()} rule kept running with {@code SimAction.succeed(resultJson)}.
   */
  public void act(Pod pod, SimAction action) {
    cancel(pod.getMetadata().getUid());
    PodStatus st = pod.getStatus();
    String hostIp = st != null && st.getHostIP() != null ? st.getHostIP() : nodeIps.get(pod.getSpec().getNodeName());
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
      case CrashLoopBackOff -> write(pod, PodStatuses.crashLoop(pod, at, action,
          action.restarts() == null ? 3 : action.restarts(), now), action.type());
      case OOMKilled, CudaOom, Fail -> {
        if (action.type() == SimAction.Type.Fail && !PodStatuses.restarts(pod)) {
          write(pod, PodStatuses.completed(pod, at, 1, action.message(), now), action.type());
          return;
        }
        write(pod, PodStatuses.terminated(pod, at, action, now), action.type());
        if (PodStatuses.restarts(pod)) {
          schedule(pod.getMetadata().getUid(), options.crashLoopAfter().toMillis(),
              () -> write(pod, PodStatuses.crashLoop(pod, at, action, 1, now), SimAction.Type.CrashLoopBackOff));
        }
      }
    }
  }

  private void write(Pod pod, PodStatus status, SimAction.Type type) {
    Pod patch = new PodBuilder().withNewMetadata()
        .withName(pod.getMetadata().getName())
        .withNamespace(pod.getMetadata().getNamespace())
        .withUid(pod.getMetadata().getUid()) // never write onto a newer pod of the same name
        .endMetadata().withStatus(status).build();
    try {
      client.pods().inNamespace(pod.getMetadata().getNamespace()).resource(patch).patchStatus();
      applied.put(pod.getMetadata().getUid(), new Applied(type, Instant.now()));
      if ("Succeeded".equals(status.getPhase()) || "Failed".equals(status.getPhase())) {
        nudgeScheduler(pod.getSpec().getNodeName());
      }
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404 && e.getCode() != 409) {
        log("cannot write status of pod " + ref(pod) + ": " + e.getMessage());
      }
    }
  }

  /**
   * A finished pod frees its GPUs, but the 1.20 scheduler re-examines unschedulable pods only on pod deletion and
   * node changes (else once a minute); bumping a label on the node ({@value #FREED_LABEL}) makes it look at once, as
   * newer schedulers do by themselves. At most one bump per node in flight.
   */
  private void nudgeScheduler(String node) {
    if (node == null || !nudging.add(node)) {
      return;
    }
    kubelet.schedule(() -> {
      nudging.remove(node);
      try {
        SimSupport.retryOnConflict(() -> client.nodes().withName(node).edit(n -> {
          n.getMetadata().getLabels().put(FREED_LABEL, Integer.toString(nudges.incrementAndGet()));
          return n;
        }));
      } catch (KubernetesClientException e) {
        if (e.getCode() != 404) {
          log("cannot nudge the scheduler on node " + node + ": " + e.getMessage());
        }
      }
    }, 100, TimeUnit.MILLISECONDS);
  }

  private void forceDelete(Pod pod) {
    forceDelete(pod, 1);
  }

  /** As a kubelet does, keeps trying while the API server is unreachable (a restart): a pod left Terminating counts. */
  private void forceDelete(Pod pod, int attempt) {
    try {
      client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
          .withGracePeriod(0).delete();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return;
      }
      if (attempt < FINALIZE_ATTEMPTS) {
        kubelet.schedule(() -> forceDelete(pod, attempt + 1), 500, TimeUnit.MILLISECONDS);
      } else {
        log("cannot finalize pod " + ref(pod) + " after " + attempt + " attempts: " + e.getMessage());
      }
    }
  }

  private void onPodGone(Pod pod) {
    String uid = pod.getMetadata().getUid();
    cancel(uid);
    seen.remove(uid);
    finalizing.remove(uid);
    applied.remove(uid);
    if (kubeletEndpoint != null) {
      kubeletEndpoint.forget(pod.getMetadata().getNamespace(), pod.getMetadata().getName());
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

  /** Stops the informers and the simulated kubelet; the nodes stay (remove them with {@link #removeNode}). */
  @Override
  public void close() {
    informers.forEach(SharedIndexInformer::close);
    kubelet.shutdownNow();
    if (kubeletEndpoint != null) {
      kubeletEndpoint.close();
    }
  }
}
