package io.tensorlane.runtime.cli;

import io.tensorlane.contract.EngineEnv;
import io.tensorlane.runtime.common.EngineSettings;
import io.tensorlane.runtime.llm.EngineOptions;
import io.tensorlane.runtime.llm.KvCacheDtype;
import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine.Option;

/** The engine options {@code generate} and {@code bench-model} share (a picocli mixin). */
public final class EngineArgs {
    @Option(
            names = "--model",
            required = true,
            description = "Model directory (config.json, *.safetensors, tokenizer.json).")
    Path model;

    @Option(
            names = "--tp",
            defaultValue = "1",
            description = "Tensor-parallel degree: ranks, one per GPU (default ${DEFAULT-VALUE}).")
    int tp;

    @Option(
            names = "--virtual-ranks",
            description = "Put every rank on GPU 0 (tests TP on one GPU; not for timing the interconnect).")
    boolean virtualRanks;

    @Option(
            names = "--max-batch-tokens",
            defaultValue = "2048",
            description = "Most tokens per step, the prefill chunk (default ${DEFAULT-VALUE}).")
    int maxBatchTokens;

    @Option(
            names = "--memory-fraction",
            defaultValue = "0.9",
            description = "Share of each GPU's memory to use (default ${DEFAULT-VALUE}).")
    double memoryFraction;

    @Option(names = "--no-graphs", description = "Launch decode steps eagerly instead of replaying CUDA graphs.")
    boolean noGraphs;

    @Option(names = "--nccl", description = "Allreduce through NCCL instead of the custom kernels (one GPU per rank).")
    boolean nccl;

    @Option(names = "--nccl-lib", description = "Path of libnccl.so.2.")
    String ncclLib;

    @Option(
            names = "--baseline-kernels",
            description = "The engine's earlier kernels: the split-key attention kernel for prefill tokens too "
                    + "(the tensor-core prefill kernel off), cuBLAS for every linear (the one-token GEMV "
                    + "kernel off) and the allreduce and the norm apart (the fused kernel off): a same-run "
                    + "baseline for benchmarks.")
    boolean baselineKernels;

    @Option(
            names = KvCacheDtype.OPTION,
            paramLabel = "DTYPE",
            description = "KV cache elements: " + KvCacheDtype.CHOICES + " (fp8: e4m3 codes with per-layer k/v "
                    + "scales, twice the tokens in the same memory; default: " + EngineEnv.KV_CACHE_DTYPE
                    + ", else auto = the activations' dtype).")
    String kvCacheDtype;

    /** The engine's options from these arguments and the command's own sizes (maxModelLen 0: the engine's default). */
    EngineOptions options(int maxSeqs, int maxModelLen, long kvCacheTokens, int maxLogitRows) {
        return options(maxSeqs, maxModelLen, kvCacheTokens, maxLogitRows, System.getenv());
    }

    /** {@link #options(int, int, long, int)} with the environment {@code env} ({@link EngineEnv#KV_CACHE_DTYPE}). */
    EngineOptions options(int maxSeqs, int maxModelLen, long kvCacheTokens, int maxLogitRows, Map<String, String> env) {
        return new EngineOptions(
                        model,
                        tp,
                        virtualRanks,
                        maxSeqs,
                        maxBatchTokens,
                        maxModelLen,
                        kvCacheTokens,
                        memoryFraction,
                        maxLogitRows,
                        !noGraphs,
                        nccl,
                        ncclLib,
                        EngineSettings.BLOCK_SIZE)
                .withBaselineKernels(baselineKernels)
                .withKvCacheDtype(KvCacheDtype.of(kvCacheDtype, env));
    }
}
