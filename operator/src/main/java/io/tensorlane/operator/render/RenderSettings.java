package io.tensorlane.operator.render;

/**
 * Operator-level rendering knobs. Image names are set in one place, the parent pom properties
 * {@code tensorlane.image.registry} and {@code tensorlane.image.tag}; the operator receives them through its
 * configuration and builds settings with {@link #of(String, String)}.
 *
 * @param runtimeImage image of the Tensorlane runtime (engine type Tensorlane without spec.engine.image)
 * @param runAsUser non-root UID/GID the engine container runs as
 * @param shmSizeLimit size limit of the {@code /dev/shm} memory emptyDir (a quantity, e.g. "16Gi")
 */
public record RenderSettings(String runtimeImage, long runAsUser, String shmSizeLimit) {
  /** Name of the runtime image repository under the registry. */
  public static final String RUNTIME_IMAGE_NAME = "tensorlane-runtime";

  /** Settings from the pom's image registry and tag: {@code <registry>/tensorlane-runtime:<tag>}. */
  public static RenderSettings of(String registry, String tag) {
    return new RenderSettings(registry + "/" + RUNTIME_IMAGE_NAME + ":" + tag, 1000L, "16Gi");
  }

  /**
   * The same settings with another runtime image, e.g. the operator's {@code TENSORLANE_RUNTIME_IMAGE} (kustomize
   * copies the deployed probe image there); blank keeps this one.
   */
  public RenderSettings withRuntimeImage(String image) {
    return image == null || image.isBlank() ? this : new RenderSettings(image, runAsUser, shmSizeLimit);
  }
}
