package io.tensorlane.runtime.serve;

import io.tensorlane.kernels.EngineEnv;
import io.tensorlane.runtime.cli.ExitCodes;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code serve}. With {@code --synthetic}: a tensor-parallel server without a model. It starts the engine exactly as a
 * model server would (the plan from the environment, the static memory pool by the planned fraction, the communicator
 * with its buffers from the layout) and then runs a synthetic step loop (bf16 GEMMs with cuBLAS + one allreduce per
 * layer) so that readiness, metrics and CUDA OOM behave as in production; the preflight and tests use it. Without it,
 * {@code serve} needs a model directory ({@code --model} or {@value io.tensorlane.kernels.EngineEnv#MODEL_DIR}).
 * CUDA OOM at start-up ends with the JSON termination message (phase static-pool or ipc-buffers) and exit code 3.
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
    description = {"Tensorlane serving: reads the plan from TENSORLANE_* environment variables. --synthetic runs the "
        + "synthetic step loop (no model: static memory pool, communicator, GEMM + allreduce steps, /health/ready, "
        + "/health/live, /metrics).",
        "Exit codes: 0 done, 2 bad plan/arguments, 3 CUDA out of memory (termination message written), 4 allreduce "
            + "watchdog, 5 other runtime failure."})
public final class ServeCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Option(names = "--synthetic", description = "Run the synthetic step loop (no model) instead of serving a model.")
  boolean synthetic;

  @Option(names = "--model", description = "Model directory to serve (default: " + EngineEnv.MODEL_DIR + ").")
  java.nio.file.Path model;

  @Option(names = "--virtual-ranks", paramLabel = "N",
      description = "Run N ranks on GPU 0 (one stream each) instead of one rank per GPU; overrides TENSORLANE_WORLD_SIZE.")
  Integer virtualRanks;

  @Option(names = "--port", description = "HTTP port (default: TENSORLANE_PORT or 8080).")
  Integer port;

  @Option(names = "--memory-fraction", description = "Static pool fraction (default: TENSORLANE_MEMORY_FRACTION).")
  Double memoryFraction;

  @Option(names = "--max-message-bytes", description = "Custom allreduce buffer size (default: TENSORLANE_MAX_MESSAGE_BYTES or 8 MiB).")
  Long maxMessageBytes;

  @Option(names = "--allreduce", description = "Custom, NCCL or None (default: TENSORLANE_ALLREDUCE).")
  String allreduce;

  @Option(names = "--layers", defaultValue = "4", description = "Layers per synthetic step (default ${DEFAULT-VALUE}).")
  int layers;

  @Option(names = "--hidden", defaultValue = "5376", description = "Hidden size (default ${DEFAULT-VALUE}).")
  int hidden;

  @Option(names = "--tokens", split = ",", defaultValue = "4,32,256",
      description = "Token counts per step; each layer allreduces tokens x hidden bf16 values (default ${DEFAULT-VALUE}: "
          + "4 tokens at hidden 5376 is the 42 KiB attention allreduce).")
  List<Integer> tokens = new ArrayList<>();

  @Option(names = "--steps", defaultValue = "0", description = "Stop after this many steps (default 0: run until stopped).")
  long steps;

  @Option(names = "--duration", description = "Stop after this long, e.g. 30s or 5m (default: run until stopped).",
      converter = DurationConverter.class)
  Duration duration;

  @Option(names = "--gemm", defaultValue = "cublas", description = "cublas (default) or none (allreduces only).")
  String gemm;

  @Option(names = "--static-pool-leave-bytes", defaultValue = "0", paramLabel = "BYTES",
      description = "Testing: size the static pool to leave BYTES free on each GPU instead of by the fraction, so the "
          + "allreduce buffers themselves run out of memory (phase ipc-buffers) as in the seed's incident.")
  long poolLeaveBytes;

  @Option(names = "--nccl-lib", description = "libnccl.so.2 for the NCCL fallback (default: TENSORLANE_NCCL_LIB or the loader path).")
  String ncclLib;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    if (!synthetic) {
      String dir = model != null ? model.toString() : System.getenv(EngineEnv.MODEL_DIR);
      if (dir == null || dir.isBlank()) {
        throw new IllegalArgumentException("no model to serve: give --model DIR or set " + EngineEnv.MODEL_DIR
            + " (--synthetic runs the synthetic step loop without a model)");
      }
      throw new IllegalArgumentException("serving a model is not available in this build yet; --synthetic runs the synthetic step loop");
    }
    ServeConfig config = ServeConfig.from(System.getenv(), new ServeConfig.Overrides(virtualRanks, allreduce,
        maxMessageBytes, memoryFraction, port));
    StepShape shape = new StepShape(layers, hidden, tokens.isEmpty() ? StepShape.DEFAULT.tokens() : tokens);
    if (!"cublas".equals(gemm) && !"none".equals(gemm)) {
      throw new IllegalArgumentException("--gemm must be cublas or none, got '" + gemm + "'");
    }
    List<Integer> devices = new ArrayList<>();
    for (int r = 0; r < config.worldSize(); r++) {
      devices.add(virtualRanks != null ? 0 : r);
    }
    out.printf("serve (synthetic mode: no model): world size %d%s, allreduce %s, memory fraction %s, port %d, "
        + "%d layers x tokens %s at hidden %d (messages %s bytes)%n", config.worldSize(),
        virtualRanks != null ? " (virtual ranks on GPU 0)" : "", config.allreduce(), config.memoryFraction(), config.port(),
        shape.layers(), shape.tokens(), shape.hidden(), shape.tokens().stream().map(shape::messageBytes).toList());
    out.flush();
    return run(config, new GpuSteps(config, shape, devices, ncclLib, "cublas".equals(gemm), out)
        .leavingFree(poolLeaveBytes), steps, duration, out);
  }

  /** Serves HTTP while the loop runs (tests call this with a fake source). */
  static int run(ServeConfig config, StepSource source, long steps, Duration duration, PrintWriter out) throws Exception {
    ServeMetrics metrics = new ServeMetrics(config);
    StepLoop loop = new StepLoop(source, metrics);
    Thread hook = new Thread(loop::stop, "tensorlane-serve-stop");
    Runtime.getRuntime().addShutdownHook(hook);
    try (HealthServer http = HealthServer.start(config.port(), loop::ready, metrics::scrape); source) {
      out.printf("serve: HTTP on port %d (/health/live, /health/ready, /metrics)%n", http.port());
      out.flush();
      loop.run(steps, duration, out);
      return ExitCodes.OK;
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException e) {
        // already shutting down
      }
    }
  }

  /** "30s", "5m", "1h" or an ISO-8601 duration. */
  static final class DurationConverter implements picocli.CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String v) {
      var m = java.util.regex.Pattern.compile("(\\d+)(ms|s|m|h)").matcher(v.trim());
      if (m.matches()) {
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
          case "ms" -> Duration.ofMillis(n);
          case "s" -> Duration.ofSeconds(n);
          case "m" -> Duration.ofMinutes(n);
          default -> Duration.ofHours(n);
        };
      }
      return Duration.parse(v);
    }
  }

}
