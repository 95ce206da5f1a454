package io.tensorlane.operator.render;

/**
 * Operator-level rendering knobs. Image names are set in one place, the parent pom properties
 * {@code tensorlane.image.registry} and {@code tensorlane.image.tag}; the operator receives them through its
 * configuration and builds settings with {@link #of(String, String)}.
 *
 * @param runtimeImage image of the Tensorlane runtime (engine type Tensorlane without spec.engine.image; also the
 *     image of the hf:// download step for every engine)
 * @param runAsUser non-root UID/GID the engine container runs as
 * @param shmSizeLimit size limit of the {@code /dev/shm} memory emptyDir (a quantity, e.g. "16Gi")
 * @param hubEndpoint base URL of the Hugging Face Hub the operator inspects and the download step reads (given to the
 *     download step as HF_ENDPOINT when it is not {@link #DEFAULT_HUB_ENDPOINT})
 */
public record RenderSettings(String runtimeImage, long runAsUser, String shmSizeLimit, String hubEndpoint) {
  /** Name of the runtime image repository under the registry. */
  public static final String RUNTIME_IMAGE_NAME = "tensorlane-runtime";
  /** The public Hub (what the runtime's fetch-model uses without HF_ENDPOINT). */
  public static final String DEFAULT_HUB_ENDPOINT = "https://huggingface.co";

  /** Settings from the pom's image registry and tag: {@code <registry>/tensorlane-runtime:<tag>}. */
  public static RenderSettings of(String registry, String tag) {
    return new RenderSettings(registry + "/" + RUNTIME_IMAGE_NAME + ":" + tag, 1000L, "16Gi", DEFAULT_HUB_ENDPOINT);
  }

  /**
   * The same settings with another runtime image, e.g. the operator's {@code TENSORLANE_RUNTIME_IMAGE} (kustomize
   * copies the deployed probe image there); blank keeps this one.
   */
  public RenderSettings withRuntimeImage(String image) {
    return image == null || image.isBlank() ? this : new RenderSettings(image, runAsUser, shmSizeLimit, hubEndpoint);
  }

  /** The same settings with another Hub endpoint (blank keeps this one). */
  public RenderSettings withHubEndpoint(String endpoint) {
    return endpoint == null || endpoint.isBlank() ? this
        : new RenderSettings(runtimeImage, runAsUser, shmSizeLimit, endpoint.replaceAll("/+$", ""));
  }

  public boolean hubEndpointIsDefault() {
    return hubEndpoint == null || DEFAULT_HUB_ENDPOINT.equals(hubEndpoint.replaceAll("/+$", ""));
  }
}
