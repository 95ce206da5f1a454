package io.tensorlane.operator.model;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.modelfacts.ModelSource;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.render.ModelVolumes;
import io.tensorlane.operator.render.Renderer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The inspection Job of a pvc://, file:// or oci:// source, and how its result is read; pure. The Job runs the
 * runtime image's {@code inspect-model} with the source mounted read-only exactly as the engine will mount it (same
 * volume, same placement tolerations and node selector), on no GPU; the facts come back as the container's
 * termination message (status.model JSON), a failure as {@code <Reason>: <message>}. One Job per source and
 * namespace, shared by every deployment of that source there (its name is a hash of the source).
 */
public final class InspectionJobs {
    /** On the Job and its pod: the hash of the source. */
    public static final String LABEL = "tensorlane.io/inspect-model";

    public static final String CONTAINER = "inspect-model";
    static final long DEADLINE_SECONDS = 300;
    static final int TTL_SECONDS = 3600;

    private InspectionJobs() {}

    /** First 10 hex digits of sha256(source URI). */
    public static String hash(ModelSource source) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256")
                            .digest(source.uri().getBytes(StandardCharsets.UTF_8)))
                    .substring(0, 10);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java runtime", e);
        }
    }

    public static String name(ModelSource source) {
        return "tensorlane-inspect-" + hash(source);
    }

    /** The Job for {@code source}, owned by {@code owner}. */
    public static Job job(
            InferenceDeployment owner, InferenceDeploymentSpec spec, ModelSource source, TensorlaneConfig rs) {
        return job(owner, spec, spec.model, source, rs);
    }

    /**
     * The Job for {@code source}, the source of {@code model} (spec.model, or the draft model of its speculation),
     * mounted as spec.model's is; placed by {@code spec}'s placement.
     */
    public static Job job(
            InferenceDeployment owner,
            InferenceDeploymentSpec spec,
            io.tensorlane.api.v1alpha1.ModelSpec model,
            ModelSource source,
            TensorlaneConfig rs) {
        ModelVolumes.Mount mount = ModelVolumes.of(model, null, rs, ModelVolumes.Names.MODEL);
        long uid = rs.pod().runAsUser();
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(Renderer.LABEL_MANAGED_BY, Renderer.MANAGED_BY);
        labels.put(LABEL, hash(source));
        var container = new ContainerBuilder()
                .withName(CONTAINER)
                .withImage(rs.runtimeImage())
                .withArgs("inspect-model", "--dir", mount.modelDir(), "--source", source.uri())
                .withNewResources()
                .addToRequests("cpu", new Quantity("100m"))
                .addToRequests("memory", new Quantity("256Mi"))
                .addToLimits("memory", new Quantity("512Mi"))
                .endResources()
                .withNewSecurityContext()
                .withAllowPrivilegeEscalation(false)
                .withNewCapabilities()
                .withDrop("ALL")
                .endCapabilities()
                .endSecurityContext()
                .addToVolumeMounts(mount.engineMount())
                .addNewVolumeMount()
                .withName("tmp")
                .withMountPath("/tmp")
                .endVolumeMount()
                .build();
        return new JobBuilder()
                .withNewMetadata()
                .withName(name(source))
                .withNamespace(owner.getMetadata().getNamespace())
                .withLabels(labels)
                .withOwnerReferences(new OwnerReferenceBuilder()
                        .withApiVersion(owner.getApiVersion())
                        .withKind(owner.getKind())
                        .withName(owner.getMetadata().getName())
                        .withUid(owner.getMetadata().getUid())
                        .build())
                .endMetadata()
                .withNewSpec()
                .withBackoffLimit(0)
                .withActiveDeadlineSeconds(DEADLINE_SECONDS)
                .withTtlSecondsAfterFinished(TTL_SECONDS)
                .withNewTemplate()
                .withNewMetadata()
                .withLabels(labels)
                .endMetadata()
                .withNewSpec()
                .withRestartPolicy("Never")
                .withEnableServiceLinks(false)
                .withNewSecurityContext()
                .withRunAsNonRoot(true)
                .withRunAsUser(uid)
                .withRunAsGroup(uid)
                .withFsGroup(uid)
                .endSecurityContext()
                .withTolerations(spec.placement == null ? List.of() : spec.placement.tolerations)
                .withNodeSelector(spec.placement == null ? Map.of() : spec.placement.nodeSelector)
                .withContainers(container)
                .addToVolumes(mount.volume())
                .addNewVolume()
                .withName("tmp")
                .withNewEmptyDir()
                .endEmptyDir()
                .endVolume()
                .endSpec()
                .endTemplate()
                .endSpec()
                .build();
    }

    /**
     * What the Job says: Known with the facts, Failed with a reason and message, or empty while it runs.
     *
     * @param pods the Job's pods (label {@link #LABEL})
     */
    public static Optional<ModelResolution> result(ModelSource source, Job job, List<Pod> pods) {
        String name = job.getMetadata().getName();
        Optional<ContainerStateTerminated> done = pods.stream()
                .sorted(Comparator.comparing((Pod p) -> p.getMetadata().getCreationTimestamp() == null
                                ? ""
                                : p.getMetadata().getCreationTimestamp())
                        .reversed())
                .flatMap(p -> p.getStatus() == null || p.getStatus().getContainerStatuses() == null
                        ? java.util.stream.Stream.empty()
                        : p.getStatus().getContainerStatuses().stream())
                .filter(cs -> CONTAINER.equals(cs.getName()))
                .map(ContainerStatus::getState)
                .filter(s -> s != null && s.getTerminated() != null)
                .map(s -> s.getTerminated())
                .findFirst();
        if (done.isPresent()) {
            ContainerStateTerminated t = done.get();
            String msg = t.getMessage() == null ? "" : t.getMessage().trim();
            if (t.getExitCode() != null && t.getExitCode() == 0) {
                try {
                    ModelStatus s = Serialization.unmarshal(msg, ModelStatus.class);
                    if (s == null || s.geometry == null || s.weightBytes == null || s.architecture == null) {
                        throw new IllegalArgumentException("no architecture, geometry or weightBytes");
                    }
                    s.source = source.uri();
                    return Optional.of(ModelResolution.known(source, s));
                } catch (RuntimeException e) {
                    return Optional.of(ModelResolution.failed(
                            source,
                            "InvalidModel",
                            "the inspection Job " + name + " succeeded but its result is not readable: "
                                    + abbreviate(msg)));
                }
            }
            int colon = msg.indexOf(": ");
            String reason = colon > 0 && msg.substring(0, colon).matches("[A-Z][A-Za-z]+")
                    ? msg.substring(0, colon)
                    : "InspectionFailed";
            String text = reason.equals("InspectionFailed")
                    ? "inspect-model exited " + t.getExitCode() + " in Job " + name
                            + (msg.isEmpty() ? " (" + t.getReason() + ")" : ": " + abbreviate(msg))
                    : msg.substring(colon + 2);
            return Optional.of(ModelResolution.failed(source, reason, text));
        }
        if (job.getStatus() != null && job.getStatus().getConditions() != null) {
            var failed = job.getStatus().getConditions().stream()
                    .filter(c -> "Failed".equals(c.getType()) && "True".equals(c.getStatus()))
                    .findFirst();
            if (failed.isPresent()) {
                return Optional.of(
                        ModelResolution.failed(
                                source,
                                "InspectionFailed",
                                "the inspection Job " + name
                                        + " failed (" + failed.get().getReason() + ": "
                                        + failed.get().getMessage() + "); check that "
                                        + source.uri()
                                        + " can be mounted (the claim exists and is bound, the host path exists on the nodes)"));
            }
        }
        return Optional.empty();
    }

    /** When the Job finished (its pod's container terminated or its Failed condition), for retrying failures. */
    public static Optional<Instant> finishedAt(Job job, List<Pod> pods) {
        return pods.stream()
                .flatMap(p -> p.getStatus() == null || p.getStatus().getContainerStatuses() == null
                        ? java.util.stream.Stream.empty()
                        : p.getStatus().getContainerStatuses().stream())
                .map(ContainerStatus::getState)
                .filter(s -> s != null
                        && s.getTerminated() != null
                        && s.getTerminated().getFinishedAt() != null)
                .map(s -> Instant.parse(s.getTerminated().getFinishedAt()))
                .findFirst()
                .or(() -> job.getStatus() == null || job.getStatus().getConditions() == null
                        ? Optional.empty()
                        : job.getStatus().getConditions().stream()
                                .filter(c -> "Failed".equals(c.getType()) && c.getLastTransitionTime() != null)
                                .map(c -> Instant.parse(c.getLastTransitionTime()))
                                .findFirst());
    }

    private static String abbreviate(String s) {
        return s.length() > 300 ? s.substring(0, 300) + "…" : s;
    }
}
