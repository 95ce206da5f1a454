package io.tensorlane.runtime.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.llm.EngineOptions;
import io.tensorlane.runtime.llm.LlmEngine;
import io.tensorlane.runtime.model.ModelConfig;
import io.tensorlane.runtime.model.ModelException;
import io.tensorlane.runtime.model.TpLayout;
import io.tensorlane.runtime.options.EngineArgs;
import io.tensorlane.runtime.options.EngineCommand;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code prefixcheck}: a cached prefix's KV against a fresh computation of it, on the GPU (issue #33). See {@link
 * PrefixCheckRun} for what is computed and {@link KvDiff} for the measure. Exit 0 when every gated row passes (the
 * negative control must be reported as a mismatch), 1 when one fails; a TP degree the model's geometry refuses is
 * reported as SKIP (exit 0) with the reason.
 */
@Command(
        name = "prefixcheck",
        mixinStandardHelpOptions = true,
        description =
                "Check that KV computed on top of cached prefix blocks matches a fresh computation (every rank's K "
                        + "and V of every layer, and the logits), with a negative control that must mismatch.")
public final class PrefixCheckCommand implements Callable<Integer>, EngineCommand {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Sequences per step: the check's steps hold at most two. */
    static final int MAX_SEQS = 4;

    @Spec
    CommandSpec spec;

    @Mixin
    EngineArgs args = new EngineArgs();

    @Option(
            names = "--prefix-tokens",
            defaultValue = "200",
            description =
                    "Tokens of the shared prefix; its full blocks are the cached ones (default ${DEFAULT-VALUE}).")
    int prefixTokens;

    @Option(
            names = "--tail-tokens",
            defaultValue = "37",
            description = "Tokens after the prefix, computed on the cached blocks (default ${DEFAULT-VALUE}).")
    int tailTokens;

    @Option(names = "--seed", defaultValue = "33", description = "Seed of the token ids (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(
            names = "--tolerance",
            defaultValue = "0.015625",
            description = "Largest relative L2 distance of a block (or logits row) that counts as a match: "
                    + "4 x bf16's rounding 2^-8 (default ${DEFAULT-VALUE}).")
    double tolerance;

    @Option(names = "--json", description = "Write the rows as JSON to FILE.")
    Path json;

    @Override
    public EngineOptions engineOptions(Map<String, String> env, PrintWriter err) {
        EngineArgs.Resolved eng = args.resolve(env, EngineArgs.DEFAULT_MEMORY_FRACTION, err);
        int rows = Math.max(MAX_SEQS, prefixTokens + tailTokens); // the fresh prompt's logits, every position
        return eng.options(MAX_SEQS, eng.maxModelLen(), eng.kvCacheTokens(), rows);
    }

    /** What is wrong with these sizes for block size {@code bs} and a step of {@code maxBatchTokens} (null: nothing). */
    static String problem(int prefix, int tail, double tol, int bs, int maxBatchTokens) {
        if (prefix < 2 * bs) {
            return "--prefix-tokens must be >= " + 2 * bs + " (two full KV blocks), got " + prefix;
        }
        if (tail < 1) {
            return "--tail-tokens must be >= 1, got " + tail;
        }
        if (prefix + tail > maxBatchTokens) {
            return "the fresh prompt of " + (prefix + tail)
                    + " tokens is computed in one step: give --max-batch-tokens >= " + (prefix + tail) + " (now "
                    + maxBatchTokens + ")";
        }
        if (!(tol > 0 && tol < 1)) {
            return "--tolerance must be in (0, 1), got " + tol;
        }
        return null;
    }

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        EngineOptions opts = engineOptions(System.getenv(), err);
        String bad = problem(prefixTokens, tailTokens, tolerance, opts.blockSize(), opts.maxBatchTokens());
        if (bad != null) {
            throw new IllegalArgumentException(bad);
        }
        if (opts.kvCacheDtype().fp8()) {
            throw new IllegalArgumentException(
                    "prefixcheck compares 16-bit KV caches: --kv-cache-dtype fp8 is not supported");
        }
        String label = opts.modelDir().getFileName() + " tp " + opts.tp();
        ModelConfig config = ModelConfig.read(opts.modelDir());
        try {
            TpLayout.of(config, opts.tp());
        } catch (ModelException e) {
            out.println("prefixcheck: SKIP " + label + ": the model's geometry refuses it (" + e.getMessage() + ")");
            write(label, opts, "SKIP", e.getMessage(), List.of());
            return ExitCodes.OK;
        }
        List<PrefixCheckRun.Row> rows;
        try (LlmEngine engine = LlmEngine.load(opts, err)) {
            int need = PrefixCheckRun.blocksNeeded(prefixTokens, tailTokens, opts.blockSize());
            if (engine.blocks().blocks() < need) {
                throw new IllegalArgumentException("the check needs " + need + " KV blocks, the cache has "
                        + engine.blocks().blocks() + ": give --kv-cache-tokens >= " + need * opts.blockSize());
            }
            String dump = System.getenv(LlmEngine.ROUTING_DUMP_ENV);
            rows = new PrefixCheckRun(PrefixCheckTarget.of(engine))
                    .run(prefixTokens, tailTokens, seed, () -> routing(dump, err));
        }
        boolean pass = rows.stream().allMatch(r -> r.pass(tolerance));
        out.printf(
                "prefixcheck %s: prefix %d tokens (%d cached blocks), tail %d, tolerance %.6f (relative L2 per block)%n",
                label, prefixTokens, prefixTokens / opts.blockSize(), tailTokens, tolerance);
        out.printf(
                "%-62s %-10s %-11s %-9s %-7s %s%n",
                "check", "positions", "worst rel", "max bf16", "result", "worst at");
        for (PrefixCheckRun.Row r : rows) {
            KvDiff.Stat s = r.stat();
            String result = !r.gated() ? "info" : r.pass(tolerance) ? "PASS" : "FAIL";
            out.printf(
                    "%-62s %-10s %-11.3e %-9.1f %-7s %s%s%n",
                    r.check(),
                    r.positions(),
                    s.worstRel(),
                    s.maxSpacings(),
                    result,
                    s.worstGroup(),
                    s.nonFinite() ? " (non-finite values)" : "");
        }
        out.println("prefixcheck: " + (pass ? "PASS " : "FAIL ") + label);
        write(label, opts, pass ? "PASS" : "FAIL", null, rows);
        return pass ? ExitCodes.OK : ExitCodes.CHECK_FAILED;
    }

    /** The routing dump's steps, or null (none asked for, or unreadable: said on {@code err}). */
    static List<RoutingRecords.Step> routing(String file, PrintWriter err) {
        if (file == null || file.isBlank()) {
            return null;
        }
        try {
            return RoutingRecords.read(Path.of(file));
        } catch (IOException | RuntimeException e) {
            err.println("prefixcheck: the routing dump " + file + " is not readable (" + e.getMessage()
                    + "); the layers after MoE routing are reported, not gated");
            return null;
        }
    }

    private void write(String label, EngineOptions opts, String result, String reason, List<PrefixCheckRun.Row> rows)
            throws IOException {
        if (json == null) {
            return;
        }
        ObjectNode root = JSON.createObjectNode();
        root.put("model", opts.modelDir().toString());
        root.put("label", label);
        root.put("tp", opts.tp());
        root.put("virtual_ranks", opts.virtualRanks());
        root.put("prefix_tokens", prefixTokens);
        root.put("tail_tokens", tailTokens);
        root.put("tolerance", tolerance);
        root.put("result", result);
        if (reason != null) {
            root.put("reason", reason);
        }
        ArrayNode a = root.putArray("rows");
        for (PrefixCheckRun.Row r : rows) {
            KvDiff.Stat s = r.stat();
            ObjectNode o = a.addObject();
            o.put("check", r.check());
            o.put("positions", r.positions());
            o.put("expect_match", r.expectMatch());
            o.put("gated", r.gated());
            o.put("result", !r.gated() ? "info" : r.pass(tolerance) ? "PASS" : "FAIL");
            o.put("worst_rel_l2", s.worstRel());
            o.put("worst_group", s.worstGroup());
            o.put("max_abs", s.maxAbs());
            o.put("max_bf16_spacings", s.maxSpacings());
            o.put("groups", s.groups());
            o.put("elements", s.elements());
            o.put("non_finite", s.nonFinite());
        }
        JSON.writerWithDefaultPrettyPrinter().writeValue(json.toFile(), root);
    }
}
