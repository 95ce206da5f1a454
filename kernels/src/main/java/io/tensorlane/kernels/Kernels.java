package io.tensorlane.kernels;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** Where the compiled kernels live and what their entry points are called (mirrors tl_allreduce.cu). */
public final class Kernels {
  /** Classpath resource of the fatbin built by nvcc in this module's build. */
  public static final String FATBIN_RESOURCE = "io/tensorlane/kernels/tl_allreduce.fatbin";
  /** Real architectures (SASS) the fatbin carries. */
  public static final int[] SASS_ARCHES = {80, 86, 89, 90, 100, 120};
  /** Virtual architecture whose PTX the fatbin carries for newer GPUs. */
  public static final int PTX_ARCH = 90;
  /** The streaming-copy kernel the bench uses as a device copy ceiling. */
  public static final String COPY_KERNEL = "tl_copy16";

  private Kernels() {}

  /** Entry point of {@code algorithm} for {@code dtype}, e.g. {@code tl_allreduce_twostage_bf16}. */
  public static String allreduceKernel(Algorithm algorithm, DType dtype) {
    if (!algorithm.isCustom()) {
      throw new IllegalArgumentException(algorithm + " is not a custom kernel");
    }
    return "tl_allreduce_" + algorithm.name().toLowerCase(java.util.Locale.ROOT) + "_" + dtype.name();
  }

  /** The fatbin's bytes, or an exception that says the build skipped nvcc. */
  public static byte[] fatbin() {
    try (InputStream in = Kernels.class.getClassLoader().getResourceAsStream(FATBIN_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("kernel fatbin " + FATBIN_RESOURCE + " is not on the classpath "
            + "(the kernels module was built with -Dtensorlane.skipNvcc or without nvcc)");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + FATBIN_RESOURCE, e);
    }
  }

  /** Whether the fatbin resource is present. */
  public static boolean fatbinPresent() {
    return Kernels.class.getClassLoader().getResource(FATBIN_RESOURCE) != null;
  }
}
