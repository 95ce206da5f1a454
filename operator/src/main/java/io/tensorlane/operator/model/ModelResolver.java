package io.tensorlane.operator.model;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.modelfacts.ModelFactsException;
import io.tensorlane.modelfacts.ModelSource;
import io.tensorlane.operator.model.ModelInspector.Inspection;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Objects;

/**
 * Finds out what the model of an effective spec is, for the reconciler: reuses status.model while the source is
 * unchanged (the revision stays pinned, nothing is read), otherwise asks the {@link InspectionCache} (one read per
 * source + revision + credential, off the reconcile thread). The only calls made on the reconcile thread are a Secret
 * GET (when tokenSecret is set and the model is not known yet) and, once, the server version (for oci://).
 */
public final class ModelResolver {
  private final InspectionCache cache;
  private final ModelInspector inspector;
  private volatile Boolean imageVolumes;

  public ModelResolver(InspectionCache cache, ModelInspector inspector) {
    this.cache = cache;
    this.inspector = inspector;
  }

  public ModelResolution resolve(InferenceDeploymentSpec effective, String namespace, ModelStatus previous,
      KubernetesClient client) {
    ModelSpec m = effective == null ? null : effective.model;
    if (m == null || m.name == null) {
      return ModelResolution.failed(null, "InvalidSource", "spec.model.name is required");
    }
    ModelSource source;
    try {
      source = ModelSource.of(m.source, m.name);
    } catch (ModelFactsException e) {
      return ModelResolution.failed(null, "InvalidSource", "spec.model.source: " + e.getMessage());
    }
    boolean overridden = m.geometry != null && m.weightBytes != null;
    switch (source.scheme()) {
      case HF -> {
        return hub(source, m, namespace, previous, client);
      }
      case OCI -> {
        if (!imageVolumes(client)) {
          return ModelResolution.failed(source, "ImageVolumeUnsupported", "oci:// sources are mounted as image volumes, "
              + "which need Kubernetes 1.31 or later with the ImageVolume feature; this API server is "
              + version(client) + ". Use hf://, pvc:// or file://");
        }
        return overridden ? ModelResolution.notNeeded(source) : geometryRequired(source);
      }
      default -> {
        return overridden ? ModelResolution.notNeeded(source) : geometryRequired(source);
      }
    }
  }

  private static ModelResolution geometryRequired(ModelSource source) {
    return ModelResolution.failed(source, "GeometryRequired", "the operator reads config.json and the safetensors "
        + "headers from hf:// sources only; for " + source.scheme().prefix() + " set spec.model.geometry and "
        + "spec.model.weightBytes");
  }

  private ModelResolution hub(ModelSource source, ModelSpec m, String namespace, ModelStatus previous,
      KubernetesClient client) {
    if (previous != null && Objects.equals(previous.source, source.uri()) && previous.revision != null) {
      return ModelResolution.known(source, previous);
    }
    if (m.geometry != null && m.weightBytes != null) {
      // everything the plan needs is in the spec: no Hub call (air-gapped clusters); the download takes the revision
      // as written (pin it with @<commit>)
      return ModelResolution.notNeeded(source);
    }
    String token = null;
    if (m.tokenSecret != null && m.tokenSecret.name != null) {
      String key = m.tokenSecret.key == null || m.tokenSecret.key.isBlank() ? "token" : m.tokenSecret.key;
      String where = "Secret " + namespace + "/" + m.tokenSecret.name + " (spec.model.tokenSecret)";
      Secret s;
      try {
        s = client.secrets().inNamespace(namespace).withName(m.tokenSecret.name).get();
      } catch (KubernetesClientException e) {
        return ModelResolution.failed(source, "SecretUnreadable", "cannot read " + where + ": HTTP " + e.getCode());
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
      return ModelResolution.pending(source, "reading config.json and the safetensors headers of " + source.uri());
    }
    if (r instanceof Inspection.Known k) {
      return ModelResolution.known(source, k.status());
    }
    Inspection.Failed f = (Inspection.Failed) r;
    return f.retryable() ? ModelResolution.pending(source, "reading " + source.uri() + " again shortly: " + f.message())
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
      return new int[] {Integer.parseInt(p[0].replaceAll("\\D", "")), Integer.parseInt(p[1].replaceAll("\\D", ""))};
    } catch (RuntimeException e) {
      return new int[] {0, 0};
    }
  }
}
