package io.tensorlane.runtime.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tensorlane.contract.Algorithm;
import io.tensorlane.runtime.cli.ModelBenchSteps.DecodeResult;
import io.tensorlane.runtime.cli.ModelBenchSteps.PrefillResult;
import io.tensorlane.runtime.llm.AllreduceCounts;
import io.tensorlane.runtime.llm.LlmEngine;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code bench-model}'s {@code --json} file: the run's header and the measurements done or skipped so far, rewritten
 * (through a temporary file) after each measurement.
 */
final class ModelBenchJson {
    static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private final Path json;
    private final int context;
    private final long startNanos;
    private final List<DecodeResult> decodes = new ArrayList<>();
    private final List<String> skipped = new ArrayList<>();
    private final List<ModelBenchVerify.Row> verifies = new ArrayList<>();
    private final List<ModelBenchMasks.Row> masks = new ArrayList<>();
    private double maskCompileMs = Double.NaN;
    private PrefillResult prefill;
    private ObjectNode header;
    private ObjectNode allreduces;

    /**
     * @param json       the file, or null for none (then {@link #write} does nothing)
     * @param context    {@code --context}, repeated in every decode measurement
     * @param startNanos when the run started ({@code elapsed_seconds})
     */
    ModelBenchJson(Path json, int context, long startNanos) {
        this.json = json;
        this.context = context;
        this.startNanos = startNanos;
    }

    /** The run's description (model, options, load, memory) that every write starts from; nothing is written before. */
    void header(ObjectNode header) {
        this.header = header;
    }

    void decode(DecodeResult r) {
        decodes.add(r);
    }

    /** A row of {@code --verify-ks}'s table ({@link ModelBenchVerify}). */
    void verify(ModelBenchVerify.Row r) {
        verifies.add(r);
    }

    /** A row of {@code --mask-cost}'s table ({@link ModelBenchMasks}), and the schema's compile time. */
    void masks(ModelBenchMasks.Row r, double compileMs) {
        masks.add(r);
        maskCompileMs = compileMs;
    }

    void prefill(PrefillResult r) {
        prefill = r;
    }

    /**
     * The allreduces of the run per algorithm (several ranks): calls, bytes, and the calls timed on rank 0's stream with
     * their mean (one step in {@value LlmEngine#ALLREDUCE_SAMPLE_EVERY}); each algorithm's line goes to {@code out}.
     */
    void allreduces(AllreduceCounts c, PrintWriter out) {
        ObjectNode o = JSON.createObjectNode();
        for (Algorithm a : Algorithm.values()) {
            if (c.calls(a) == 0) {
                continue;
            }
            ObjectNode x = o.putObject(a.name());
            x.put("calls", c.calls(a));
            x.put("bytes", c.bytes(a));
            x.put("timed_calls", c.sampledCalls(a));
            double meanUs = c.sampledCalls(a) == 0 ? Double.NaN : c.sampledNanos(a) / 1e3 / c.sampledCalls(a);
            x.put("timed_mean_us", meanUs);
            out.printf(
                    Locale.ROOT,
                    "allreduce %s: %d calls, %d timed, mean %.2f us%n",
                    a,
                    c.calls(a),
                    c.sampledCalls(a),
                    meanUs);
        }
        allreduces = o;
    }

    /** A measurement left out ({@code --max-seconds}). */
    void skipped(String what) {
        skipped.add(what);
    }

    private static void putOps(ObjectNode o, Map<String, Double> ops) {
        if (ops != null) {
            ObjectNode n = o.putObject("ops_gpu_ms_eager");
            ops.forEach(n::put);
        }
    }

    private static void stats(ObjectNode parent, String name, ModelBenchStats s) {
        ObjectNode o = parent.putObject(name);
        o.put("n", s.n());
        o.put("median", s.median());
        o.put("p10", s.p10());
        o.put("p90", s.p90());
        o.put("min", s.min());
        o.put("max", s.max());
        o.put("mean", s.mean());
    }

    /** Writes the file ({@code complete}: every measurement is in); nothing without a file or a header. */
    void write(boolean complete) throws IOException {
        if (json == null || header == null) {
            return;
        }
        ObjectNode o = header.deepCopy();
        o.put("complete", complete);
        ArrayNode d = o.putArray("decode");
        for (DecodeResult r : decodes) {
            ObjectNode x = d.addObject();
            x.put("batch", r.batch());
            x.put("context", context);
            x.put("first_position", r.firstPosition());
            x.put("last_position", r.lastPosition());
            x.put("graph_replayed_steps", r.graphReplayedSteps());
            stats(x, "wall_ms", r.wallMs());
            stats(x, "gpu_ms", r.gpuMs());
            x.put("tokens_per_s", r.batch() * 1000.0 / r.wallMs().median());
            x.put("tokens_per_s_gpu", r.batch() * 1000.0 / r.gpuMs().median());
            ObjectNode h = x.putObject("host_us_median");
            r.hostMicros().forEach((phase, us) -> {
                if (!Double.isNaN(us)) {
                    h.put(phase, us);
                }
            });
            putOps(x, r.ops());
        }
        ArrayNode v = o.putArray("verify");
        for (ModelBenchVerify.Row r : verifies) {
            ObjectNode x = v.addObject();
            x.put("batch", r.batch());
            x.put("k", r.k());
            x.put("wall_ms_median", r.wallMs());
            x.put("gpu_ms_median", r.gpuMs());
            x.put("x_decode_wall", r.wallRatio());
            x.put("x_decode_gpu", r.gpuRatio());
            x.put("graph_replayed_steps", r.replayed());
            x.put("steps", r.steps());
        }
        if (!masks.isEmpty()) {
            ObjectNode m = o.putObject("masks");
            m.put("compile_ms", maskCompileMs);
            ArrayNode rows = m.putArray("rows");
            for (ModelBenchMasks.Row r : masks) {
                ObjectNode x = JSON.valueToTree(r);
                x.put("x_plain_wall", r.wallRatio());
                x.put("x_plain_gpu", r.gpuRatio());
                rows.add(x);
            }
        }
        if (prefill != null) {
            ObjectNode p = o.putObject("prefill");
            p.put("tokens", prefill.tokens());
            p.put("chunks", prefill.chunks());
            stats(p, "wall_ms", prefill.wallMs());
            stats(p, "gpu_ms", prefill.gpuMs());
            p.put("tokens_per_s", prefill.tokens() * 1000.0 / prefill.wallMs().median());
            p.put(
                    "tokens_per_s_gpu",
                    prefill.tokens() * 1000.0 / prefill.gpuMs().median());
            putOps(p, prefill.ops());
        }
        if (allreduces != null) {
            o.set("allreduces", allreduces);
        }
        ArrayNode sk = o.putArray("skipped");
        skipped.forEach(sk::add);
        o.put("elapsed_seconds", (System.nanoTime() - startNanos) / 1e9);
        Path parent = json.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Path tmp = json.resolveSibling(json.getFileName() + ".tmp");
        JSON.writeValue(tmp.toFile(), o);
        Files.move(tmp, json, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
}
