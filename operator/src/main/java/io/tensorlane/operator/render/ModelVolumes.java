package io.tensorlane.operator.render;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.modelfacts.ModelSource;
import io.tensorlane.operator.TensorlaneConfig;
import java.util.ArrayList;
import java.util.List;

/**
 * How the model reaches the pod, per source: hf:// → a volume (emptyDir sized from the weights, or the user's PVC)
 * filled by an init container running the runtime image's {@code fetch-model}, pinned to the commit read by
 * inspection; pvc:// → the claim, read-only; file:// → a read-only hostPath; oci:// → an image volume (Kubernetes
 * 1.31+). Every engine mounts it read-only at {@value #MOUNT} and is pointed at {@link Mount#modelDir()}. A draft model
 * (spec.serving.speculative.draftModel) reaches the pod the same way, under names of its own ({@link Names#DRAFT}: the
 * volume {@value #DRAFT_VOLUME} at {@value #DRAFT_MOUNT}, the download step {@value #DRAFT_INIT_CONTAINER}).
 */
public final class ModelVolumes {
    public static final String VOLUME = "model";
    public static final String MOUNT = "/models";
    public static final String INIT_CONTAINER = "fetch-model";
    /** Env of the download step: the Hub token (from the Secret) and a non-default Hub endpoint. */
    public static final String HF_TOKEN = "HF_TOKEN";

    public static final String HF_ENDPOINT = "HF_ENDPOINT";

    public static final String DRAFT_VOLUME = "draft-model";
    public static final String DRAFT_MOUNT = "/draft-model";
    public static final String DRAFT_INIT_CONTAINER = "fetch-draft-model";

    /** The pod volume, its mount path and the download step's container name of one model. */
    public record Names(String volume, String mount, String initContainer) {
        /** spec.model's. */
        public static final Names MODEL = new Names(VOLUME, MOUNT, INIT_CONTAINER);
        /** spec.serving.speculative.draftModel's. */
        public static final Names DRAFT = new Names(DRAFT_VOLUME, DRAFT_MOUNT, DRAFT_INIT_CONTAINER);
    }

    private static final long GIB = 1L << 30;

    private ModelVolumes() {}

    /**
     * @param volume the pod volume named {@value #VOLUME}
     * @param init the download step, or null when the source is mounted as it is
     * @param engineMount the engine's read-only mount
     * @param modelDir the directory the engine loads (TENSORLANE_MODEL_DIR, --model-path)
     * @param source the source URI the pod uses (hf:// pinned to the commit)
     */
    public record Mount(Volume volume, Container init, VolumeMount engineMount, String modelDir, String source) {}

    /**
     * @param spec the spec with defaults and model facts filled in (geometry, weightBytes)
     * @param model status.model (the commit for hf://), or null for sources that are not inspected
     */
    public static Mount of(InferenceDeploymentSpec spec, ModelStatus model, TensorlaneConfig settings) {
        return of(spec.model, model, settings, Names.MODEL);
    }

    /**
     * The draft model's mount ({@link Names#DRAFT}), or null without one.
     *
     * @param spec the spec with defaults and the draft's facts filled in
     * @param draft status.draftModel (the commit for hf://), or null for sources that are not inspected
     */
    public static Mount draft(InferenceDeploymentSpec spec, ModelStatus draft, TensorlaneConfig settings) {
        ModelSpec d = io.tensorlane.operator.plan.Speculation.draftModel(spec);
        return d == null ? null : of(d, draft, settings, Names.DRAFT);
    }

    /**
     * @param m the model spec (spec.model, or the draft's), its weightBytes filled in
     * @param model what was read of it (the commit for hf://), or null
     * @param names the pod's names for this model
     */
    public static Mount of(ModelSpec m, ModelStatus model, TensorlaneConfig settings, Names names) {
        ModelSource src = ModelSource.of(m.source, m.name);
        String volumeName = names.volume();
        String mount = names.mount();
        VolumeMount ro = new VolumeMountBuilder()
                .withName(volumeName)
                .withMountPath(mount)
                .withReadOnly(true)
                .build();
        return switch (src.scheme()) {
            case HF -> hub(m, src, model, settings, ro, names);
            case PVC ->
                new Mount(
                        new VolumeBuilder()
                                .withName(volumeName)
                                .withNewPersistentVolumeClaim()
                                .withClaimName(src.location())
                                .withReadOnly(true)
                                .endPersistentVolumeClaim()
                                .build(),
                        null,
                        ro,
                        src.path().isEmpty() ? mount : mount + "/" + src.path(),
                        src.uri());
            case FILE ->
                new Mount(
                        new VolumeBuilder()
                                .withName(volumeName)
                                .withNewHostPath()
                                .withPath(src.location())
                                .withType("Directory")
                                .endHostPath()
                                .build(),
                        null,
                        ro,
                        mount,
                        src.uri());
            case OCI ->
                new Mount(
                        new VolumeBuilder()
                                .withName(volumeName)
                                .withNewImage()
                                .withReference(src.location())
                                .withPullPolicy("IfNotPresent")
                                .endImage()
                                .build(),
                        null,
                        ro,
                        mount,
                        src.uri());
        };
    }

    private static Mount hub(
            ModelSpec m, ModelSource src, ModelStatus model, TensorlaneConfig settings, VolumeMount ro, Names names) {
        String volumeName = names.volume();
        String mount = names.mount();
        String revision = model != null && model.revision != null ? model.revision : src.revision();
        ModelSource pinned = src.pinned(revision);
        String dir = mount + "/" + src.location().replace("/", "--") + "--" + revision.replace("/", "-");
        Volume volume;
        if (m.storage != null && m.storage.claimName != null && !m.storage.claimName.isBlank()) {
            volume = new VolumeBuilder()
                    .withName(volumeName)
                    .withNewPersistentVolumeClaim()
                    .withClaimName(m.storage.claimName)
                    .endPersistentVolumeClaim()
                    .build();
        } else {
            String size = m.storage != null && m.storage.sizeLimit != null
                    ? m.storage.sizeLimit
                    : emptyDirSize(m.weightBytes == null ? 0 : m.weightBytes);
            volume = new VolumeBuilder()
                    .withName(volumeName)
                    .withNewEmptyDir()
                    .withSizeLimit(new Quantity(size))
                    .endEmptyDir()
                    .build();
        }
        List<EnvVar> env = new ArrayList<>();
        if (m.tokenSecret != null && m.tokenSecret.name != null) {
            env.add(new EnvVarBuilder()
                    .withName(HF_TOKEN)
                    .withNewValueFrom()
                    .withNewSecretKeyRef()
                    .withName(m.tokenSecret.name)
                    .withKey(m.tokenSecret.key == null ? "token" : m.tokenSecret.key)
                    .endSecretKeyRef()
                    .endValueFrom()
                    .build());
        }
        if (!TensorlaneConfig.publicHub(settings)) {
            env.add(new EnvVarBuilder()
                    .withName(HF_ENDPOINT)
                    .withValue(TensorlaneConfig.hub(settings))
                    .build());
        }
        Container init = new ContainerBuilder()
                .withName(names.initContainer())
                .withImage(settings.runtimeImage())
                .withArgs("fetch-model", "--source", pinned.uri(), "--dest", dir)
                .withEnv(env)
                .withTerminationMessagePolicy("FallbackToLogsOnError")
                .withNewSecurityContext()
                .withAllowPrivilegeEscalation(false)
                .withNewCapabilities()
                .withDrop("ALL")
                .endCapabilities()
                .endSecurityContext()
                .addNewVolumeMount()
                .withName(volumeName)
                .withMountPath(mount)
                .endVolumeMount()
                .addNewVolumeMount()
                .withName("tmp")
                .withMountPath("/tmp")
                .endVolumeMount()
                .build();
        return new Mount(volume, init, ro, dir, pinned.uri());
    }

    /** The weights plus 5% and 1 GiB for tokenizer and config files, in whole GiB. */
    static String emptyDirSize(long weightBytes) {
        long bytes = weightBytes + weightBytes / 20 + GIB;
        return ((bytes + GIB - 1) / GIB) + "Gi";
    }
}
