package io.tensorlane.runtime.cli;

import static jcuda.driver.JCudaDriver.cuDeviceGetCount;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.DType;
import io.tensorlane.kernels.Fatbin;
import io.tensorlane.kernels.Kernels;
import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.engine.AllreduceTimeoutException;
import io.tensorlane.runtime.engine.Communicator;
import io.tensorlane.runtime.engine.CommunicatorConfig;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.nccl.Nccl;
import io.tensorlane.runtime.probe.Nvml;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Correctness of the custom allreduce for every world size, dtype, algorithm and size; exits non-zero on failure. */
@Command(
        name = "selftest",
        mixinStandardHelpOptions = true,
        description =
                "Check the custom allreduce: world sizes x dtypes x algorithms x element counts (odd ones too), fresh random "
                        + "inputs, poisoned outputs, fp64 reference, all ranks bitwise equal. Ranks beyond the GPU count become virtual ranks.")
public final class SelftestCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--world-sizes",
            defaultValue = "2..8",
            description = "World sizes, e.g. 2..8 or 2,4,8 (default ${DEFAULT-VALUE}).")
    String worldSizes;

    @Option(
            names = "--dtypes",
            split = ",",
            defaultValue = "bf16,fp16,fp32",
            description = "Element types (default ${DEFAULT-VALUE}).")
    List<String> dtypes;

    @Option(
            names = "--algorithms",
            split = ",",
            defaultValue = "OneStage,TwoStage,Ring",
            description = "Algorithms (default ${DEFAULT-VALUE}).")
    List<String> algorithms;

    @Option(
            names = "--counts",
            split = ",",
            description = "Element counts (default 1,3,8,9,1000,4097,65537,300007,2000003).")
    List<Long> counts;

    @Option(
            names = "--devices",
            split = ",",
            description = "Device of each rank (length = world size); default rank r on GPU r mod count.")
    List<Integer> devices;

    @Option(
            names = "--timeout-ms",
            defaultValue = "2000",
            description = "Watchdog timeout per wait (default ${DEFAULT-VALUE}).")
    long timeoutMs;

    @Option(
            names = "--seed",
            defaultValue = "20261129",
            description = "Base random seed (mixed with the clock: inputs are fresh each run).")
    long seed;

    @Option(
            names = "--dry-run",
            description = "Validate arguments, print the plan, buffers, table and kernel architectures; no GPU.")
    boolean dryRun;

    @Option(
            names = "--watchdog-check",
            description = "Also check the watchdog: rank 1 of 2 never arrives; rank 0 must fail with a clear error.")
    boolean watchdogCheck;

    @Option(
            names = "--occupy-fraction",
            description =
                    "Before creating communicators, take this fraction of free memory on each GPU "
                            + "(emulates a static pool; with a high value the buffer allocation fails with the CUDA-OOM termination message).")
    Double occupyFraction;

    @Option(names = "--report", description = "Write the results as JSON here.")
    Path report;

    @Option(
            names = "--nccl-lib",
            description = "libnccl.so.2 for the NCCL-fallback check on world sizes whose ranks are on distinct GPUs "
                    + "(else $" + Nccl.ENV + ", else the library search path; skipped when not found).")
    String ncclLib;

    /** NCCL is only usable when some world size maps its ranks onto distinct GPUs. */
    private Nccl loadNcclIfUseful(SelftestPlan plan, int deviceCount, PrintWriter out) {
        boolean useful = plan.worldSizes().stream().anyMatch(w -> w <= deviceCount);
        if (!useful) {
            return null;
        }
        try {
            Nccl nccl = Nccl.load(ncclLib);
            out.println("NCCL " + nccl.version() + " from " + nccl.source()
                    + ": the fallback is checked where ranks are on distinct GPUs");
            return nccl;
        } catch (RuntimeException | UnsatisfiedLinkError e) {
            out.println("NCCL fallback not checked: " + e.getMessage());
            return null;
        }
    }

    SelftestPlan plan() {
        return new SelftestPlan(
                Args.intList(worldSizes),
                dtypes.stream().map(DType::parse).toList(),
                algorithms.stream().map(Algorithm::parse).toList(),
                counts == null ? SelftestPlan.DEFAULT_COUNTS : counts);
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        SelftestPlan plan = plan();
        if (occupyFraction != null && (occupyFraction <= 0 || occupyFraction >= 1)) {
            throw new IllegalArgumentException("--occupy-fraction must be in (0, 1), got " + occupyFraction);
        }
        plan.describe().forEach(out::println);
        out.println("kernels: " + (Kernels.fatbinPresent() ? Fatbin.entries(Kernels.fatbin()) : "MISSING"));
        if (dryRun) {
            for (int w : plan.worldSizes()) {
                List<Integer> devs =
                        devices != null && devices.size() == w ? devices : java.util.Collections.nCopies(w, 0);
                new CommunicatorConfig(devs, plan.layout(w), plan.table(w), timeoutMs);
            }
            out.println("dry run: arguments, layouts and tables are valid; no GPU used");
            out.flush();
            return Kernels.fatbinPresent() ? ExitCodes.OK : ExitCodes.RUNTIME;
        }
        List<Integer> worlds = new ArrayList<>(plan.worldSizes());
        if (watchdogCheck) {
            worlds.add(2); // the watchdog check's two ranks, placed by the GPU count
        }
        Cuda.initForWorlds(worlds, devices, Nvml.gpuCount()); // world sizes beyond the GPU count run as virtual ranks
        int[] n = {0};
        Cuda.check(cuDeviceGetCount(n), "cuDeviceGetCount");
        List<SelftestRunner.Result> results = new ArrayList<>();
        boolean leakOk;
        Nccl nccl = loadNcclIfUseful(plan, n[0], out);
        try (LeakCheck leak = new LeakCheck(n[0]);
                MemoryHog hog = occupyFraction == null ? null : MemoryHog.take(n[0], occupyFraction, out)) {
            for (int w : plan.worldSizes()) {
                List<Integer> devs = Args.devices(w, n[0], devices != null && devices.size() == w ? devices : null);
                try {
                    results.addAll(SelftestRunner.runWorld(w, devs, plan, timeoutMs, seed, null, out));
                } catch (AllreduceTimeoutException e) {
                    // The communicator of this world size is broken; record the failure and go on with the next world
                    // size.
                    out.println("FAIL ws=" + w + " watchdog: " + e.getMessage());
                    results.add(new SelftestRunner.Result(
                            w,
                            "-",
                            e.record().algorithm().name(),
                            "watchdog",
                            0,
                            Double.NaN,
                            0,
                            -1,
                            false,
                            false,
                            false));
                }
            }
            if (hog != null) {
                hog.close();
            }
            leakOk = leak.finish(out);
        }
        // After the leak check: NCCL keeps process-wide CUDA state (its kernels, runtime resources) after
        // ncclCommDestroy, which would be counted as our leak.
        if (nccl != null && occupyFraction == null) {
            for (int w : plan.worldSizes()) {
                List<Integer> devs = Args.devices(w, n[0], devices != null && devices.size() == w ? devices : null);
                if (!CommunicatorConfig.sharesAGpu(devs)) {
                    results.addAll(SelftestRunner.ncclFallback(w, devs, plan, timeoutMs, seed, nccl, out));
                }
            }
        }
        boolean watchdogOk = !watchdogCheck || watchdog(n[0], out);
        long failed = results.stream().filter(r -> !r.ok()).count();
        out.printf(
                "selftest: %d checks, %d failed, leak check %s%s%n",
                results.size(),
                failed,
                leakOk ? "ok" : "FAILED",
                watchdogCheck ? ", watchdog " + (watchdogOk ? "ok" : "FAILED") : "");
        if (report != null) {
            new ObjectMapper()
                    .enable(SerializationFeature.INDENT_OUTPUT)
                    .writeValue(
                            report.toFile(),
                            Map.of("results", results, "failed", failed, "watchdogOk", watchdogOk, "leakOk", leakOk));
        }
        out.flush();
        return failed == 0 && watchdogOk && leakOk ? ExitCodes.OK : ExitCodes.CHECK_FAILED;
    }

    /** Rank 1 never launches: rank 0 must come back within the timeout with "rank 1 did not arrive within ...". */
    private boolean watchdog(int deviceCount, PrintWriter out) {
        long timeout = 500;
        List<Integer> devs = Args.devices(2, deviceCount, null);
        try (Communicator comm =
                Communicator.create(CommunicatorConfig.of(devs, 1 << 20).withTimeout(timeout))) {
            long t0 = System.nanoTime();
            // virtual ranks: rank 1 passes the host's launch fence but launches nothing (on real ranks it does nothing)
            var absent = java.util.concurrent.CompletableFuture.runAsync(
                    () -> comm.rank(1).call(() -> {
                        comm.rank(1).skipAllreduceLaunch();
                        return null;
                    }));
            try {
                comm.rank(0).call(() -> {
                    var r = comm.rank(0);
                    var output = SelftestRunner.alloc(1 << 20);
                    try {
                        r.allReduce(r.staging(), output, 1024, DType.fp32, r.stream(), Algorithm.OneStage);
                        r.synchronize();
                    } finally {
                        jcuda.driver.JCudaDriver.cuMemFree(output);
                    }
                    return null;
                });
                out.println("watchdog: FAILED, the call returned although rank 1 never arrived");
                return false;
            } catch (AllreduceTimeoutException e) {
                absent.join();
                long ms = (System.nanoTime() - t0) / 1_000_000;
                boolean ok = e.getMessage().startsWith("rank 1 did not arrive within " + timeout + " ms")
                        && ms < timeout + 5000
                        && comm.isBroken();
                out.println("watchdog: " + (ok ? "ok" : "FAILED") + " after " + ms + " ms: " + e.getMessage());
                return ok;
            }
        }
    }
}
