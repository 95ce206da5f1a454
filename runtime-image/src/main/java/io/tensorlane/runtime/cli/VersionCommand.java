package io.tensorlane.runtime.cli;

import io.tensorlane.kernels.Fatbin;
import io.tensorlane.kernels.Kernels;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;

/** Prints the runtime version and which GPU architectures the bundled kernels carry. No GPU needed. */
@Command(name = "version", description = "Print version, kernel architectures and library versions (no GPU needed).")
public final class VersionCommand implements Callable<Integer> {
  static String version() {
    String v = Main.class.getPackage().getImplementationVersion();
    return v != null ? v : "dev";
  }

  static List<String> lines() {
    String kernels;
    if (Kernels.fatbinPresent()) {
      kernels = Fatbin.entries(Kernels.fatbin()).toString();
    } else {
      kernels = "MISSING (built with -Dtensorlane.skipNvcc)";
    }
    return List.of("tensorlane-runtime " + version(), "kernels: " + kernels, "java: " + System.getProperty("java.version"),
        "jcuda: 12.0.0 (driver API)");
  }

  @Override
  public Integer call() {
    lines().forEach(System.out::println);
    return Kernels.fatbinPresent() ? ExitCodes.OK : ExitCodes.RUNTIME;
  }

  /** For --version. */
  public static final class Provider implements IVersionProvider {
    @Override
    public String[] getVersion() {
      return lines().toArray(String[]::new);
    }
  }
}
