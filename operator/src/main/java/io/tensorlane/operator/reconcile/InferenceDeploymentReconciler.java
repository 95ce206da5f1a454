package io.tensorlane.operator.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.Mappers;
import io.tensorlane.api.v1alpha1.AppliedSpec;
import io.tensorlane.api.v1alpha1.DownloadStatus;
import io.tensorlane.api.v1alpha1.GpuTopology;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.engine.EngineProfiles;
import io.tensorlane.operator.model.DownloadProgress;
import io.tensorlane.operator.model.FetchLogs;
import io.tensorlane.operator.model.ModelResolution;
import io.tensorlane.operator.model.ModelResolver;
import io.tensorlane.operator.model.ModelResolvers;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.PlannerSettings;
import io.tensorlane.operator.plan.Speculation;
import io.tensorlane.operator.preflight.PreflightGate;
import io.tensorlane.operator.render.Rendered;
import io.tensorlane.operator.rollback.RecoveryCoordinator;
import io.tensorlane.operator.rollback.RecoveryStep;
import io.tensorlane.operator.status.AffectedByNode;
import io.tensorlane.operator.status.ChildProblem;
import io.tensorlane.operator.status.StatusAggregator;
import io.tensorlane.operator.status.StatusFold;
import io.tensorlane.operator.status.StatusInput;
import io.tensorlane.operator.support.DecisionMetrics;
import io.tensorlane.operator.support.EventRecorder;
import io.tensorlane.operator.support.EventSink;
import io.tensorlane.operator.topology.GpuTopologyNodeLabeller;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jboss.logging.Logger;

/**
 * observe → plan → act → report for one InferenceDeployment. Decisions are the pure planner, renderer, failure detector
 * and rollback decider; {@link StatusAggregator} owns the status. Flink-style: the effective spec is written to
 * status.lastAppliedSpec before the Deployment is applied; nothing is written when nothing changed, and a change of
 * details only (pod count, nodes, condition messages) waits up to {@link StatusFold#DETAIL_DELAY} for a transition to
 * carry it ({@link StatusFold}).
 */
@ControllerConfiguration(name = InferenceDeploymentReconciler.NAME, fieldManager = TensorlaneConfig.FIELD_MANAGER)
public class InferenceDeploymentReconciler implements Reconciler<InferenceDeployment> {
    public static final String NAME = "inferencedeployment";

    private static final Logger LOG = Logger.getLogger(InferenceDeploymentReconciler.class);

    private final TensorlaneConfig settings;
    private final DecisionMetrics metrics;
    private final ModelResolver models;
    private final FetchLogs fetchLogs = new FetchLogs();
    private final Announcements announced = new Announcements();
    private final StatusFold folds = new StatusFold();

    private volatile ClusterObserver observer;
    private volatile EventSink sink;

    /** With a model resolver of its own on the configured Hub endpoint (tests and benchmarks). */
    public InferenceDeploymentReconciler(TensorlaneConfig settings, DecisionMetrics metrics) {
        this(settings, metrics, ModelResolvers.create(settings));
    }

    @Inject
    public InferenceDeploymentReconciler(TensorlaneConfig settings, DecisionMetrics metrics, ModelResolver models) {
        this.settings = settings;
        this.metrics = metrics;
        this.models = models;
    }

    @Override
    public List<EventSource<?, InferenceDeployment>> prepareEventSources(EventSourceContext<InferenceDeployment> ctx) {
        var deployments = new InformerEventSource<>(
                InformerEventSourceConfiguration.from(Deployment.class, InferenceDeployment.class)
                        .withSecondaryToPrimaryMapper(Mappers.fromOwnerReferences(InferenceDeployment.class))
                        .build(),
                ctx);
        var services = new InformerEventSource<>(
                InformerEventSourceConfiguration.from(Service.class, InferenceDeployment.class)
                        .withSecondaryToPrimaryMapper(Mappers.fromOwnerReferences(InferenceDeployment.class))
                        .build(),
                ctx);
        var pods = new InformerEventSource<>(
                InformerEventSourceConfiguration.from(Pod.class, InferenceDeployment.class)
                        .withSecondaryToPrimaryMapper(p -> ClusterObserver.podOwner(p, deployments)
                                .map(Set::of)
                                .orElse(Set.of()))
                        .build(),
                ctx);
        pods.addIndexers(PodIndex.indexers()); // a reconcile reads its namespace's pods and the GPU pods per node only
        var nodes = new InformerEventSource<>(
                InformerEventSourceConfiguration.from(Node.class, InferenceDeployment.class)
                        .withSecondaryToPrimaryMapper(n -> AffectedByNode.primaries(
                                n.getMetadata().getName(), ctx.getPrimaryCache().list()::iterator))
                        .withOnUpdateFilter(new GpuTopologyNodeLabeller.LabelsOrCapacityChanged())
                        .build(),
                ctx);
        var topologies = new InformerEventSource<>(
                InformerEventSourceConfiguration.from(GpuTopology.class, InferenceDeployment.class)
                        .withSecondaryToPrimaryMapper(t -> AffectedByNode.primaries(
                                t.getMetadata().getName(), ctx.getPrimaryCache().list()::iterator))
                        .build(),
                ctx);
        observer = new ClusterObserver(nodes, topologies, pods, deployments, services);
        return List.of(deployments, services, pods, nodes, topologies);
    }

    @Override
    public UpdateControl<InferenceDeployment> reconcile(InferenceDeployment primary, Context<InferenceDeployment> ctx) {
        EventRecorder events = new EventRecorder(eventSink(ctx));
        UpdateControl<InferenceDeployment> control;
        try {
            control = reconcile(primary, ctx, events);
        } catch (RuntimeException e) {
            // the decisions whose status was not written will be made again, and their events emitted then
            events.flushCommitted();
            throw e;
        }
        events.flush();
        return control;
    }

    private UpdateControl<InferenceDeployment> reconcile(
            InferenceDeployment primary, Context<InferenceDeployment> ctx, EventRecorder events) {
        Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        long gen = primary.getMetadata().getGeneration();
        InferenceDeploymentStatus prev =
                primary.getStatus() == null ? new InferenceDeploymentStatus() : primary.getStatus();
        Observation obs = observer.observe(primary, now, settings.topologyMaxAge());
        RecoveryStep step = new RecoveryCoordinator(events, metrics, settings.rollbackBackoff())
                .step(primary, obs.pods(), obs.deployment(), now);

        // model facts first (status.model, or the inspection cache; never a blocking read here); the spec's geometry
        // and
        // weightBytes win over what was read
        // a draft model (spec.serving.speculative.draftModel) is read the same way; the plan waits for both
        ModelResolution model = ModelResolution.withDraft(
                models.resolve(primary, step.effective(), prev.model, ctx.getClient()),
                models.resolveDraft(primary, step.effective(), prev.draftModel, ctx.getClient()));
        InferenceDeploymentSpec planned = model.fill(step.effective());
        Plan plan = !model.ready()
                ? model.blockingPlan()
                : PlanAndRender.plan(
                        planned,
                        obs.nodes(),
                        new PlannerSettings(
                                now, settings.measurementMaxAge(), obs.currentNodes(), EngineProfiles::problem));
        Rendered rendered = plan.ok() ? PlanAndRender.render(primary, planned, plan, settings, model) : null;
        // preflight hook (io.tensorlane.operator.preflight; its PreflightReconciler runs the Job): hold the first
        // rollout
        // while a planned node has no recent measurement for the custom allreduce; the recorded result re-triggers us
        String preflightHold = !settings.preflight().enabled()
                ? null
                : PreflightGate.holdReason(
                        step.effective(),
                        plan,
                        obs.nodes(),
                        prev.lastAppliedSpec == null,
                        now,
                        settings.measurementMaxAge());
        // both children pass the API server's dry-run before anything is written (also while the preflight holds, whose
        // Job carries the same tolerations and image): a rejected revision never reaches the running Deployment, and
        // status keeps claiming the revision that runs. A first rollout's first try has nothing running to protect: its
        // real apply is the check (Children.applyFirst), which saves the API server two dry-runs per new deployment
        Children children = new Children(
                new ChildApplier(ctx.getClient(), TensorlaneConfig.FIELD_MANAGER, metrics, observer::remember));
        boolean pending = rendered != null && !step.failed() && !Children.current(rendered, obs);
        boolean firstTry = pending && preflightHold == null && Children.firstTry(obs, prev);
        ChildProblem rejected = pending && !firstTry ? children.dryRun(rendered, obs) : null;
        boolean apply = rendered != null && !step.failed() && preflightHold == null && rejected == null;
        AppliedSpec applied = Children.stillClaimed(prev.lastAppliedSpec, obs, rejected);
        if (apply
                && (applied == null
                        || !Objects.equals(applied.revision, rendered.revision())
                        || !Objects.equals(applied.generation, gen))) {
            applied = new AppliedSpec();
            applied.generation = gen;
            applied.revision = rendered.revision();
            applied.time = now.toString();
            applied.spec = step.effective();
            metrics.decision("allreduce", plan.allreduce().mode().name());
        }
        InferenceDeploymentStatus next = StatusAggregator.compute(new StatusInput(
                gen,
                prev,
                plan,
                rendered == null ? null : rendered.revision(),
                primary.getSpec().replicas == null ? 1 : primary.getSpec().replicas,
                obs.pods(),
                applied,
                step.lastStable(),
                step.rollback(),
                step.lastFailure(),
                step.failureActive(),
                step.failed(),
                preflightHold,
                now,
                rejected,
                apply && pending ? StatusAggregator.applyFailure(prev) : null,
                model));
        // the hf:// download steps' progress, the model's and a draft model's (their logs, read at most every 10 s per
        // pod; status changes per 10% or 30 s); without a draft model in the spec, no draft download
        next = StatusAggregator.withDownload(
                prev,
                next,
                download(prev.download, ctx, obs.pods(), now, DownloadProgress.Step.MODEL),
                Speculation.draftModel(primary.getSpec()) == null
                        ? null
                        : download(prev.draftDownload, ctx, obs.pods(), now, DownloadProgress.Step.DRAFT),
                now);
        InferenceDeploymentStatus written = prev;
        StatusFold.Decision fold = folds.decide(primary.getMetadata().getUid(), prev, next, Instant.now());
        if (fold instanceof StatusFold.Write) {
            // the effective spec lands in status.lastAppliedSpec before the Deployment is applied
            try {
                primary = StatusWrites.write(primary, next, ctx);
            } catch (KubernetesClientException e) {
                if (!StatusWrites.staleRead(e)) {
                    throw e;
                }
                // decided from a status older than the stored one (the cache is behind the operator's own last write):
                // none of it lands, not its events either; look again once the cache has caught up
                LOG.infof(
                        "%s/%s: status computed from resourceVersion %s, which is no longer the stored one; "
                                + "reconciling again in %d ms",
                        primary.getMetadata().getNamespace(),
                        primary.getMetadata().getName(),
                        primary.getMetadata().getResourceVersion(),
                        StatusWrites.STALE_READ_RETRY.toMillis());
                metrics.decision("outcome", "StaleRead");
                events.flushCommitted();
                return UpdateControl.<InferenceDeployment>noUpdate().rescheduleAfter(StatusWrites.STALE_READ_RETRY);
            }
            written = next;
            metrics.applied("InferenceDeployment/status");
            StatusEvents.emit(events, metrics, primary, prev, next, plan, apply && pending);
            for (String[] download : List.of(
                    nullSafe(DownloadProgress.event(prev.download, next.download, DownloadProgress.Step.MODEL)),
                    nullSafe(DownloadProgress.event(
                            prev.draftDownload, next.draftDownload, DownloadProgress.Step.DRAFT)))) {
                if (download.length == 0) {
                    continue;
                }
                if ("Warning".equals(download[0])) {
                    events.warning(primary, download[1], download[2]);
                } else {
                    events.normal(primary, download[1], download[2]);
                }
            }
            events.commit();
        }
        InferenceDeployment about = primary;
        // one event for the decision: the revision, where and how it runs (and the model when it was just read); once
        // per revision: a later reconcile that applies it again because its caches do not show the children yet
        // announces nothing
        InferenceDeploymentStatus before = prev;
        InferenceDeploymentStatus after = next;
        String uid = primary.getMetadata().getUid();
        Runnable started = () -> {
            if (!announced.first(uid, rendered.revision())) {
                return;
            }
            events.normal(
                    about,
                    "RolloutStarted",
                    StatusEvents.rollout(rendered, plan, StatusEvents.modelRead(before, after) ? after.model : null));
            events.commit();
        };
        try {
            if (apply && firstTry) {
                children.applyFirst(rendered, written, prev, started);
            } else if (apply) {
                children.apply(rendered, obs, written, prev, started);
            }
        } catch (ChildApplyException e) {
            throw e.basedOn(primary.getMetadata().getResourceVersion()); // the version this reconcile wrote, if any
        }
        UpdateControl<InferenceDeployment> control = requeue(step, model, next, plan);
        // a detail change waiting to be folded into a transition: look again when its delay is over
        return fold instanceof StatusFold.Wait w ? sooner(control, w.after()) : control;
    }

    private UpdateControl<InferenceDeployment> requeue(
            RecoveryStep step, ModelResolution model, InferenceDeploymentStatus next, Plan plan) {
        UpdateControl<InferenceDeployment> control = UpdateControl.noUpdate();
        if (step.requeue() != null) {
            return control.rescheduleAfter(step.requeue());
        }
        if (model.state() == ModelResolution.State.PENDING) {
            return control.rescheduleAfter(ModelResolver.PENDING_RECHECK);
        }
        if (model.state() == ModelResolution.State.FAILED) {
            return control.rescheduleAfter(ModelResolver.FAILED_RECHECK);
        }
        if (next.download != null && DownloadProgress.DOWNLOADING.equals(next.download.phase)
                || next.draftDownload != null && DownloadProgress.DOWNLOADING.equals(next.draftDownload.phase)) {
            return control.rescheduleAfter(FetchLogs.MIN_READ_INTERVAL); // the next look at the step's log
        }
        boolean settled = next.phase == Phase.Failed
                || next.phase == Phase.Invalid
                || (next.phase == Phase.Ready || next.phase == Phase.RolledBack)
                        && next.lastStableSpec != null
                        && next.lastAppliedSpec != null
                        && Objects.equals(next.lastStableSpec.revision, next.lastAppliedSpec.revision);
        return settled || !plan.ok() ? control : control.rescheduleAfter(settings.requeueWhileRollingOut());
    }

    /** The next status of download step {@code step}, from the pods' step and its log. */
    private DownloadStatus download(
            DownloadStatus prev,
            Context<InferenceDeployment> ctx,
            List<Pod> pods,
            Instant now,
            DownloadProgress.Step step) {
        return DownloadProgress.next(prev, fetchLogs.observe(ctx.getClient(), pods, now, step), now, step);
    }

    private static String[] nullSafe(String[] event) {
        return event == null ? new String[0] : event;
    }

    /** {@code c}, rescheduled after {@code d} unless it already reconciles again sooner. */
    static <T extends HasMetadata> UpdateControl<T> sooner(UpdateControl<T> c, Duration d) {
        long ms = Math.max(1, d.toMillis());
        return c.getScheduleDelay().filter(x -> x <= ms).isPresent() ? c : c.rescheduleAfter(ms);
    }

    /**
     * JOSDK's error-status hook: any exception of a reconcile (a child the API server refused, a failed status write)
     * becomes the ApplyFailed condition, naming the object and field, plus a Warning event; the status is written by
     * the same server-side apply as the reconcile's (so a revision claimed but not applied is withdrawn). JOSDK's retry
     * keeps its backoff, and after the last retry the reconcile is rescheduled rather than dropped.
     */
    @Override
    public ErrorStatusUpdateControl<InferenceDeployment> updateErrorStatus(
            InferenceDeployment primary, Context<InferenceDeployment> ctx, Exception e) {
        EventRecorder events = new EventRecorder(eventSink(ctx));
        try {
            boolean lastAttempt =
                    ctx.getRetryInfo().map(RetryInfo::isLastAttempt).orElse(false);
            return ErrorStatus.control(
                    primary,
                    e,
                    Instant.now().truncatedTo(ChronoUnit.SECONDS),
                    events,
                    metrics,
                    lastAttempt ? ErrorStatus.AFTER_LAST_RETRY : null,
                    (basedOn, s) -> {
                        StatusWrites.write(primary, basedOn, s, ctx);
                        metrics.applied("InferenceDeployment/status");
                    });
        } finally {
            events.flushCommitted();
        }
    }

    /** The events' writer, made on first use with the client JOSDK hands the reconciler. */
    private EventSink eventSink(Context<InferenceDeployment> ctx) {
        EventSink s = sink;
        if (s == null) {
            synchronized (this) {
                if (sink == null) {
                    sink = new EventSink(ctx.getClient(), metrics);
                }
                s = sink;
            }
        }
        return s;
    }

    /** Events queued but not written yet (0 before the first reconcile). */
    public long pendingEvents() {
        EventSink s = sink;
        return s == null ? 0 : s.pending();
    }
}
