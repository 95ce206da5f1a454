package io.tensorlane.runtime.options;

import io.tensorlane.contract.Allreduce;
import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.runtime.common.EngineSettings;
import io.tensorlane.runtime.llm.EngineOptions;
import io.tensorlane.runtime.llm.KvCacheDtype;
import io.tensorlane.runtime.sched.SpeculativeConfig;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * The engine options of every command that loads a model ({@code generate}, {@code bench-model}, {@code serve}): one
 * picocli mixin, so the names, meanings and defaults are the same everywhere. Each option falls back to the variable
 * the operator renders for {@code serve} ({@link EngineEnv}), then to its default; a flag wins over the environment.
 * The fields hold what was given (null: not given); {@link #resolve} applies the environment and the defaults.
 */
public final class EngineArgs {
    /** Default of {@code --max-batch-tokens} (and of {@link EngineEnv#MAX_BATCH_TOKENS}). */
    public static final int DEFAULT_MAX_BATCH_TOKENS = 2048;

    /** Default of {@code --memory-fraction} for the commands that have one ({@code serve} has none: the plan's). */
    public static final double DEFAULT_MEMORY_FRACTION = 0.9;

    @Option(
            names = "--model",
            paramLabel = "DIR",
            description = "Model directory (config.json, *.safetensors, tokenizer.json; default: " + EngineEnv.MODEL_DIR
                    + ").")
    Path model;

    @Option(
            names = "--tp",
            paramLabel = "N",
            description = "Tensor-parallel degree: ranks, one per GPU (default: " + EngineEnv.WORLD_SIZE + ", else 1).")
    Integer tp;

    @Option(
            names = "--virtual-ranks",
            arity = "0..1",
            fallbackValue = "",
            paramLabel = "N",
            description = "Put every rank on GPU 0 (tests TP on one GPU; not for timing the interconnect). "
                    + "Deprecated form: --virtual-ranks N = --tp N --virtual-ranks.")
    String virtualRanks;

    @Option(
            names = "--max-model-len",
            paramLabel = "TOKENS",
            description = "Longest sequence (default: " + EngineEnv.MAX_MODEL_LENGTH
                    + ", else 0 = min(max_position_embeddings, 8192)).")
    Integer maxModelLen;

    @Option(
            names = "--max-batch-tokens",
            paramLabel = "TOKENS",
            description = "Most tokens per step, the prefill chunk (default: " + EngineEnv.MAX_BATCH_TOKENS + ", else "
                    + DEFAULT_MAX_BATCH_TOKENS + ").")
    Integer maxBatchTokens;

    @Option(
            names = "--kv-cache-tokens",
            paramLabel = "TOKENS",
            description = "KV cache size in tokens (default: " + EngineEnv.KV_CACHE_TOKENS
                    + ", else 0 = what the memory fraction leaves; bench-model: what the run needs).")
    Long kvCacheTokens;

    @Option(
            names = KvCacheDtype.OPTION,
            paramLabel = "DTYPE",
            description = "KV cache elements: " + KvCacheDtype.CHOICES + " (fp8: e4m3 codes with per-layer k/v "
                    + "scales, twice the tokens in the same memory; default: " + EngineEnv.KV_CACHE_DTYPE
                    + ", else auto = the activations' dtype).")
    String kvCacheDtype;

    @Option(
            names = "--memory-fraction",
            paramLabel = "F",
            description = "Share of each GPU's memory to use, in (0, 1) (default: " + EngineEnv.MEMORY_FRACTION
                    + ", else " + DEFAULT_MEMORY_FRACTION + "; serve: required, the operator sets it).")
    Double memoryFraction;

    @Option(
            names = "--no-graphs",
            description = "Launch decode and verify steps eagerly instead of replaying CUDA graphs.")
    boolean noGraphs;

    @Option(
            names = "--nccl",
            negatable = true,
            description = "Allreduce through NCCL instead of the custom kernels (one GPU per rank; default: "
                    + EngineEnv.ALLREDUCE + "=NCCL; --no-nccl: the custom kernels whatever it says).")
    Boolean nccl;

    @Option(
            names = "--nccl-lib",
            paramLabel = "PATH",
            description = "Path of libnccl.so.2 (default: TENSORLANE_NCCL_LIB, else the loader's search).")
    String ncclLib;

    @Option(
            names = "--baseline-kernels",
            description = "The engine's earlier kernels: the split-key attention kernel for prefill tokens too "
                    + "(the tensor-core prefill kernel off), cuBLAS for every linear (the one-token GEMV "
                    + "kernel off) and the allreduce and the norm apart (the fused kernel off): a same-run "
                    + "baseline for benchmarks.")
    boolean baselineKernels;

    @Option(
            names = "--speculative",
            paramLabel = "SPEC",
            description =
                    "Speculative decoding: ngram:k=4,n=3 (prompt lookup: up to k guessed tokens per step from the "
                            + "longest of the last n..1 tokens seen before, checked by the model in one step; greedy and sampled "
                            + "output stay as without it), draft:DIR,k=4[,batch=B] (a smaller model with the target's tokenizer, loaded beside it at TP 1 on "
                            + "rank 0's GPU; it guesses in steps of at most B decoding sequences, default 1), or off "
                            + "(default: "
                            + EngineEnv.SPECULATIVE
                            + ", else off). Verify steps replay CUDA graphs (TENSORLANE_SPEC_GRAPHS=off: eagerly).")
    String speculative;

    /**
     * The options with the environment and the defaults applied.
     *
     * @param model           the model directory; null when neither {@code --model} nor {@link EngineEnv#MODEL_DIR}
     * @param tpGiven         the TP degree the command line gave ({@code --tp}, or the deprecated
     *                        {@code --virtual-ranks N}); null when only the environment or the default says
     * @param ncclGiven       {@code --nccl} (true), {@code --no-nccl} (false) or neither (null)
     * @param memoryFraction  null when neither the flag, the variable nor a default (serve's plan has none)
     * @param kvCacheTokensBy where {@code kvCacheTokens} came from (the option, the variable, or "default"), for messages
     */
    /** Whether {@code --max-model-len} was given on the command line (not from the environment). */
    public boolean maxModelLenFlag() {
        return maxModelLen != null;
    }

    public record Resolved(
            Path model,
            Integer tpGiven,
            int tp,
            boolean virtualRanks,
            int maxModelLen,
            int maxBatchTokens,
            long kvCacheTokens,
            String kvCacheTokensBy,
            KvCacheDtype kvCacheDtype,
            Double memoryFraction,
            boolean graphs,
            boolean nccl,
            Boolean ncclGiven,
            String ncclLib,
            boolean baselineKernels,
            SpeculativeConfig speculative) {

        /** Logits rows a step of {@code maxSeqs} sequences may need: {@code base}, or k + 1 per sequence speculating. */
        public int logitRows(int maxSeqs, int base) {
            return Math.max(base, verifyTokens(maxSeqs));
        }

        /** The most tokens of a verify step of {@code maxSeqs} sequences; 0 without speculation. */
        public int verifyTokens(int maxSeqs) {
            return speculative == null ? 0 : speculative.logitRows(maxSeqs);
        }

        /** The model directory, or a message naming both ways to give it. */
        public Path requireModel() {
            if (model == null) {
                throw new IllegalArgumentException("no model: give --model DIR or set " + EngineEnv.MODEL_DIR);
            }
            return model;
        }

        /** The engine's options with the command's own sizes ({@code maxModelLen}, {@code kvTokens} as resolved or not). */
        public EngineOptions options(int maxSeqs, int maxModelLen, long kvTokens, int maxLogitRows) {
            if (memoryFraction == null) {
                throw new IllegalArgumentException(
                        "no memory fraction: give --memory-fraction or set " + EngineEnv.MEMORY_FRACTION);
            }
            return new EngineOptions(
                            requireModel(),
                            tp,
                            virtualRanks,
                            maxSeqs,
                            maxBatchTokens,
                            maxModelLen,
                            kvTokens,
                            memoryFraction,
                            logitRows(maxSeqs, maxLogitRows),
                            graphs,
                            nccl,
                            ncclLib,
                            EngineSettings.BLOCK_SIZE)
                    .withBaselineKernels(baselineKernels)
                    .withKvCacheDtype(kvCacheDtype)
                    .withVerifyTokens(verifyTokens(maxSeqs));
        }
    }

    /** {@link #resolve(Map, Double, PrintWriter)} with the process's environment. */
    public Resolved resolve(Double defaultFraction, PrintWriter err) {
        return resolve(System.getenv(), defaultFraction, err);
    }

    /**
     * Applies {@code env} and the defaults; a bad value names the option or variable it came from. The deprecated
     * {@code --virtual-ranks N} prints one line on {@code err}.
     *
     * @param defaultFraction the memory fraction without flag and variable (null: none, the caller requires one)
     */
    public Resolved resolve(Map<String, String> env, Double defaultFraction, PrintWriter err) {
        Path dir = model;
        if (dir == null) {
            String v = env.get(EngineEnv.MODEL_DIR);
            dir = v == null || v.isBlank() ? null : Path.of(v.trim());
        }
        Integer given = tpGiven(err);
        int ranks = (int) whole(given, "--tp", env, EngineEnv.WORLD_SIZE, 1, 1, BufferLayout.MAX_RANKS);
        int len = (int) whole(maxModelLen, "--max-model-len", env, EngineEnv.MAX_MODEL_LENGTH, 0, 0, Integer.MAX_VALUE);
        int batch = (int) whole(
                maxBatchTokens,
                "--max-batch-tokens",
                env,
                EngineEnv.MAX_BATCH_TOKENS,
                DEFAULT_MAX_BATCH_TOKENS,
                1,
                Integer.MAX_VALUE);
        long kv = whole(kvCacheTokens, "--kv-cache-tokens", env, EngineEnv.KV_CACHE_TOKENS, 0, 0, Long.MAX_VALUE);
        String kvBy = kvCacheTokens != null
                ? "--kv-cache-tokens"
                : isSet(env, EngineEnv.KV_CACHE_TOKENS) ? EngineEnv.KV_CACHE_TOKENS : "default";
        return new Resolved(
                dir,
                given,
                ranks,
                virtualRanks != null,
                len,
                batch,
                kv,
                kvBy,
                KvCacheDtype.of(kvCacheDtype, env),
                fraction(env, defaultFraction),
                !noGraphs,
                nccl != null ? nccl : ncclFromEnv(env),
                nccl,
                ncclLib,
                baselineKernels,
                speculative(env));
    }

    /** {@code --speculative}, else {@link EngineEnv#SPECULATIVE}; null: off. */
    private SpeculativeConfig speculative(Map<String, String> env) {
        return speculative != null
                ? SpeculativeConfig.parse(speculative, "--speculative")
                : SpeculativeConfig.parse(env.get(EngineEnv.SPECULATIVE), EngineEnv.SPECULATIVE);
    }

    /** {@code --tp}, or the ranks of the deprecated {@code --virtual-ranks N}; null when neither. */
    private Integer tpGiven(PrintWriter err) {
        if (virtualRanks == null || virtualRanks.isBlank()) {
            return tp;
        }
        int n;
        try {
            n = Integer.parseInt(virtualRanks.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "--virtual-ranks takes no value (deprecated: a number of ranks N), got '" + virtualRanks + "'");
        }
        if (tp != null && tp != n) {
            throw new IllegalArgumentException(
                    "--virtual-ranks " + n + " and --tp " + tp
                            + " disagree: give --tp N --virtual-ranks (--virtual-ranks N is the deprecated --tp N --virtual-ranks)");
        }
        if (err != null) {
            err.println("warning: --virtual-ranks " + n + " is deprecated: give --tp " + n + " --virtual-ranks");
            err.flush();
        }
        return n;
    }

    private Double fraction(Map<String, String> env, Double dflt) {
        if (memoryFraction != null) {
            return inUnitInterval(memoryFraction, "--memory-fraction", String.valueOf(memoryFraction));
        }
        String v = env.get(EngineEnv.MEMORY_FRACTION);
        if (v == null || v.isBlank()) {
            return dflt;
        }
        try {
            return inUnitInterval(Double.parseDouble(v.trim()), EngineEnv.MEMORY_FRACTION, "'" + v + "'");
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    EngineEnv.MEMORY_FRACTION + " must be a number in (0, 1), got '" + v + "'");
        }
    }

    private static double inUnitInterval(double f, String source, String shown) {
        if (!(f > 0 && f < 1)) {
            throw new IllegalArgumentException(source + " must be a number in (0, 1), got " + shown);
        }
        return f;
    }

    private static boolean ncclFromEnv(Map<String, String> env) {
        String v = env.get(EngineEnv.ALLREDUCE);
        if (v == null || v.isBlank()) {
            return false;
        }
        return Allreduce.find(v.trim())
                        .orElseThrow(() -> new IllegalArgumentException(
                                EngineEnv.ALLREDUCE + " must be Custom, NCCL or None, got '" + v + "'"))
                == Allreduce.NCCL;
    }

    private static boolean isSet(Map<String, String> env, String name) {
        String v = env.get(name);
        return v != null && !v.isBlank();
    }

    /** The flag, else the variable, else {@code dflt}; a value outside min..max names where it came from. */
    private static long whole(
            Number flag, String option, Map<String, String> env, String var, long dflt, long min, long max) {
        long v = flag != null ? flag.longValue() : EngineSettings.envLong(env, var, dflt);
        if (v < min || v > max) {
            String range = max == Integer.MAX_VALUE || max == Long.MAX_VALUE ? ">= " + min : min + ".." + max;
            throw new IllegalArgumentException(
                    flag != null
                            ? option + " must be " + range + ", got " + v
                            : var + " must be " + range + ", got '" + env.get(var) + "'");
        }
        return v;
    }
}
