package io.tensorlane.runtime.llm;

import java.util.Locale;

/**
 * The engine's kernel choices where it has a faster kernel and an earlier one: {@code bench-model --baseline-kernels}
 * takes {@link #BASELINE} (the benchmark's same-run baseline), everything else {@link #fromEnv()}.
 *
 * @param tiledPrefill the tensor-core prefill attention kernel (false: the split-key kernel for every token)
 * @param gemv         which linears of one-token steps take the GEMV kernel instead of cuBLAS
 * @param fusedNorm    on two or more ranks, the allreduce fused with the residual add + RMSNorm where the table routes
 *                     the message to OneStage ({@link io.tensorlane.runtime.engine.FusedNorm}); {@value #FUSED_NORM_ENV}
 *                     = {@code on} (unset) or {@code off}
 * @param push         on two or more ranks, OneStage's push variant where it fits
 *                     ({@link io.tensorlane.runtime.engine.Communicator#setPush}); {@value #PUSH_ENV} = {@code on} or
 *                     {@code off} (unset: off until it is measured and checked on two real GPUs)
 * @param fp8TensorMinTokens FP8 linears of steps of at least this many tokens run on FP8 tensor cores (activations
 *                     quantized per token, {@link CublasLt}) where the GPU and the weight's scale layout allow it, smaller
 *                     steps the FP8 GEMV; 0: never (the weight dequantized to the model's dtype, then cuBLAS);
 *                     {@value #FP8_GEMM_ENV} = {@code auto} (unset: {@value #FP8_TENSOR_MIN_TOKENS}), {@code off} or a
 *                     number of tokens
 * @param gemvMma      which one-token (and FP8 few-token) GEMVs run on the tensor cores ({@link GemvMma}: by weight
 *                     type; {@value #GEMV_MMA_ENV} = {@code auto} (unset), {@code on} or {@code off})
 * @param fusedGemv    one-token steps on one rank fold the residual add, the RMSNorms and silu into the one-warp-per-row
 *                     linears around them ({@link FusedGemvKernels}: three kernels fewer a layer, the same bits);
 *                     {@value #FUSED_GEMV_ENV} = {@code on} (unset) or {@code off}
 * @param moeFusedDecode which MoE steps take the fused decode kernels ({@link MoeFusedDecode}; {@link MoeDecodeKernels}: router GEMV
 *                     + top-k in one kernel for up to {@value MoeDecodeKernels#ROUTER_MAX_TOKENS} tokens, silu in the
 *                     gate/up kernel, the weighted sum in the down kernel); {@value #MOE_FUSED_DECODE_ENV} = {@code
 *                     auto} (unset: one-token steps of bf16/fp16 experts), {@code on} or {@code off}
 * @param moeFp8Gemm   MoE long steps run FP8 experts on FP8 tensor cores, every routed expert of a projection in one
 *                     launch ({@link Fp8ExpertGemm}; where fp8TensorMinTokens is not 0 and the GPU and the geometry
 *                     allow it); {@value #MOE_FP8_GEMM_ENV} = {@code on} (unset) or {@code off}
 */
public record KernelChoices(
        boolean tiledPrefill,
        GemvPolicy gemv,
        boolean fusedNorm,
        boolean push,
        int fp8TensorMinTokens,
        boolean moeGroupedGemm,
        GemvMma gemvMma,
        boolean fusedGemv,
        MoeFusedDecode moeFusedDecode,
        boolean moeFp8Gemm) {
    public static final String FUSED_NORM_ENV = "TENSORLANE_FUSED_NORM";
    public static final String PUSH_ENV = "TENSORLANE_ALLREDUCE_PUSH";
    public static final String FP8_GEMM_ENV = "TENSORLANE_FP8_GEMM";
    public static final String GEMV_MMA_ENV = GemvMma.ENV;
    public static final String FUSED_GEMV_ENV = "TENSORLANE_FUSED_GEMV";
    /**
     * {@code on} (unset): a MoE layer's long steps run each projection's experts in one cuBLAS grouped GEMM (24.0 vs
     * 34.3 ms for a 2,048-token prefill of 8 Qwen3-30B-A3B layers; outputs checked against transformers at TP 1-8, both
     * H200, 2026-12-02); {@code off}: one GEMM per expert.
     */
    public static final String MOE_GROUPED_GEMM_ENV = "TENSORLANE_MOE_GROUPED_GEMM";
    /**
     * {@code on} (unset): speculative verify steps (several tokens of a sequence in one step) replay CUDA graphs like
     * decode steps ({@link GraphBuckets}); {@code off}: they run eagerly (decode steps keep their graphs). Not a kernel
     * choice of {@link #BASELINE}: read by the engine's step runner on its own ({@link #specGraphs}).
     */
    public static final String SPEC_GRAPHS_ENV = "TENSORLANE_SPEC_GRAPHS";

    /** {@value #SPEC_GRAPHS_ENV}'s value: on (also unset or blank) or off; anything else is an error naming it. */
    public static boolean specGraphs(String value) {
        return parseOnOff(SPEC_GRAPHS_ENV, value, true);
    }

    /**
     * {@code on}: the kernels of a captured step launch while the kernel before them still runs (programmatic dependent
     * launch on sm_90 and later: {@link io.tensorlane.runtime.engine.GraphEdges}), the default; {@code off}: every
     * graph edge serializes fully. On by default since the H200 run of 2026-12-04 18:37 UTC (results/h200-2026-12-04-pdl/):
     * bit-identical ids and logprobs to off for llama, qwen3 and qwen3moe at TP 1 and 2, greedy and sampled, and the
     * batch-1 step 1.9% (bf16), 5.4% (per-channel FP8) and 8.1% (block FP8) faster. Read by the engine's step runner on
     * its own ({@link #programmaticLaunch}).
     */
    public static final String PDL_ENV = "TENSORLANE_PDL";

    /** {@value #PDL_ENV}'s value: on (also unset or blank) or off; anything else is an error naming it. */
    public static boolean programmaticLaunch(String value) {
        return parseOnOff(PDL_ENV, value, true);
    }

    /**
     * {@code on} (unset): the draft model's greedy guesses run as one chain of steps on the GPU with one read-back ({@link
     * ChainedSteps}); {@code off}: one step and one read-back a guess. On by default since the H200 run of 2026-12-04
     * (results/h200-2026-12-04-draft-chain/): with it the trained pair's greedy output passed the same checks against
     * transformers and the plain run at TP 1 and 2, the draft's guesses and acceptance counts equalled those of off
     * over 4,096 tokens, its steps took 82.4 us against 97.4 and batch-1 tokens/s rose from 1.582x to 1.638x the plain
     * run. Read by the engine's step runner.
     */
    public static final String DRAFT_CHAIN_ENV = "TENSORLANE_DRAFT_CHAIN";

    /** {@value #DRAFT_CHAIN_ENV}'s value: on (also unset or blank) or off; anything else is an error naming it. */
    public static boolean draftChain(String value) {
        return parseOnOff(DRAFT_CHAIN_ENV, value, true);
    }

    /**
     * {@code on} (unset): MoE long steps run FP8 experts on FP8 tensor cores, every routed expert of a projection in
     * one launch ({@link Fp8ExpertGemm}, W8A8, where {@value #FP8_GEMM_ENV} is not {@code off}, the GPU has FP8 tensor
     * cores and the projections are multiples of 128); {@code off}: each routed expert dequantized for its own cuBLAS
     * GEMM (W8A16). On by default since device-fp8moe.sh passed with it (routing near-ties only, TP 1/2/4; H100,
     * 2026-12-07 14:37 UTC, mma.sync) and the 2,048-token prefill of 8 Qwen3-30B-A3B layers took 14.6 ms against 27.1
     * dequantized (bf16 12.5); on Hopper it runs on wgmma since (block FP8 passed at 18:18 UTC on an H200, the prefill
     * 11.7 ms against bf16 12.5).
     */
    public static final String MOE_FP8_GEMM_ENV = "TENSORLANE_MOE_FP8_GEMM";

    /** {@link #moeFusedDecode}'s switch. */
    public static final String MOE_FUSED_DECODE_ENV = MoeFusedDecode.ENV;
    /** What {@code auto} means: tensor cores from two tokens (the FP8 GEMV of 2-8 tokens is compute-bound). */
    public static final int FP8_TENSOR_MIN_TOKENS = 2;

    /**
     * The earlier kernels: split-key attention for prefill tokens, cuBLAS for every linear, allreduce and norm apart,
     * OneStage pulling.
     */
    public static final KernelChoices BASELINE = new KernelChoices(
            false, GemvPolicy.OFF, false, false, 0, false, GemvMma.OFF, false, MoeFusedDecode.OFF, false);

    /**
     * The choices of {@link GemvPolicy#ENV}, {@value #FUSED_NORM_ENV}, {@value #PUSH_ENV} and {@value #FP8_GEMM_ENV}
     * (a bad value is an error naming the choices).
     */
    public static KernelChoices parse(String gemv, String fusedNorm, String push, String fp8Gemm) {
        return parse(gemv, fusedNorm, push, fp8Gemm, null);
    }

    /** {@link #parse(String, String, String, String)} and {@value #MOE_GROUPED_GEMM_ENV}. */
    public static KernelChoices parse(String gemv, String fusedNorm, String push, String fp8Gemm, String moeGrouped) {
        return parse(gemv, fusedNorm, push, fp8Gemm, moeGrouped, null);
    }

    /** {@link #parse(String, String, String, String, String)} and {@value #GEMV_MMA_ENV}. */
    public static KernelChoices parse(
            String gemv, String fusedNorm, String push, String fp8Gemm, String moeGrouped, String gemvMma) {
        return parse(gemv, fusedNorm, push, fp8Gemm, moeGrouped, gemvMma, null);
    }

    /** {@link #parse(String, String, String, String, String, String)} and {@value #FUSED_GEMV_ENV}. */
    public static KernelChoices parse(
            String gemv,
            String fusedNorm,
            String push,
            String fp8Gemm,
            String moeGrouped,
            String gemvMma,
            String fusedGemv) {
        return new KernelChoices(
                true,
                GemvPolicy.parse(gemv),
                parseOnOff(FUSED_NORM_ENV, fusedNorm, true),
                parseOnOff(PUSH_ENV, push, false),
                parseFp8(fp8Gemm),
                parseOnOff(MOE_GROUPED_GEMM_ENV, moeGrouped, true),
                GemvMma.parse(gemvMma),
                parseOnOff(FUSED_GEMV_ENV, fusedGemv, true),
                MoeFusedDecode.AUTO,
                true);
    }

    /** These choices with {@link #moeFusedDecode} from {@value #MOE_FUSED_DECODE_ENV}'s value (unset: auto). */
    public KernelChoices withMoeFusedDecode(String value) {
        return withMoe(MoeFusedDecode.parse(value), moeFp8Gemm);
    }

    /**
     * These choices with {@link #moeFp8Gemm} from {@value #MOE_FP8_GEMM_ENV}'s value: on (also unset or blank) or off;
     * anything else is an error naming the variable.
     */
    public KernelChoices withMoeFp8Gemm(String value) {
        return withMoe(moeFusedDecode, parseOnOff(MOE_FP8_GEMM_ENV, value, true));
    }

    private KernelChoices withMoe(MoeFusedDecode fusedDecode, boolean fp8Gemm) {
        return new KernelChoices(
                tiledPrefill,
                gemv,
                fusedNorm,
                push,
                fp8TensorMinTokens,
                moeGroupedGemm,
                gemvMma,
                fusedGemv,
                fusedDecode,
                fp8Gemm);
    }

    /** The choices of this process's environment. */
    public static KernelChoices fromEnv() {
        return parse(
                        System.getenv(GemvPolicy.ENV),
                        System.getenv(FUSED_NORM_ENV),
                        System.getenv(PUSH_ENV),
                        System.getenv(FP8_GEMM_ENV),
                        System.getenv(MOE_GROUPED_GEMM_ENV),
                        System.getenv(GEMV_MMA_ENV),
                        System.getenv(FUSED_GEMV_ENV))
                .withMoeFusedDecode(System.getenv(MOE_FUSED_DECODE_ENV))
                .withMoeFp8Gemm(System.getenv(MOE_FP8_GEMM_ENV));
    }

    static int parseFp8(String value) {
        if (value == null || value.isBlank() || value.trim().equalsIgnoreCase("auto")) {
            return FP8_TENSOR_MIN_TOKENS;
        }
        String v = value.trim();
        if (v.equalsIgnoreCase("off")) {
            return 0;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // the message below
        }
        throw new IllegalArgumentException(
                FP8_GEMM_ENV + "='" + value + "': expected auto, off or a number of tokens >= 1");
    }

    /**
     * A three-way switch's value ({@link GemvMma}, {@link MoeFusedDecode}): {@code auto} (also unset or blank), {@code on}
     * or {@code off}; anything else is an error naming the variable {@code name}.
     */
    static <E> E parseAutoOnOff(String name, String value, E auto, E on, E off) {
        if (value == null || value.isBlank()) {
            return auto;
        }
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "auto" -> auto;
            case "on" -> on;
            case "off" -> off;
            default -> throw new IllegalArgumentException(name + "='" + value + "': expected auto, on or off");
        };
    }

    private static boolean parseOnOff(String name, String value, boolean unset) {
        if (value == null || value.isBlank()) {
            return unset;
        }
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "on" -> true;
            case "off" -> false;
            default -> throw new IllegalArgumentException(name + "='" + value + "': expected on or off");
        };
    }
}
