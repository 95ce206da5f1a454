package io.tensorlane.operator.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.tensorlane.api.v1alpha1.GpuTopology;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.operator.plan.NodeInfo;
import io.tensorlane.operator.preflight.PreflightJobs;
import io.tensorlane.operator.topology.NodeLabelDecision;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Reads the informer caches (never the API server) into an {@link Observation}; holds the event sources the reconciler
 * registered. Pods are tied to their InferenceDeployment through ReplicaSet → Deployment → owner reference, so this
 * does not depend on which labels the renderer chooses.
 */
public final class ClusterObserver {
    private final InformerEventSource<Node, InferenceDeployment> nodes;
    private final InformerEventSource<GpuTopology, InferenceDeployment> topologies;
    private final InformerEventSource<Pod, InferenceDeployment> pods;
    private final InformerEventSource<Deployment, InferenceDeployment> deployments;
    private final InformerEventSource<Service, InferenceDeployment> services;

    public ClusterObserver(
            InformerEventSource<Node, InferenceDeployment> nodes,
            InformerEventSource<GpuTopology, InferenceDeployment> topologies,
            InformerEventSource<Pod, InferenceDeployment> pods,
            InformerEventSource<Deployment, InferenceDeployment> deployments,
            InformerEventSource<Service, InferenceDeployment> services) {
        this.nodes = nodes;
        this.topologies = topologies;
        this.pods = pods;
        this.deployments = deployments;
        this.services = services;
    }

    public Observation observe(InferenceDeployment primary, Instant now, Duration topologyMaxAge) {
        Deployment deployment = owned(
                        deployments.getSecondaryResources(primary).stream().findFirst(), primary)
                .orElse(null);
        Service service = owned(services.getSecondaryResources(primary).stream().findFirst(), primary)
                .orElse(null);
        String ns = primary.getMetadata().getNamespace();
        List<Pod> own = deployment == null
                ? new ArrayList<>()
                : pods.byIndex(PodIndex.NAMESPACE, ns).stream()
                        .filter(p -> ownedBy(p, deployment))
                        .collect(Collectors.toCollection(ArrayList::new));
        own.sort(Comparator.comparing(p -> p.getMetadata().getName()));
        Map<String, GpuTopology> topo =
                topologies.list().collect(Collectors.toMap(t -> t.getMetadata().getName(), t -> t, (a, b) -> a));
        List<NodeInfo> infos = nodes.list()
                .map(n -> {
                    GpuTopology t = topo.get(n.getMetadata().getName());
                    return new NodeInfo(
                            n.getMetadata().getName(),
                            n.getMetadata().getLabels(),
                            NodeLabelDecision.gpuCapacity(
                                    n.getStatus() == null ? null : n.getStatus().getAllocatable()),
                            usedGpus(n.getMetadata().getName(), primary, deployment),
                            t == null ? null : t.getStatus(),
                            t != null && NodeLabelDecision.isStale(t.getStatus(), now, topologyMaxAge));
                })
                .sorted(Comparator.comparing(NodeInfo::name))
                .toList();
        return new Observation(infos, deployment, service, own);
    }

    /**
     * GPUs that pods other than the deployment's own hold on {@code node}: every bound, unfinished GPU pod there
     * ({@link PodIndex#GPU_NODE}) except the deployment's pods and its own preflight pod (the preflight hook does not
     * take the GPUs away from its plan).
     */
    private int usedGpus(String node, InferenceDeployment primary, Deployment deployment) {
        int used = 0;
        for (Pod p : pods.byIndex(PodIndex.GPU_NODE, node)) {
            if ((deployment == null || !ownedBy(p, deployment))
                    && !PreflightJobs.isPreflightPodOf(
                            p,
                            primary.getMetadata().getNamespace(),
                            primary.getMetadata().getName())) {
                used += gpuRequest(p);
            }
        }
        return used;
    }

    /**
     * A child the operator just applied ({@code applied}, as the API server stored it; {@code live}: what the cache held,
     * or null) goes into its event source's cache at once, so the next reconcile sees it even before the watch delivers
     * it, instead of finding no child and applying (and dry-running) it again.
     */
    public void remember(HasMetadata applied, HasMetadata live) {
        if (applied instanceof Deployment d) {
            if (live instanceof Deployment before) {
                deployments.handleRecentResourceUpdate(ResourceID.fromResource(d), d, before);
            } else {
                deployments.handleRecentResourceCreate(ResourceID.fromResource(d), d);
            }
        } else if (applied instanceof Service svc) {
            if (live instanceof Service before) {
                services.handleRecentResourceUpdate(ResourceID.fromResource(svc), svc, before);
            } else {
                services.handleRecentResourceCreate(ResourceID.fromResource(svc), svc);
            }
        }
    }

    /** The InferenceDeployment a pod belongs to: pod → ReplicaSet (name minus hash) → Deployment → owner. */
    public static Optional<ResourceID> podOwner(
            Pod pod, InformerEventSource<Deployment, InferenceDeployment> deployments) {
        String ns = pod.getMetadata().getNamespace();
        return pod.getMetadata().getOwnerReferences().stream()
                .filter(o -> "ReplicaSet".equals(o.getKind()) && o.getName().lastIndexOf('-') > 0)
                .map(o -> o.getName().substring(0, o.getName().lastIndexOf('-')))
                .map(d -> deployments.get(new ResourceID(d, ns)))
                .flatMap(Optional::stream)
                .flatMap(d -> d.getMetadata().getOwnerReferences().stream().filter(ClusterObserver::isPrimaryRef))
                .map(o -> new ResourceID(o.getName(), ns))
                .findFirst();
    }

    static boolean ownedBy(Pod pod, Deployment d) {
        if (!d.getMetadata().getNamespace().equals(pod.getMetadata().getNamespace())) {
            return false;
        }
        Map<String, String> selector = d.getSpec().getSelector().getMatchLabels();
        Map<String, String> labels = pod.getMetadata().getLabels();
        return selector != null
                && !selector.isEmpty()
                && labels != null
                && selector.entrySet().stream().allMatch(e -> e.getValue().equals(labels.get(e.getKey())));
    }

    static boolean terminated(Pod p) {
        String phase = p.getStatus() == null ? null : p.getStatus().getPhase();
        return "Succeeded".equals(phase) || "Failed".equals(phase);
    }

    static int gpuRequest(Pod p) {
        int sum = 0;
        for (var c : p.getSpec().getContainers()) {
            if (c.getResources() != null) {
                int l = NodeLabelDecision.gpuCapacity(c.getResources().getLimits());
                sum += l > 0
                        ? l
                        : NodeLabelDecision.gpuCapacity(c.getResources().getRequests());
            }
        }
        return sum;
    }

    private static boolean isPrimaryRef(OwnerReference o) {
        return "InferenceDeployment".equals(o.getKind())
                && o.getApiVersion() != null
                && o.getApiVersion().startsWith(InferenceDeployment.GROUP + "/");
    }

    private static <T extends io.fabric8.kubernetes.api.model.HasMetadata> Optional<T> owned(
            Optional<T> child, InferenceDeployment primary) {
        return child.filter(c -> c.getMetadata().getOwnerReferences().stream()
                .anyMatch(o -> primary.getMetadata().getUid().equals(o.getUid())));
    }
}
