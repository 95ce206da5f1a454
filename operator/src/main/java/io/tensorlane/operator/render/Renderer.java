package io.tensorlane.operator.render;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.ProbeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.engine.EngineProfile;
import io.tensorlane.operator.engine.EngineProfiles;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.SpecValidator;
import io.tensorlane.operator.plan.Speculation;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Renders the Deployment and Service of an InferenceDeployment from an effective spec and its (OK) plan. */
public final class Renderer {
    public static final String LABEL_NAME = "app.kubernetes.io/name";
    public static final String LABEL_INSTANCE = "app.kubernetes.io/instance";
    public static final String LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
    /** On the pod template: the revision (hash of the rendered template without this label). */
    public static final String LABEL_REVISION = "tensorlane.io/revision";

    public static final String APP_NAME = "tensorlane-inference";
    public static final String MANAGED_BY = "tensorlane";
    public static final String CONTAINER = "engine";
    public static final String PORT_NAME = "http";
    public static final String GPU_RESOURCE = "nvidia.com/gpu";
    /** The conventional scrape annotations (Prometheus' kubernetes_sd examples, many agents) on every serving pod. */
    public static final String ANNOTATION_SCRAPE = "prometheus.io/scrape";

    public static final String ANNOTATION_PORT = "prometheus.io/port";
    public static final String ANNOTATION_PATH = "prometheus.io/path";
    private static final int STARTUP_PERIOD_SECONDS = 10;
    private static final long LOAD_BASE_SECONDS = 300;
    private static final long LOAD_BYTES_PER_SECOND = 100_000_000L;

    private Renderer() {}

    /** Labels that select the pods of one InferenceDeployment (the Deployment's immutable selector, the Service's). */
    public static Map<String, String> selectorLabels(String instance) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(LABEL_NAME, APP_NAME);
        m.put(LABEL_INSTANCE, instance);
        return m;
    }

    /** Selector labels plus managed-by: on every object the operator creates. */
    public static Map<String, String> commonLabels(String instance) {
        Map<String, String> m = selectorLabels(instance);
        m.put(LABEL_MANAGED_BY, MANAGED_BY);
        return m;
    }

    /**
     * @param owner the primary (name, namespace, uid for the owner reference)
     * @param effective the effective spec that was planned (may differ from owner.getSpec() after rollback/remediation)
     * @param plan an OK plan for {@code effective}
     * @throws IllegalArgumentException when the plan is not OK
     */
    public static Rendered render(
            InferenceDeployment owner, InferenceDeploymentSpec effective, Plan plan, TensorlaneConfig settings) {
        return render(owner, effective, plan, settings, null);
    }

    /**
     * As {@link #render(InferenceDeployment, InferenceDeploymentSpec, Plan, TensorlaneConfig)}, with the model facts.
     *
     * @param model status.model (the commit an hf:// source is pinned to), or null for a source that is not inspected
     */
    public static Rendered render(
            InferenceDeployment owner,
            InferenceDeploymentSpec effective,
            Plan plan,
            TensorlaneConfig settings,
            ModelStatus model) {
        return render(owner, effective, plan, settings, model, null);
    }

    /**
     * As {@link #render(InferenceDeployment, InferenceDeploymentSpec, Plan, TensorlaneConfig, ModelStatus)}, with the
     * draft model's facts.
     *
     * @param draft status.draftModel (the commit an hf:// draft is pinned to), or null
     */
    public static Rendered render(
            InferenceDeployment owner,
            InferenceDeploymentSpec effective,
            Plan plan,
            TensorlaneConfig settings,
            ModelStatus model,
            ModelStatus draft) {
        if (plan == null || !plan.ok()) {
            throw new IllegalArgumentException(
                    "cannot render " + owner.getMetadata().getName() + ": the plan is not OK ("
                            + (plan == null ? "none" : plan.outcome() + ": " + plan.message()) + ")");
        }
        InferenceDeploymentSpec spec = SpecValidator.withDefaults(effective);
        // the children's name: a DNS-1035 label (a Service name, a label value) derived from the owner's name
        String name = ChildNames.of(owner.getMetadata().getName());
        OwnerReference ownerRef = new OwnerReferenceBuilder()
                .withApiVersion(owner.getApiVersion())
                .withKind(owner.getKind())
                .withName(owner.getMetadata().getName())
                .withUid(owner.getMetadata().getUid())
                .withController(true)
                .withBlockOwnerDeletion(true)
                .build();

        PodTemplateSpec template = podTemplate(name, spec, plan, settings, model, draft);
        String revision = revision(template);
        template.getMetadata().getLabels().put(LABEL_REVISION, revision);

        Deployment deployment = new DeploymentBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(owner.getMetadata().getNamespace())
                .withLabels(commonLabels(name))
                .withOwnerReferences(ownerRef)
                .endMetadata()
                .withNewSpec()
                .withReplicas(spec.replicas)
                .withNewSelector()
                .withMatchLabels(selectorLabels(name))
                .endSelector()
                // maxSurge 0: GPUs are scarce, a surge pod would only wait for GPUs the old pod holds. The API rejects
                // maxUnavailable 0 together with maxSurge 0, so at least one pod may be unavailable.
                .withNewStrategy()
                .withType("RollingUpdate")
                .withNewRollingUpdate()
                .withMaxSurge(new IntOrString(0))
                .withMaxUnavailable(new IntOrString(Math.max(1, spec.rollout.maxUnavailable)))
                .endRollingUpdate()
                .endStrategy()
                .withProgressDeadlineSeconds(spec.rollout.progressDeadlineSeconds)
                .withRevisionHistoryLimit(3)
                .withTemplate(template)
                .endSpec()
                .build();

        Service service = new ServiceBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(owner.getMetadata().getNamespace())
                .withLabels(commonLabels(name))
                .withOwnerReferences(ownerRef)
                .endMetadata()
                .withNewSpec()
                .withType("ClusterIP")
                .withSelector(selectorLabels(name))
                .addNewPort()
                .withName(PORT_NAME)
                .withProtocol("TCP")
                .withPort(spec.serving.port)
                .withTargetPort(new IntOrString(PORT_NAME))
                .endPort()
                .endSpec()
                .build();
        return new Rendered(deployment, service, revision);
    }

    private static PodTemplateSpec podTemplate(
            String name,
            InferenceDeploymentSpec spec,
            Plan plan,
            TensorlaneConfig settings,
            ModelStatus model,
            ModelStatus draft) {
        ModelVolumes.Mount mount = ModelVolumes.of(spec, model, settings);
        ModelVolumes.Mount draftMount = ModelVolumes.draft(spec, draft, settings); // null without a draft model
        EngineCommands.Engine engine = EngineCommands.render(spec, plan, mount, draftMount);
        List<Container> inits = new ArrayList<>();
        List<VolumeMount> modelMounts = new ArrayList<>();
        List<Volume> modelVolumes = new ArrayList<>();
        for (ModelVolumes.Mount m : draftMount == null ? List.of(mount) : List.of(mount, draftMount)) {
            if (m.init() != null) {
                inits.add(m.init());
            }
            modelMounts.add(m.engineMount());
            modelVolumes.add(m.volume());
        }
        EngineProfile profile = EngineProfiles.of(spec);
        int timeout = profile.probeTimeoutSeconds();
        String image = EngineProfiles.image(spec, settings.runtimeImage());
        long uid = settings.pod().runAsUser();
        Quantity gpus = new Quantity(Integer.toString(spec.parallelism.tensor));
        int port = spec.serving.port;
        Long draftBytes = draftMount == null ? null : Speculation.draftModel(spec).weightBytes;
        int startupFailures = startupFailureThreshold(
                spec.rollout.progressDeadlineSeconds,
                (spec.model.weightBytes == null ? 0 : spec.model.weightBytes) + (draftBytes == null ? 0 : draftBytes));

        Container container = new ContainerBuilder()
                .withName(CONTAINER)
                .withImage(image)
                .withCommand(engine.command())
                .withArgs(engine.args())
                .withEnv(engine.env())
                .addNewPort()
                .withName(PORT_NAME)
                .withContainerPort(port)
                .withProtocol("TCP")
                .endPort()
                .withNewResources()
                .addToRequests(GPU_RESOURCE, gpus)
                .addToLimits(GPU_RESOURCE, gpus)
                .endResources()
                // model loading takes minutes: the startup probe allows the progress deadline or the load-time budget
                // of the
                // weights, whichever is longer; liveness and readiness start only after it, so loading is never killed
                // the timeouts fit the engine's health endpoint (SGLang's generates a token); a period is never
                // shorter than its timeout
                .withStartupProbe(probe(engine.readyPath(), STARTUP_PERIOD_SECONDS, startupFailures, timeout))
                .withReadinessProbe(probe(engine.readyPath(), Math.max(10, timeout), 3, timeout))
                .withLivenessProbe(probe(engine.livePath(), Math.max(20, timeout), 3, Math.max(10, timeout)))
                .withTerminationMessagePolicy("FallbackToLogsOnError")
                .withNewSecurityContext()
                .withAllowPrivilegeEscalation(false)
                .withNewCapabilities()
                .withDrop("ALL")
                .endCapabilities()
                .endSecurityContext()
                .addNewVolumeMount()
                .withName("dshm")
                .withMountPath("/dev/shm")
                .endVolumeMount()
                .addNewVolumeMount()
                .withName("tmp")
                .withMountPath("/tmp")
                .endVolumeMount()
                .addAllToVolumeMounts(modelMounts)
                .build();

        List<Toleration> tolerations = spec.placement.tolerations.stream()
                .map(t -> new TolerationBuilder(t).build())
                .toList();
        Map<String, String> labels = commonLabels(name);
        return new PodTemplateSpecBuilder()
                .withNewMetadata()
                .withLabels(labels)
                .withAnnotations(metricsAnnotations(port, profile.metricsPath()))
                .endMetadata()
                .withNewSpec()
                // service links would put FOO_PORT variables into the engine's environment (vLLM reads VLLM_PORT)
                .withEnableServiceLinks(false)
                .withNewSecurityContext()
                .withRunAsNonRoot(true)
                .withRunAsUser(uid)
                .withRunAsGroup(uid)
                .withFsGroup(uid)
                .withNewSeccompProfile()
                .withType("RuntimeDefault")
                .endSeccompProfile()
                .endSecurityContext()
                .withInitContainers(inits)
                .withContainers(container)
                .addAllToVolumes(modelVolumes)
                .addNewVolume()
                .withName("dshm")
                .withNewEmptyDir()
                .withMedium("Memory")
                .withSizeLimit(new Quantity(settings.pod().shmSizeLimit()))
                .endEmptyDir()
                .endVolume()
                .addNewVolume()
                .withName("tmp")
                .withNewEmptyDir()
                .endEmptyDir()
                .endVolume()
                .withTolerations(tolerations)
                .withNewAffinity()
                .withNewNodeAffinity()
                .withNewRequiredDuringSchedulingIgnoredDuringExecution()
                .addNewNodeSelectorTerm()
                .withMatchExpressions(plan.placement().affinityRequirements())
                .endNodeSelectorTerm()
                .endRequiredDuringSchedulingIgnoredDuringExecution()
                .endNodeAffinity()
                .endAffinity()
                .endSpec()
                .build();
    }

    /** Where to scrape a serving pod: its serving port and the engine's metrics path. */
    static Map<String, String> metricsAnnotations(int port, String path) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(ANNOTATION_SCRAPE, "true");
        m.put(ANNOTATION_PORT, Integer.toString(port));
        m.put(ANNOTATION_PATH, path);
        return m;
    }

    /**
     * Startup probe failures (period {@value #STARTUP_PERIOD_SECONDS} s) that cover the longer of the progress deadline
     * and {@link #loadSeconds}: a 140 GB model gets about 28 minutes even under the default 15-minute deadline.
     */
    static int startupFailureThreshold(int progressDeadlineSeconds, long weightBytes) {
        long seconds = Math.max(progressDeadlineSeconds, loadSeconds(weightBytes));
        return (int) Math.max(1, (seconds + STARTUP_PERIOD_SECONDS - 1) / STARTUP_PERIOD_SECONDS);
    }

    /**
     * Budget for loading the weights from the pod's volume and starting: {@value #LOAD_BASE_SECONDS} s (CUDA context,
     * communicator, warm-up) plus the weight bytes at {@value #LOAD_BYTES_PER_SECOND} B/s, a slow network volume.
     */
    static long loadSeconds(long weightBytes) {
        return LOAD_BASE_SECONDS + weightBytes / LOAD_BYTES_PER_SECOND;
    }

    private static Probe probe(String path, int period, int failures, int timeout) {
        return new ProbeBuilder()
                .withNewHttpGet()
                .withPath(path)
                .withPort(new IntOrString(PORT_NAME))
                .endHttpGet()
                .withPeriodSeconds(period)
                .withFailureThreshold(failures)
                .withTimeoutSeconds(timeout)
                .build();
    }

    /** First 10 hex digits of the sha256 of the template's JSON (fabric8 serialization, fixed field order). */
    public static String revision(PodTemplateSpec template) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(Serialization.asJson(template).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest).substring(0, 10);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java runtime", e);
        }
    }
}
