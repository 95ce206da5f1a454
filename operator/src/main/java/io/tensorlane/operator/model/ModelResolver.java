package io.tensorlane.operator.model;

import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.modelfacts.ModelFactsException;
import io.tensorlane.modelfacts.ModelSource;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.model.ModelInspector.Inspection;
import io.tensorlane.operator.plan.SpecValidator;
import io.tensorlane.operator.plan.Speculation;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Finds out what the model of an effective spec is, for the reconciler: reuses status.model while the source is
 * unchanged (the revision stays pinned, nothing is read). Otherwise, for hf:// it asks the {@link InspectionCache}
 * (one read per source + revision + credential, off the reconcile thread); for pvc://, file:// and oci:// it runs the
 * inspection Job ({@link InspectionJobs}; one per source and namespace) and reads its result. Calls made on the
 * reconcile thread while a model is not known yet: a Secret GET (tokenSecret), the Job GET/create and its pods' list,
 * and once the server version (oci://).
 */
public final class ModelResolver {
    /** How soon a deployment whose model is being read is looked at again. */
    public static final Duration PENDING_RECHECK = Duration.ofSeconds(1);
    /** How soon a deployment whose model could not be read is looked at again (a fixed Secret, a model made public). */
    public static final Duration FAILED_RECHECK = Duration.ofSeconds(60);

    private final InspectionCache cache;
    private final ModelInspector inspector;
    private final TensorlaneConfig config;
    private final Clock clock;
    private volatile Boolean imageVolumes;

    /**
     * @param config the runtime image and UID of inspection Jobs (pvc://, file://, oci://)
     */
    public ModelResolver(InspectionCache cache, ModelInspector inspector, TensorlaneConfig config, Clock clock) {
        this.cache = cache;
        this.inspector = inspector;
        this.config = config;
        this.clock = clock;
    }

    /**
     * @param primary the InferenceDeployment (namespace; owner of an inspection Job)
     * @param effective the spec to resolve the model of (the user's, or a rollback target)
     * @param previous status.model as it is now
     */
    public ModelResolution resolve(
            InferenceDeployment primary,
            InferenceDeploymentSpec effective,
            ModelStatus previous,
            KubernetesClient client) {
        return resolve(primary, effective, effective == null ? null : effective.model, "spec.model", previous, client);
    }

    /**
     * The draft model of {@code effective} (spec.serving.speculative.draftModel with method draft), found out as the
     * target is (the same cache, the same inspection Jobs); null without one.
     *
     * @param previous status.draftModel as it is now
     */
    public ModelResolution resolveDraft(
            InferenceDeployment primary,
            InferenceDeploymentSpec effective,
            ModelStatus previous,
            KubernetesClient client) {
        ModelSpec d = Speculation.draftModel(effective);
        return d == null
                ? null
                : resolve(primary, effective, d, "spec.serving.speculative.draftModel", previous, client);
    }

    private ModelResolution resolve(
            InferenceDeployment primary,
            InferenceDeploymentSpec effective,
            ModelSpec m,
            String field,
            ModelStatus previous,
            KubernetesClient client) {
        String namespace = primary.getMetadata().getNamespace();
        if (m == null || m.name == null) {
            return ModelResolution.failed(null, "InvalidSource", field + ".name is required");
        }
        ModelSource source;
        try {
            source = ModelSource.of(m.source, m.name);
        } catch (ModelFactsException e) {
            return ModelResolution.failed(null, "InvalidSource", field + ".source: " + e.getMessage());
        }
        boolean overridden = m.geometry != null && m.weightBytes != null;
        if (source.scheme() == ModelSource.Scheme.HF) {
            return hub(source, m, field, namespace, previous, client);
        }
        if (source.scheme() == ModelSource.Scheme.OCI && !imageVolumes(client)) {
            return ModelResolution.failed(
                    source,
                    "ImageVolumeUnsupported",
                    "oci:// sources are mounted as image volumes, "
                            + "which need Kubernetes 1.31 or later with the ImageVolume feature; this API server is "
                            + version(client) + ". Use hf://, pvc:// or file://");
        }
        if (overridden) {
            return ModelResolution.notNeeded(source);
        }
        if (previous != null && Objects.equals(previous.source, source.uri()) && previous.revision != null) {
            return ModelResolution.known(source, previous);
        }
        return job(primary, SpecValidator.withDefaults(effective), m, source, client);
    }

    /** pvc://, file://, oci://: the inspection Job's result, or the Job started (or retried after a failure). */
    private ModelResolution job(
            InferenceDeployment primary,
            InferenceDeploymentSpec spec,
            ModelSpec model,
            ModelSource source,
            KubernetesClient client) {
        String ns = primary.getMetadata().getNamespace();
        String name = InspectionJobs.name(source);
        String running = "running inspect-model on " + source.uri() + " in Job " + name;
        try {
            Job job = client.batch().v1().jobs().inNamespace(ns).withName(name).get();
            if (job == null) {
                try {
                    client.resource(InspectionJobs.job(primary, spec, model, source, config))
                            .create();
                } catch (KubernetesClientException e) {
                    if (e.getCode() != 409) {
                        throw e;
                    }
                }
                return ModelResolution.pending(source, running);
            }
            List<Pod> pods = client.pods()
                    .inNamespace(ns)
                    .withLabel(InspectionJobs.LABEL, InspectionJobs.hash(source))
                    .list()
                    .getItems();
            Optional<ModelResolution> r = InspectionJobs.result(source, job, pods);
            if (r.isPresent()
                    && r.get().state() == ModelResolution.State.FAILED
                    && InspectionJobs.finishedAt(job, pods)
                            .map(t -> t.plus(FAILED_RECHECK).isBefore(clock.instant()))
                            .orElse(false)) {
                // retry a failure once it is older than the recheck interval: the claim may have been filled meanwhile
                client.resource(job)
                        .withPropagationPolicy(DeletionPropagation.BACKGROUND)
                        .delete();
            }
            return r.orElseGet(() -> ModelResolution.pending(source, running));
        } catch (KubernetesClientException e) {
            return ModelResolution.pending(
                    source, running + " (the API server answered " + e.getCode() + "; retrying)");
        }
    }

    private ModelResolution hub(
            ModelSource source,
            ModelSpec m,
            String field,
            String namespace,
            ModelStatus previous,
            KubernetesClient client) {
        if (previous != null && Objects.equals(previous.source, source.uri()) && previous.revision != null) {
            return ModelResolution.known(source, previous);
        }
        if (m.geometry != null && m.weightBytes != null) {
            // everything the plan needs is in the spec: no Hub call (air-gapped clusters); the download takes the
            // revision
            // as written (pin it with @<commit>)
            return ModelResolution.notNeeded(source);
        }
        String token = null;
        if (m.tokenSecret != null && m.tokenSecret.name != null) {
            String key = m.tokenSecret.key == null || m.tokenSecret.key.isBlank() ? "token" : m.tokenSecret.key;
            String where = "Secret " + namespace + "/" + m.tokenSecret.name + " (" + field + ".tokenSecret)";
            Secret s;
            try {
                s = client.secrets()
                        .inNamespace(namespace)
                        .withName(m.tokenSecret.name)
                        .get();
            } catch (KubernetesClientException e) {
                return ModelResolution.failed(
                        source, "SecretUnreadable", "cannot read " + where + ": HTTP " + e.getCode());
            }
            if (s == null) {
                return ModelResolution.failed(source, "SecretNotFound", where + " does not exist");
            }
            String b64 = s.getData() == null ? null : s.getData().get(key);
            if (b64 == null || b64.isBlank()) {
                return ModelResolution.failed(source, "SecretNotFound", where + " has no key " + key);
            }
            token = new String(Base64.getDecoder().decode(b64), StandardCharsets.UTF_8).trim();
        }
        String t = token;
        Inspection r = cache.get(InspectionCache.Key.of(source.uri(), token), () -> inspector.inspect(source, t));
        if (r == null) {
            return ModelResolution.pending(
                    source, "reading config.json and the safetensors headers of " + source.uri());
        }
        if (r instanceof Inspection.Known k) {
            return ModelResolution.known(source, k.status());
        }
        Inspection.Failed f = (Inspection.Failed) r;
        return f.retryable()
                ? ModelResolution.pending(source, "reading " + source.uri() + " again shortly: " + f.message())
                : ModelResolution.failed(source, f.reason(), f.message());
    }

    private boolean imageVolumes(KubernetesClient client) {
        Boolean b = imageVolumes;
        if (b == null) {
            int[] v = parseVersion(version(client));
            b = v[0] > 1 || v[0] == 1 && v[1] >= 31;
            imageVolumes = b;
        }
        return b;
    }

    private static String version(KubernetesClient client) {
        try {
            var v = client.getKubernetesVersion();
            return v.getMajor() + "." + v.getMinor();
        } catch (KubernetesClientException e) {
            return "unknown";
        }
    }

    /** "1.20" → {1, 20}; "1.31+" → {1, 31}; unparsable → {0, 0}. */
    static int[] parseVersion(String v) {
        String[] p = v.split("\\.");
        try {
            return new int[] {Integer.parseInt(p[0].replaceAll("\\D", "")), Integer.parseInt(p[1].replaceAll("\\D", ""))
            };
        } catch (RuntimeException e) {
            return new int[] {0, 0};
        }
    }
}
