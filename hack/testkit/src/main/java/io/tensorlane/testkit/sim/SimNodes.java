package io.tensorlane.testkit.sim;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.tensorlane.api.v1alpha1.GpuInfo;
import io.tensorlane.api.v1alpha1.GpuTopology;
import io.tensorlane.api.v1alpha1.GpuTopologySpec;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.topology.GfdHeuristic;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The Node and GpuTopology objects of a simulated GPU node, built from a topology fixture. Pure. */
public final class SimNodes {
    /** Every simulated node carries this label (value "true"). */
    public static final String SIMULATED = "tensorlane.io/simulated";
    /** The fixture a simulated node was built from. */
    public static final String FIXTURE = "tensorlane.io/sim-fixture";

    public static final String GPU_RESOURCE = "nvidia.com/gpu";
    public static final String PROBE_VERSION = "simulator";
    /** Where the simulated kubelet endpoint listens (loopback only). */
    public static final String KUBELET_ADDRESS = "127.0.0.1";

    private SimNodes() {}

    /** GPU Feature Discovery labels for a topology: present, product ('-' for spaces), count, memory in MiB. */
    public static Map<String, String> gfdLabels(GpuTopologyStatus topo) {
        Map<String, String> l = new LinkedHashMap<>();
        l.put("nvidia.com/gpu.present", "true");
        GpuInfo first = topo.gpus.get(0);
        String product =
                first.product == null ? "unknown" : first.product.trim().replaceAll("[^A-Za-z0-9_.-]+", "-");
        l.put(GfdHeuristic.PRODUCT, product.length() > 63 ? product.substring(0, 63) : product);
        l.put(GfdHeuristic.COUNT, Integer.toString(topo.gpus.size()));
        long minBytes = topo.gpus.stream()
                .mapToLong(g -> g.memoryBytes == null ? 0 : g.memoryBytes)
                .min()
                .orElse(0);
        l.put(GfdHeuristic.MEMORY, Long.toString(minBytes / (1024 * 1024)));
        return l;
    }

    /** A Ready Node with {@code nvidia.com/gpu} capacity and GFD labels; {@code extraLabels} are added last. */
    public static Node node(
            String name,
            String fixture,
            GpuTopologyStatus topo,
            Map<String, String> extraLabels,
            String internalIp,
            Instant now) {
        return node(name, fixture, topo, extraLabels, internalIp, now, 0);
    }

    /**
     * As above; with {@code kubeletPort} > 0 the node names the simulator's {@link SimKubelet} as its kubelet: address
     * {@code InternalDNS 127.0.0.1} (the local API server prefers it) and that port, so pods/log reaches it.
     */
    public static Node node(
            String name,
            String fixture,
            GpuTopologyStatus topo,
            Map<String, String> extraLabels,
            String internalIp,
            Instant now,
            int kubeletPort) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("kubernetes.io/hostname", name);
        labels.put("kubernetes.io/os", "linux");
        labels.put("kubernetes.io/arch", "amd64");
        labels.put(SIMULATED, "true");
        labels.put(FIXTURE, fixture);
        labels.putAll(gfdLabels(topo));
        if (extraLabels != null) {
            labels.putAll(extraLabels);
        }
        Map<String, Quantity> capacity = Map.of(
                "cpu",
                new Quantity("128"),
                "memory",
                new Quantity("1Ti"),
                "pods",
                new Quantity("110"),
                "ephemeral-storage",
                new Quantity("2Ti"),
                GPU_RESOURCE,
                new Quantity(Integer.toString(topo.gpus.size())));
        return new NodeBuilder()
                .withNewMetadata()
                .withName(name)
                .withLabels(labels)
                .endMetadata()
                .withNewSpec()
                .endSpec()
                .withNewStatus()
                .withCapacity(capacity)
                .withAllocatable(capacity)
                .withConditions(conditions(now))
                .addNewAddress()
                .withType("InternalIP")
                .withAddress(internalIp)
                .endAddress()
                .addNewAddress()
                .withType("Hostname")
                .withAddress(name)
                .endAddress()
                .addAllToAddresses(
                        kubeletPort > 0
                                ? List.of(
                                        new io.fabric8.kubernetes.api.model.NodeAddress(KUBELET_ADDRESS, "InternalDNS"))
                                : List.of())
                .withNewDaemonEndpoints()
                .withNewKubeletEndpoint()
                .withPort(kubeletPort > 0 ? kubeletPort : 10250)
                .endKubeletEndpoint()
                .endDaemonEndpoints()
                .withNewNodeInfo()
                .withArchitecture("amd64")
                .withOperatingSystem("linux")
                .withKubeletVersion("v1.20.2-sim")
                .withKubeProxyVersion("v1.20.2-sim")
                .withContainerRuntimeVersion("sim://1")
                .withOsImage("Tensorlane GPU simulator")
                .withKernelVersion("sim")
                .withMachineID(name)
                .withSystemUUID(name)
                .withBootID(name)
                .endNodeInfo()
                .endStatus()
                .build();
    }

    /** Ready=True and the pressure conditions False, as a healthy kubelet reports them. */
    public static List<NodeCondition> conditions(Instant now) {
        String t = PodStatuses.ts(now);
        return List.of(
                cond("MemoryPressure", "False", "KubeletHasSufficientMemory", t),
                cond("DiskPressure", "False", "KubeletHasNoDiskPressure", t),
                cond("PIDPressure", "False", "KubeletHasSufficientPID", t),
                cond("Ready", "True", "KubeletReady", t));
    }

    private static NodeCondition cond(String type, String status, String reason, String t) {
        return new NodeConditionBuilder()
                .withType(type)
                .withStatus(status)
                .withReason(reason)
                .withMessage("simulated by tensorlane-testkit")
                .withLastHeartbeatTime(t)
                .withLastTransitionTime(t)
                .build();
    }

    /** The GpuTopology the probe would publish for this node (spec only; status is written through /status). */
    public static GpuTopology topology(Node node) {
        GpuTopology t = new GpuTopology();
        t.getMetadata().setName(node.getMetadata().getName());
        t.getMetadata().setLabels(Map.of(SIMULATED, "true"));
        t.getMetadata()
                .setOwnerReferences(List.of(new OwnerReferenceBuilder()
                        .withApiVersion("v1")
                        .withKind("Node")
                        .withName(node.getMetadata().getName())
                        .withUid(node.getMetadata().getUid())
                        .build()));
        t.setSpec(new GpuTopologySpec());
        t.getSpec().nodeName = node.getMetadata().getName();
        return t;
    }

    /** The fixture as a probe result: source probe, probe time, probe version "simulator". */
    public static GpuTopologyStatus probeStatus(GpuTopologyStatus fixture, Instant now) {
        fixture.source = GpuTopologyStatus.Source.probe;
        fixture.probeTime = PodStatuses.ts(now);
        fixture.probeVersion = PROBE_VERSION;
        return fixture;
    }
}
