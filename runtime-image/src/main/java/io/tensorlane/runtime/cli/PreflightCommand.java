package io.tensorlane.runtime.cli;

import io.tensorlane.api.v1alpha1.Measurement;
import io.tensorlane.contract.AlgorithmTable;
import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.common.TerminationLog;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code preflight}: what the operator's preflight Job runs on a node before the first rollout. It runs the engine's
 * {@code selftest} (bf16 and fp32, odd and even counts, on {@code --world-size} GPUs) and a short {@code bench} (up to
 * {@code --bench-max-bytes}, NCCL in the same run), then writes the result as the JSON of a {@code Measurement}
 * ({@link PreflightReport}) to the termination log ({@code /dev/termination-log}, or {@code $TENSORLANE_TERMINATION_LOG})
 * and stdout. Exit 0 when the custom allreduce is proven, 1 with {@code failure} set otherwise; the whole run is bounded
 * by {@code --timeout-seconds} (the Job's deadline is the outer bound).
 */
@Command(
        name = "preflight",
        mixinStandardHelpOptions = true,
        description =
                "Selftest + short bench on this node's GPUs; the result as Measurement JSON in the termination message.")
public final class PreflightCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--world-size",
            required = true,
            description = "GPUs to test (the deployment's tensor parallelism).")
    int worldSize;

    @Option(
            names = "--bench-max-bytes",
            defaultValue = "8388608",
            description = "Largest bench message (default ${DEFAULT-VALUE}).")
    long benchMaxBytes;

    @Option(
            names = "--timeout-seconds",
            defaultValue = "270",
            description = "Budget of the whole run (default ${DEFAULT-VALUE}).")
    long timeoutSeconds;

    @Option(
            names = "--nccl-lib",
            description = "libnccl.so.2 for the NCCL comparison (default: TENSORLANE_NCCL_LIB or the loader path).")
    String ncclLib;

    @Option(
            names = "--work-dir",
            description = "Where selftest and bench write their files (default: a temporary folder).")
    Path workDir;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        if (worldSize < 2 || worldSize > 8) {
            throw new IllegalArgumentException("--world-size must be 2..8, got " + worldSize);
        }
        Path dir =
                workDir != null ? Files.createDirectories(workDir) : Files.createTempDirectory("tensorlane-preflight-");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        Measurement result;
        int selftest = runBounded(
                deadline,
                "selftest",
                "--world-sizes",
                Integer.toString(worldSize),
                "--dtypes",
                "bf16,fp32",
                "--counts",
                "1,9,4097,21504,300007",
                "--report",
                dir.resolve("selftest.json").toString());
        if (selftest != ExitCodes.OK) {
            result = PreflightReport.failure(
                    worldSize,
                    false,
                    false,
                    selftest == -1
                            ? "the custom-allreduce selftest did not finish within " + timeoutSeconds + " s"
                            : "the custom-allreduce selftest failed on " + worldSize + " GPUs (exit code " + selftest
                                    + ")");
        } else {
            List<String> bench = new ArrayList<>(List.of(
                    "bench",
                    "--world-size",
                    Integer.toString(worldSize),
                    "--dtype",
                    "bf16",
                    "--min-bytes",
                    "8KiB",
                    "--max-bytes",
                    Long.toString(benchMaxBytes),
                    "--samples",
                    "7",
                    "--out-dir",
                    dir.resolve("bench").toString()));
            if (ncclLib != null) {
                bench.addAll(List.of("--nccl-lib", ncclLib));
            }
            int rc = runBounded(deadline, bench.toArray(String[]::new));
            if (rc != ExitCodes.OK) {
                result = PreflightReport.failure(
                        worldSize,
                        true,
                        true,
                        rc == -1
                                ? "the bench did not finish within " + timeoutSeconds + " s"
                                : "the bench failed (exit code " + rc + ")");
            } else {
                result = PreflightReport.success(
                        worldSize,
                        AlgorithmTable.load(dir.resolve("bench/table.json")),
                        Files.readString(dir.resolve("bench/bench.csv")));
            }
        }
        String json = PreflightReport.toJson(result);
        out.println(json);
        out.flush();
        write(TerminationLog.path(), json, out);
        return result.failure == null ? ExitCodes.OK : ExitCodes.CHECK_FAILED;
    }

    /** Runs a subcommand in this process; -1 when the time is up (the run is abandoned, the process exits soon after). */
    private int runBounded(long deadline, String... args) throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        CompletableFuture<Integer> f = CompletableFuture.supplyAsync(() -> {
            var cl = Main.commandLine();
            cl.setOut(out);
            cl.setErr(spec.commandLine().getErr());
            return cl.execute(args);
        });
        try {
            return f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return -1;
        }
    }

    private static void write(Path file, String json, PrintWriter err) {
        boolean writable = Files.exists(file)
                || (!file.startsWith("/dev") && file.getParent() != null && Files.isDirectory(file.getParent()));
        if (writable) {
            try {
                Files.writeString(file, json);
            } catch (IOException e) {
                err.println("cannot write the preflight result to " + file + ": " + e.getMessage());
            }
        }
    }
}
