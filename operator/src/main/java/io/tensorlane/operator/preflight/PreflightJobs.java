package io.tensorlane.operator.preflight;

import io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.engine.EngineProfiles;
import io.tensorlane.operator.render.ChildNames;
import io.tensorlane.operator.render.Renderer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The preflight Job for one node: the runtime image's {@code preflight} command (selftest + a short bench, result as
 * JSON in the termination message, see {@link PreflightMessage}) on exactly that node ({@code matchFields
 * metadata.name}, through the scheduler so GPU accounting holds), {@code nvidia.com/gpu} = the deployment's tensor
 * parallelism, {@code backoffLimit 0}, {@code activeDeadlineSeconds} so it can never hang, a TTL, and an owner
 * reference to the InferenceDeployment (deleted with it). Pure.
 */
public final class PreflightJobs {
    public static final String CONTAINER = "preflight";
    public static final String COMPONENT_LABEL = "app.kubernetes.io/component";
    public static final String COMPONENT = "preflight";
    public static final String NODE_ANNOTATION = "tensorlane.io/preflight-node";
    public static final String WORLD_SIZE_ANNOTATION = "tensorlane.io/preflight-world-size";
    /** The runtime CLI's subcommand the Job runs. */
    public static final String COMMAND = "preflight";

    private PreflightJobs() {}

    /** {@code <deployment>-preflight-<hash of node and world size>}, at most 63 characters (the job-name label). */
    public static String name(String deployment, String node, int worldSize) {
        String base = deployment.length() > 40 ? deployment.substring(0, 40) : deployment;
        base = base.replaceAll("[-.]+$", "");
        return base + "-preflight-" + hash(node + "/" + worldSize);
    }

    /** The Job that measures {@code node} with {@code worldSize} GPUs for {@code owner}. */
    public static Job job(InferenceDeployment owner, String node, int worldSize, TensorlaneConfig s) {
        String name = name(owner.getMetadata().getName(), node, worldSize);
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(Renderer.LABEL_NAME, "tensorlane");
        labels.put(COMPONENT_LABEL, COMPONENT);
        labels.put(Renderer.LABEL_INSTANCE, ChildNames.of(owner.getMetadata().getName()));
        labels.put(Renderer.LABEL_MANAGED_BY, "tensorlane-operator");
        var spec = owner.getSpec();
        // the engine's own image when the preflight measures that engine (a custom build of the runtime)
        String image = EngineProfiles.preflightImage(spec, s.runtimeImage());
        long maxBytes = Math.min(
                s.preflight().benchMaxBytes(),
                spec.allreduce == null || spec.allreduce.maxMessageBytes == null
                        ? s.preflight().benchMaxBytes()
                        : spec.allreduce.maxMessageBytes);
        // the command's own budget stays inside the Job's deadline so it reports a timeout itself when it can
        long selfTimeout = Math.max(1, s.preflight().deadline().toSeconds() * 9 / 10);
        List<Toleration> tolerations = new ArrayList<>();
        if (spec.placement != null && spec.placement.tolerations != null) {
            tolerations.addAll(spec.placement.tolerations);
        }
        tolerations.add(new TolerationBuilder()
                .withKey(Renderer.GPU_RESOURCE)
                .withOperator("Exists")
                .withEffect("NoSchedule")
                .build());
        return new JobBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(owner.getMetadata().getNamespace())
                .withLabels(labels)
                .withAnnotations(Map.of(NODE_ANNOTATION, node, WORLD_SIZE_ANNOTATION, Integer.toString(worldSize)))
                .withOwnerReferences(new OwnerReferenceBuilder()
                        .withApiVersion(owner.getApiVersion())
                        .withKind(owner.getKind())
                        .withName(owner.getMetadata().getName())
                        .withUid(owner.getMetadata().getUid())
                        .withController(true)
                        .withBlockOwnerDeletion(true)
                        .build())
                .endMetadata()
                .withNewSpec()
                .withBackoffLimit(0)
                .withActiveDeadlineSeconds(s.preflight().deadline().toSeconds())
                .withTtlSecondsAfterFinished(
                        (int) Math.min(Integer.MAX_VALUE, s.preflight().ttl().toSeconds()))
                .withNewTemplate()
                .withNewMetadata()
                .withLabels(labels)
                .endMetadata()
                .withNewSpec()
                .withRestartPolicy("Never")
                .withAutomountServiceAccountToken(false)
                .withTolerations(tolerations)
                .withNewAffinity()
                .withNewNodeAffinity()
                .withNewRequiredDuringSchedulingIgnoredDuringExecution()
                .addNewNodeSelectorTerm()
                .withMatchFields(new NodeSelectorRequirementBuilder()
                        .withKey("metadata.name")
                        .withOperator("In")
                        .withValues(node)
                        .build())
                .endNodeSelectorTerm()
                .endRequiredDuringSchedulingIgnoredDuringExecution()
                .endNodeAffinity()
                .endAffinity()
                .withNewSecurityContext()
                .withRunAsNonRoot(true)
                .withRunAsUser(s.pod().runAsUser())
                .withRunAsGroup(s.pod().runAsUser())
                .endSecurityContext()
                .addNewContainer()
                .withName(CONTAINER)
                .withImage(image)
                .withArgs(
                        COMMAND,
                        "--world-size",
                        Integer.toString(worldSize),
                        "--bench-max-bytes",
                        Long.toString(maxBytes),
                        "--timeout-seconds",
                        Long.toString(selfTimeout))
                .withNewResources()
                .addToLimits(Renderer.GPU_RESOURCE, new Quantity(Integer.toString(worldSize)))
                .addToRequests(Renderer.GPU_RESOURCE, new Quantity(Integer.toString(worldSize)))
                .endResources()
                .withTerminationMessagePath("/dev/termination-log")
                // a crash that writes no JSON still leaves the tail of its log as the message
                .withTerminationMessagePolicy("FallbackToLogsOnError")
                .withNewSecurityContext()
                .withAllowPrivilegeEscalation(false)
                .withNewCapabilities()
                .addToDrop("ALL")
                .endCapabilities()
                .endSecurityContext()
                .endContainer()
                .endSpec()
                .endTemplate()
                .endSpec()
                .build();
    }

    /**
     * True when {@code pod} is a preflight pod of InferenceDeployment {@code namespace/deployment}: its GPUs are that
     * deployment's own for the planner (it measures the node the deployment is about to use), not another workload's.
     */
    public static boolean isPreflightPodOf(
            io.fabric8.kubernetes.api.model.Pod pod, String namespace, String deployment) {
        Map<String, String> l = pod.getMetadata().getLabels();
        return l != null
                && namespace.equals(pod.getMetadata().getNamespace())
                && COMPONENT.equals(l.get(COMPONENT_LABEL))
                && ChildNames.of(deployment).equals(l.get(Renderer.LABEL_INSTANCE));
    }

    static String hash(String s) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 4);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
