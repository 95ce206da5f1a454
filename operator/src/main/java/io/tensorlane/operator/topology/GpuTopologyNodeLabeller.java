package io.tensorlane.operator.topology;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.tensorlane.api.v1alpha1.GpuTopology;
import io.tensorlane.api.v1alpha1.GpuTopologySpec;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.support.DecisionMetrics;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jboss.logging.Logger;

/**
 * Mirrors each node's GpuTopology summary onto the Node as {@code tensorlane.io/gpu-*} labels (server-side apply of the
 * labels alone, so a key the topology no longer yields is removed), creates a {@code source: heuristic} GpuTopology
 * from GPU Feature Discovery labels for GPU nodes without a probe result, and marks old probe results Stale. The
 * decision is {@link NodeLabelDecision}; this class only observes and writes, and writes nothing when nothing differs.
 */
@ControllerConfiguration(
        name = "node-labeller",
        generationAwareEventProcessing = false,
        informer = @Informer(onUpdateFilter = GpuTopologyNodeLabeller.LabelsOrCapacityChanged.class))
public class GpuTopologyNodeLabeller implements Reconciler<Node> {
    public static final String STALE = "Stale";
    private static final Logger LOG = Logger.getLogger(GpuTopologyNodeLabeller.class);

    private final TensorlaneConfig settings;
    private final DecisionMetrics metrics;

    public GpuTopologyNodeLabeller(TensorlaneConfig settings, DecisionMetrics metrics) {
        this.settings = settings;
        this.metrics = metrics;
    }

    @Override
    public List<EventSource<?, Node>> prepareEventSources(EventSourceContext<Node> context) {
        var config = InformerEventSourceConfiguration.from(GpuTopology.class, Node.class)
                .withSecondaryToPrimaryMapper(
                        t -> Set.of(new ResourceID(t.getMetadata().getName())))
                .withPrimaryToSecondaryMapper(
                        (Node n) -> Set.of(new ResourceID(n.getMetadata().getName())))
                .build();
        return List.of(new InformerEventSource<>(config, context));
    }

    @Override
    public UpdateControl<Node> reconcile(Node node, Context<Node> context) {
        KubernetesClient client = context.getClient();
        GpuTopology topology = context.getSecondaryResource(GpuTopology.class).orElse(null);
        Instant now = Instant.now();
        NodeLabelDecision d = NodeLabelDecision.decide(
                node.getMetadata().getLabels(),
                node.getStatus() == null ? null : node.getStatus().getCapacity(),
                topology,
                now,
                settings.topologyMaxAge());
        String name = node.getMetadata().getName();
        UpdateControl<Node> control = UpdateControl.noUpdate();
        if (d.heuristic() != null && topology == null && youngerThanGrace(node, now)) {
            LOG.debugf(
                    "Node %s: waiting %s for a probe result before deriving a heuristic",
                    name, settings.heuristicGrace());
            return control.rescheduleAfter(settings.heuristicGrace());
        } else if (d.heuristic() != null) {
            writeHeuristic(client, node, topology, d.heuristic());
            LOG.infof("Node %s: heuristic GpuTopology written: %s", name, d.reason());
            metrics.nodeLabels("heuristic");
        }
        if (!d.satisfiedBy(node.getMetadata().getLabels())) {
            Node labels = new NodeBuilder()
                    .withMetadata(new ObjectMetaBuilder()
                            .withName(name)
                            .withLabels(d.labels())
                            .build())
                    .build();
            client.nodes()
                    .resource(labels)
                    .fieldManager(TensorlaneConfig.FIELD_MANAGER)
                    .forceConflicts()
                    .serverSideApply();
            LOG.infof("Node %s: labels %s (%s)", name, d.labels(), d.reason());
            metrics.nodeLabels(d.labels().isEmpty() ? "removed" : "applied");
        }
        if (topology != null
                && topology.getStatus() != null
                && topology.getStatus().source != GpuTopologyStatus.Source.heuristic) {
            markStale(client, topology, d.stale(), now);
        }
        return control;
    }

    private boolean youngerThanGrace(Node node, Instant now) {
        String created = node.getMetadata().getCreationTimestamp();
        return created != null
                && Instant.parse(created).plus(settings.heuristicGrace()).isAfter(now);
    }

    private void writeHeuristic(KubernetesClient client, Node node, GpuTopology existing, GpuTopologyStatus status) {
        String name = node.getMetadata().getName();
        if (existing == null) {
            GpuTopology t = new GpuTopology();
            t.setMetadata(new ObjectMetaBuilder()
                    .withName(name)
                    .withOwnerReferences(new OwnerReferenceBuilder()
                            .withApiVersion("v1")
                            .withKind("Node")
                            .withName(name)
                            .withUid(node.getMetadata().getUid())
                            .build())
                    .build());
            t.setSpec(new GpuTopologySpec());
            t.getSpec().nodeName = name;
            t.setStatus(null);
            existing = client.resource(t).create();
        }
        GpuTopology patch = new GpuTopology();
        patch.setMetadata(new ObjectMetaBuilder().withName(name).build());
        patch.setSpec(null);
        status.probeTime = Instant.now().toString();
        patch.setStatus(status);
        client.resource(patch).subresource("status").patch(statusApply(), patch);
    }

    private void markStale(KubernetesClient client, GpuTopology topology, boolean stale, Instant now) {
        List<Condition> current = topology.getStatus().conditions;
        boolean wasStale = Conditions.isTrue(current, STALE);
        if (wasStale == stale && (stale || Conditions.find(current, STALE).isEmpty())) {
            return;
        }
        Condition c = Conditions.next(
                current,
                STALE,
                stale,
                stale ? "ProbeResultTooOld" : "ProbeResultFresh",
                stale
                        ? "probe result from " + topology.getStatus().probeTime + " is older than "
                                + settings.topologyMaxAge() + "; not trusted for forcing the custom allreduce"
                        : "probe result is recent",
                topology.getMetadata().getGeneration(),
                now);
        GpuTopology patch = new GpuTopology();
        patch.setMetadata(new ObjectMetaBuilder()
                .withName(topology.getMetadata().getName())
                .build());
        patch.setSpec(null);
        patch.setStatus(new GpuTopologyStatus());
        patch.getStatus().conditions = Conditions.upsert(current, c);
        client.resource(patch).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE), patch);
        LOG.infof("GpuTopology %s: Stale=%s", topology.getMetadata().getName(), stale);
    }

    private PatchContext statusApply() {
        return new PatchContext.Builder()
                .withPatchType(PatchType.SERVER_SIDE_APPLY)
                .withFieldManager(TensorlaneConfig.FIELD_MANAGER)
                .withForce(true)
                .build();
    }

    /** Node heartbeats change status every few seconds; only labels and capacity matter here. */
    public static class LabelsOrCapacityChanged implements OnUpdateFilter<Node> {
        @Override
        public boolean accept(Node updated, Node old) {
            return !Objects.equals(labels(updated), labels(old)) || !Objects.equals(capacity(updated), capacity(old));
        }

        private static Map<String, String> labels(Node n) {
            return n.getMetadata().getLabels();
        }

        private static Object capacity(Node n) {
            return n.getStatus() == null ? null : n.getStatus().getCapacity();
        }
    }
}
