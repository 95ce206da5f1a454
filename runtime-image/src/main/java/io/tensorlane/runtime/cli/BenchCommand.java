package io.tensorlane.runtime.cli;

import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetCount;
import static jcuda.driver.JCudaDriver.cuDeviceGetName;
import static jcuda.driver.JCudaDriver.cuDriverGetVersion;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.AlgorithmTable;
import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.DType;
import io.tensorlane.runtime.cli.BenchReport.Row;
import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.engine.Communicator;
import io.tensorlane.runtime.engine.CommunicatorConfig;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.nccl.Nccl;
import io.tensorlane.runtime.nccl.NcclComm;
import io.tensorlane.runtime.probe.Nvml;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import jcuda.driver.CUdevice;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Latency and bandwidth per algorithm and size, NCCL in the same run, CSV + SVG + tuned table. */
@Command(
        name = "bench",
        mixinStandardHelpOptions = true,
        description =
                "Time the custom allreduce (eager and CUDA-graph replayed) and NCCL from --min-bytes to --max-bytes; write "
                        + "bench.csv, bench.svg and table.json (the tuned size->algorithm table serve can load).")
public final class BenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--world-size",
            defaultValue = "8",
            description = "Ranks (default ${DEFAULT-VALUE}); beyond the GPU count they are virtual.")
    int world;

    @Option(names = "--devices", split = ",", description = "Device of each rank; default rank r on GPU r mod count.")
    List<Integer> devices;

    @Option(names = "--dtype", defaultValue = "bf16", description = "Element type (default ${DEFAULT-VALUE}).")
    String dtype;

    @Option(
            names = "--algorithms",
            split = ",",
            defaultValue = "OneStage,TwoStage,Ring",
            description = "Custom algorithms (default ${DEFAULT-VALUE}).")
    List<String> algorithms;

    @Option(
            names = "--min-bytes",
            defaultValue = "1KiB",
            description = "Smallest message per rank (default ${DEFAULT-VALUE}).")
    String minBytes;

    @Option(
            names = "--max-bytes",
            defaultValue = "64MiB",
            description = "Largest message per rank (default ${DEFAULT-VALUE}).")
    String maxBytes;

    @Option(
            names = "--extra-sizes",
            split = ",",
            defaultValue = "16,42KiB",
            description = "More sizes (default ${DEFAULT-VALUE}; 16 B = barrier floor).")
    List<String> extraSizes;

    @Option(
            names = "--graph-max-bytes",
            defaultValue = "1MiB",
            description = "Graph-replay sizes up to this (default ${DEFAULT-VALUE}).")
    String graphMaxBytes;

    @Option(
            names = "--samples",
            defaultValue = "15",
            description = "Timed samples per point; the median is reported (default ${DEFAULT-VALUE}).")
    int samples;

    @Option(
            names = "--copy-bytes",
            defaultValue = "512MiB",
            description = "Buffer size of the device copy ceiling (default ${DEFAULT-VALUE}).")
    String copyBytes;

    @Option(
            names = "--nccl-lib",
            description = "Path of libnccl.so.2 (else $" + Nccl.ENV + ", else the library search path).")
    String ncclLib;

    @Option(
            names = "--push",
            description =
                    "Also time OneStage's push variant (no barrier) at the sizes it takes, as modes eager-push and "
                            + "graph-push (not used for the tuned table).")
    boolean push;

    @Option(names = "--no-nccl", description = "Skip NCCL.")
    boolean noNccl;

    @Option(names = "--timeout-ms", defaultValue = "5000", description = "Watchdog timeout (default ${DEFAULT-VALUE}).")
    long timeoutMs;

    @Option(
            names = "--out-dir",
            defaultValue = "bench-out",
            description = "Where bench.csv, bench.svg, table.json, summary.txt go.")
    Path outDir;

    static List<Long> sizes(long min, long max, List<Long> extra) {
        if (min < 16 || max < min) {
            throw new IllegalArgumentException("need 16 <= --min-bytes <= --max-bytes, got " + min + " and " + max);
        }
        TreeSet<Long> s = new TreeSet<>();
        for (long b = Long.highestOneBit(min) == min ? min : Long.highestOneBit(min) << 1; b <= max; b <<= 1) {
            s.add(b);
        }
        s.add(min);
        s.add(max);
        for (long e : extra) {
            if (e % 16 != 0 || e > max) {
                throw new IllegalArgumentException("extra size " + e + " must be a multiple of 16 and <= --max-bytes");
            }
            s.add(e);
        }
        return List.copyOf(s);
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        DType dt = DType.parse(dtype);
        List<Algorithm> algos = algorithms.stream().map(Algorithm::parse).toList();
        long max = Args.bytes(maxBytes);
        List<Long> sizes = sizes(
                Args.bytes(minBytes), max, extraSizes.stream().map(Args::bytes).toList());
        long graphMax = Args.bytes(graphMaxBytes);
        BufferLayout.of(world, max); // validates world size and size before touching the GPU
        if (samples < 3) {
            throw new IllegalArgumentException("--samples must be >= 3, got " + samples);
        }
        Cuda.initForWorlds(
                List.of(world), devices, Nvml.gpuCount()); // a world size beyond the GPU count runs as virtual ranks
        int[] n = {0};
        Cuda.check(cuDeviceGetCount(n), "cuDeviceGetCount");
        List<Integer> devs = Args.devices(world, n[0], devices);
        BufferLayout layout = BufferLayout.of(world, max);
        CommunicatorConfig cfg = new CommunicatorConfig(
                devs, layout, AlgorithmTable.defaults(world, layout.maxMessageBytes()), timeoutMs);
        Files.createDirectories(outDir);
        String gpu = gpuName(devs.get(0));
        int[] drv = {0};
        cuDriverGetVersion(drv);
        List<Row> rows = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        try (Communicator comm = Communicator.create(cfg)) {
            out.printf(
                    "bench: %d ranks on GPUs %s (%s), %s, %d blocks max, %s, CUDA driver API %d%n",
                    world,
                    devs,
                    gpu,
                    cfg.virtual() ? "virtual ranks: timings are not interconnect timings" : "one GPU per rank",
                    comm.maxBlocks(),
                    dt,
                    drv[0]);
            out.flush();
            BenchRunner runner =
                    new BenchRunner(comm, dt, samples, max, Instant.now().toEpochMilli());
            try {
                rows.addAll(runner.copyCeiling(Args.bytes(copyBytes)));
                rows.forEach(r -> out.printf("copy ceiling %-12s %8.1f GB/s (read+write)%n", r.mode(), r.kernelGBs()));
                if (!noNccl) {
                    ncclRows(runner, devs, sizes, out, notes, rows);
                }
                for (Algorithm a : algos) {
                    for (long b : sizes) {
                        if (b % (dt.bytes()) != 0) {
                            continue;
                        }
                        Row e = runner.eager(a, b);
                        rows.add(e);
                        print(out, e);
                        if (b <= graphMax) {
                            Row g = runner.graph(a, b);
                            rows.add(g);
                            print(out, g);
                        }
                    }
                }
                if (push) {
                    rows.addAll(pushRows(comm, runner, dt, sizes, graphMax, out));
                }
            } finally {
                runner.close();
            }
        }
        String source = String.format(
                Locale.ROOT,
                "bench %s, %s, %d ranks%s, %s",
                Instant.now(),
                gpu,
                world,
                cfg.virtual() ? " (virtual)" : "",
                dt);
        AlgorithmTable tuned = BenchReport.tune(rows, world, layout.maxMessageBytes(), source);
        Files.writeString(outDir.resolve("bench.csv"), BenchReport.csv(rows));
        Files.writeString(
                outDir.resolve("bench.svg"),
                BenchReport.svg(
                        rows,
                        "allreduce latency, " + gpu + ", " + world + " ranks" + (cfg.virtual() ? " (virtual)" : "")
                                + ", " + dt));
        tuned.save(outDir.resolve("table.json"));
        List<String> summary = BenchSummary.lines(rows, world, gpu, drv[0], cfg.virtual(), notes, tuned);
        Files.write(outDir.resolve("summary.txt"), summary);
        summary.forEach(out::println);
        out.flush();
        return ExitCodes.OK;
    }

    /** OneStage with the communicator's push on, at the sizes the push variant takes. */
    private static List<Row> pushRows(
            Communicator comm, BenchRunner runner, DType dt, List<Long> sizes, long graphMax, PrintWriter out) {
        List<Row> rows = new ArrayList<>();
        comm.setPush(true);
        try {
            for (long b : sizes) {
                if (b % dt.bytes() != 0 || !comm.pushes(dt, b / dt.bytes())) {
                    continue;
                }
                rows.add(runner.eager(Algorithm.OneStage, b).withMode("eager-push"));
                if (b <= graphMax) {
                    rows.add(runner.graph(Algorithm.OneStage, b).withMode("graph-push"));
                }
            }
        } finally {
            comm.setPush(false);
        }
        rows.forEach(r -> print(out, r));
        return rows;
    }

    private void ncclRows(
            BenchRunner runner,
            List<Integer> devs,
            List<Long> sizes,
            PrintWriter out,
            List<String> notes,
            List<Row> rows) {
        List<Integer> distinct = devs.stream().distinct().toList();
        try {
            Nccl nccl = Nccl.load(ncclLib);
            out.println("NCCL " + nccl.version() + " from " + nccl.source() + " on " + distinct.size() + " GPU(s)");
            if (distinct.size() < devs.size()) {
                notes.add("NCCL ran with " + distinct.size()
                        + " rank(s): it refuses two ranks on one GPU, so it cannot join virtual ranks");
            }
            try (NcclComm comm = new NcclComm(nccl, distinct)) {
                for (long b : sizes) {
                    Row r = runner.nccl(comm, b);
                    rows.add(r);
                    print(out, r);
                }
            }
        } catch (RuntimeException | UnsatisfiedLinkError e) {
            notes.add("NCCL not measured: " + e.getMessage());
            out.println("NCCL not measured: " + e.getMessage());
        }
    }

    private static void print(PrintWriter out, Row r) {
        out.printf(
                Locale.ROOT,
                "%-8s %-5s %2d ranks %10s  median %10.2f us  busbw %8.2f GB/s  kernel %8.1f GB/s%n",
                r.algorithm(),
                r.mode(),
                r.world(),
                Args.human(r.bytes()),
                r.medianUs(),
                r.busBwGBs(),
                r.kernelGBs());
        out.flush();
    }

    private static String gpuName(int device) {
        CUdevice d = new CUdevice();
        cuDeviceGet(d, device);
        byte[] name = new byte[256];
        cuDeviceGetName(name, name.length, d);
        String s = new String(name, java.nio.charset.StandardCharsets.US_ASCII);
        int z = s.indexOf('\0');
        return z >= 0 ? s.substring(0, z) : s;
    }
}
