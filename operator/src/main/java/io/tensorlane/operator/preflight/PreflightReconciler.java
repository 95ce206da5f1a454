package io.tensorlane.operator.preflight;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.Mappers;
import io.tensorlane.api.v1alpha1.GpuTopology;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.contract.Allreduce;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.status.AffectedByNode;
import io.tensorlane.operator.status.ApiRejections;
import io.tensorlane.operator.support.EventRecorder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * Runs the preflight Jobs. For each node the InferenceDeployment reconciler planned ({@code status.topology.nodes}) with
 * the custom allreduce ({@code status.allreduce.mode Custom}), {@link PreflightGate} decides; this class only reads the
 * caches and acts: creates the Job ({@link PreflightJobs}), records the result in {@code GpuTopology.status.measurement}
 * ({@link PreflightRecorder}) and emits events. The InferenceDeployment reconciler holds the first rollout while
 * {@link PreflightGate#holdReason} says so; once a result is recorded (success or failure) its next plan uses the
 * measured table or NCCL. A Job can never hang the rollout: it has {@code activeDeadlineSeconds}, and the gate gives up
 * on it after the deadline plus a grace period even if the Job controller does not.
 */
@ControllerConfiguration(name = PreflightReconciler.NAME, generationAwareEventProcessing = false)
public class PreflightReconciler implements Reconciler<InferenceDeployment> {
    public static final String NAME = "preflight";
    private static final Logger LOG = Logger.getLogger(PreflightReconciler.class);

    private final TensorlaneConfig settings;
    private volatile InformerEventSource<Job, InferenceDeployment> jobs;
    private volatile InformerEventSource<GpuTopology, InferenceDeployment> topologies;

    public PreflightReconciler(TensorlaneConfig settings) {
        this.settings = settings;
    }

    @Override
    public List<EventSource<?, InferenceDeployment>> prepareEventSources(EventSourceContext<InferenceDeployment> ctx) {
        jobs = new InformerEventSource<>(
                InformerEventSourceConfiguration.from(Job.class, InferenceDeployment.class)
                        .withName("preflight-jobs")
                        .withLabelSelector(PreflightJobs.COMPONENT_LABEL + "=" + PreflightJobs.COMPONENT)
                        .withSecondaryToPrimaryMapper(Mappers.fromOwnerReferences(InferenceDeployment.class))
                        .build(),
                ctx);
        topologies = new InformerEventSource<>(
                InformerEventSourceConfiguration.from(GpuTopology.class, InferenceDeployment.class)
                        .withName("preflight-topologies")
                        .withSecondaryToPrimaryMapper(t -> AffectedByNode.primaries(
                                t.getMetadata().getName(), ctx.getPrimaryCache().list()::iterator))
                        .build(),
                ctx);
        return List.of(jobs, topologies);
    }

    @Override
    public UpdateControl<InferenceDeployment> reconcile(InferenceDeployment primary, Context<InferenceDeployment> ctx) {
        InferenceDeploymentStatus status = primary.getStatus();
        if (primary.getSpec() == null
                || primary.getSpec().parallelism == null
                || status == null
                || status.topology == null
                || status.allreduce == null) {
            return UpdateControl
                    .noUpdate(); // not planned yet: the InferenceDeployment reconciler's status write brings us back
        }
        if (status.phase == Phase.Invalid) {
            return UpdateControl
                    .noUpdate(); // a spec whose children the API server rejects gets no preflight Job either
        }
        Instant now = Instant.now();
        boolean custom = status.allreduce.mode == Allreduce.Custom;
        boolean firstRollout = status.lastAppliedSpec == null;
        Duration recheck = null;
        // the planned nodes, plus the nodes of this deployment's preflight Jobs: a running Job is followed to its end
        // even
        // when the plan changes meanwhile (e.g. Unschedulable while the Job's own pod holds the GPUs)
        java.util.Set<String> nodes = new java.util.LinkedHashSet<>(status.topology.nodes);
        jobs.list(
                        primary.getMetadata().getNamespace(),
                        j -> j.getMetadata().getOwnerReferences().stream()
                                .anyMatch(o ->
                                        o.getUid().equals(primary.getMetadata().getUid())))
                .map(j -> j.getMetadata().getAnnotations().get(PreflightJobs.NODE_ANNOTATION))
                .filter(n -> n != null)
                .forEach(nodes::add);
        for (String node : nodes) {
            GpuTopology topo = topologies.get(new ResourceID(node)).orElse(null);
            int world = primary.getSpec().parallelism.tensor == null ? 1 : primary.getSpec().parallelism.tensor;
            String jobName = PreflightJobs.name(primary.getMetadata().getName(), node, world);
            Job job = jobs.get(new ResourceID(jobName, primary.getMetadata().getNamespace()))
                    .orElse(null);
            JobState state = JobState.of(
                    job,
                    job == null || !finished(job) ? List.of() : podsOf(ctx.getClient(), job),
                    PreflightJobs.CONTAINER);
            PreflightDecision d = PreflightGate.decide(
                    primary.getSpec(),
                    new PreflightGate.Planned(node, custom, firstRollout),
                    topo == null ? null : topo.getStatus(),
                    state,
                    now,
                    settings);
            Duration next = act(ctx.getClient(), primary, node, job, topo, d);
            recheck = next == null ? recheck : recheck == null || next.compareTo(recheck) < 0 ? next : recheck;
        }
        return recheck == null
                ? UpdateControl.noUpdate()
                : UpdateControl.<InferenceDeployment>noUpdate().rescheduleAfter(recheck);
    }

    private Duration act(
            KubernetesClient client,
            InferenceDeployment primary,
            String node,
            Job existing,
            GpuTopology topo,
            PreflightDecision d) {
        String ref = primary.getMetadata().getNamespace() + "/"
                + primary.getMetadata().getName();
        EventRecorder events = new EventRecorder(client);
        if (d instanceof PreflightDecision.Wait wait) {
            return wait.recheck().isZero() ? Duration.ofMillis(200) : wait.recheck();
        }
        if (d instanceof PreflightDecision.StartJob start) {
            if (start.replaceExisting() && existing != null) {
                client.resource(existing).delete();
                return settings.preflight().recheck(); // create it once the old one is gone
            }
            Job job = PreflightJobs.job(primary, node, start.worldSize(), settings);
            try {
                client.resource(job).create();
            } catch (KubernetesClientException e) {
                if (ApiRejections.isRejection(e)) {
                    // the spec's fault, not a transient one: say so where the user looks, and look again later
                    events.warning(
                            primary,
                            "PreflightJobRejected",
                            ApiRejections.describe("Job", job.getMetadata().getName(), e)
                                    .message());
                    return settings.preflight().deadline();
                }
                if (e.getCode() != 409) {
                    throw e;
                }
                return settings.preflight().recheck(); // created by an earlier reconcile the cache has not seen yet
            }
            LOG.infof(
                    "InferenceDeployment %s: preflight Job %s on node %s (%s)",
                    ref, job.getMetadata().getName(), node, start.reason());
            events.normal(
                    primary,
                    "PreflightStarted",
                    "Job " + job.getMetadata().getName() + " on node " + node + ": " + start.reason()
                            + "; the first rollout waits for it (deadline "
                            + settings.preflight().deadline().toSeconds() + " s)");
            return settings.preflight().recheck();
        }
        if (d instanceof PreflightDecision.Record rec) {
            PreflightRecorder.record(client, node, rec.measurement());
            if (rec.deleteJob() && existing != null) {
                client.resource(existing).delete();
            }
            if (rec.success()) {
                LOG.infof("InferenceDeployment %s: node %s %s", ref, node, rec.reason());
                events.normal(primary, "PreflightPassed", "node " + node + ": " + rec.reason());
                if (topo != null) {
                    events.normal(topo, "PreflightPassed", rec.reason());
                }
            } else {
                String msg = "node " + node + ": " + rec.reason() + "; the custom allreduce is off there, NCCL is used";
                LOG.warnf("InferenceDeployment %s: %s", ref, msg);
                events.warning(primary, "PreflightFailed", msg);
                if (topo != null) {
                    events.warning(topo, "PreflightFailed", rec.reason());
                }
            }
            return null;
        }
        return null; // None
    }

    private static boolean finished(Job job) {
        return job.getStatus() != null
                && job.getStatus().getConditions() != null
                && job.getStatus().getConditions().stream()
                        .anyMatch(c -> "True".equals(c.getStatus())
                                && ("Complete".equals(c.getType()) || "Failed".equals(c.getType())));
    }

    /** The Job's pods, read once when it has finished (their termination message is the result). */
    private static List<Pod> podsOf(KubernetesClient client, Job job) {
        return client.pods()
                .inNamespace(job.getMetadata().getNamespace())
                .withLabels(Map.of("controller-uid", job.getMetadata().getUid()))
                .list()
                .getItems();
    }
}
