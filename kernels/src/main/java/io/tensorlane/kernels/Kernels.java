package io.tensorlane.kernels;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.DType;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** Where the compiled kernels live and what their entry points are called (mirrors tl_allreduce.cu and tl_model.cu). */
public final class Kernels {
    /** Classpath resource of the fatbin built by nvcc in this module's build. */
    public static final String FATBIN_RESOURCE = "io/tensorlane/kernels/tl_allreduce.fatbin";
    /** Classpath resource of the decoder's forward-pass kernels (tl_model.cu), built by the same script and arches. */
    public static final String MODEL_FATBIN_RESOURCE = "io/tensorlane/kernels/tl_model.fatbin";
    /** Model kernels instantiated per element type: {@code <base>_bf16} and {@code <base>_fp16}. */
    public static final java.util.List<String> MODEL_TYPED_KERNELS = java.util.List.of(
            "tl_embed",
            "tl_add_rmsnorm",
            "tl_qkv_rope",
            "tl_attention",
            "tl_attn_split_g1_v1",
            "tl_attn_split_g1_v2",
            "tl_attn_split_g1_v4",
            "tl_attn_split_g2_v1",
            "tl_attn_split_g2_v2",
            "tl_attn_split_g2_v4",
            "tl_attn_split_g4_v1",
            "tl_attn_split_g4_v2",
            "tl_attn_combine",
            "tl_attn_prefill_v1",
            "tl_attn_prefill_v2",
            "tl_silu_mul",
            "tl_gather_rows",
            "tl_gemv",
            "tl_gemv_fp8_block",
            "tl_gemv_fp8_row",
            "tl_gemv1_fp8_block",
            "tl_gemv1_fp8_row",
            "tl_dequant_fp8_block",
            "tl_dequant_fp8_row",
            "tl_quant_fp8",
            // one-token linears with the residual add, RMSNorm and silu folded in (tl_gemv_fused.cuh)
            "tl_gemv_norm",
            "tl_gemv_norm_silu",
            "tl_gemv_res",
            "tl_gemv_norm_fp8_block",
            "tl_gemv_norm_silu_fp8_block",
            "tl_gemv_res_fp8_block",
            "tl_gemv_norm_fp8_row",
            "tl_gemv_norm_silu_fp8_row",
            "tl_gemv_res_fp8_row",
            // their inner-loop variants: _p pipelined loads, _px also x staged as fp32, _pxb (FP8) also the integer
            // e4m3 decode (runtime's FusedGemvVariant)
            "tl_gemv_norm_p",
            "tl_gemv_norm_silu_p",
            "tl_gemv_res_p",
            "tl_gemv_norm_px",
            "tl_gemv_norm_silu_px",
            "tl_gemv_res_px",
            "tl_gemv_norm_fp8_block_p",
            "tl_gemv_norm_silu_fp8_block_p",
            "tl_gemv_res_fp8_block_p",
            "tl_gemv_norm_fp8_block_px",
            "tl_gemv_norm_silu_fp8_block_px",
            "tl_gemv_res_fp8_block_px",
            "tl_gemv_norm_fp8_block_pxb",
            "tl_gemv_norm_silu_fp8_block_pxb",
            "tl_gemv_res_fp8_block_pxb",
            "tl_gemv_norm_fp8_row_p",
            "tl_gemv_norm_silu_fp8_row_p",
            "tl_gemv_res_fp8_row_p",
            "tl_gemv_norm_fp8_row_px",
            "tl_gemv_norm_silu_fp8_row_px",
            "tl_gemv_res_fp8_row_px",
            "tl_gemv_norm_fp8_row_pxb",
            "tl_gemv_norm_silu_fp8_row_pxb",
            "tl_gemv_res_fp8_row_pxb",
            // the decode linears on the tensor cores (tl_gemv_mma.cuh): dense T and FP8 weights, 1 and up to 8 tokens
            "tl_gemv_mma1",
            "tl_gemv_mma",
            "tl_gemv_mma1_fp8_block",
            "tl_gemv_mma1_fp8_row",
            "tl_gemv_mma_fp8_block",
            "tl_gemv_mma_fp8_row",
            "tl_moe_gate_up",
            "tl_moe_down",
            "tl_moe_combine_f32",
            "tl_moe_combine",
            // the grouped FP8 GEMM of long MoE steps (tl_moe_gemm_fp8.cuh)
            "tl_moe_gemm_fp8_block",
            "tl_moe_gemm_fp8_row",
            // the MoE pairs over FP8 experts (tl_moe_fp8.cuh)
            "tl_moe_gate_up_fp8_block",
            "tl_moe_gate_up_fp8_row",
            "tl_moe_down_fp8_block",
            "tl_moe_down_fp8_row",
            // the MoE decode kernels with fewer launches (tl_moe_fused.cuh): router GEMV + top-k, gate/up + silu,
            // down + the weighted sum
            "tl_moe_router",
            "tl_moe_router_norm",
            "tl_moe_gate_up_silu",
            "tl_moe_down_sum",
            "tl_moe_gate_up_silu_fp8_block",
            "tl_moe_gate_up_silu_fp8_row",
            "tl_moe_down_sum_fp8_block",
            "tl_moe_down_sum_fp8_row",
            // the down + weighted sum added to the residual stream (a fused one-token step)
            "tl_moe_down_sum_res",
            "tl_moe_down_sum_res_fp8_block",
            "tl_moe_down_sum_res_fp8_row",
            // the FP8 KV cache's (e4m3 codes + the layer's {k_scale, v_scale}: tl_kvcache.cuh)
            "tl_qkv_rope_kv8",
            "tl_attention_kv8",
            "tl_attn_split_g1_v1_kv8",
            "tl_attn_split_g1_v2_kv8",
            "tl_attn_split_g1_v4_kv8",
            "tl_attn_split_g2_v1_kv8",
            "tl_attn_split_g2_v2_kv8",
            "tl_attn_split_g2_v4_kv8",
            "tl_attn_split_g4_v1_kv8",
            "tl_attn_split_g4_v2_kv8",
            "tl_attn_prefill_v1_kv8",
            "tl_attn_prefill_v2_kv8",
            // decode attention with the rope and the KV write folded in (tl_attn_rope.cuh), T and FP8 caches
            "tl_attn_rope_g1_v1",
            "tl_attn_rope_g1_v2",
            "tl_attn_rope_g1_v4",
            "tl_attn_rope_g2_v1",
            "tl_attn_rope_g2_v2",
            "tl_attn_rope_g2_v4",
            "tl_attn_rope_g4_v1",
            "tl_attn_rope_g4_v2",
            "tl_attn_rope_g1_v1_kv8",
            "tl_attn_rope_g1_v2_kv8",
            "tl_attn_rope_g1_v4_kv8",
            "tl_attn_rope_g2_v1_kv8",
            "tl_attn_rope_g2_v2_kv8",
            "tl_attn_rope_g2_v4_kv8",
            "tl_attn_rope_g4_v1_kv8",
            "tl_attn_rope_g4_v2_kv8");
    /** The sampling kernel (fp32 logits, one instantiation): greedy, temperature, top-k, top-p, min-p, seeded. */
    public static final String SAMPLE_KERNEL = "tl_sample_f32";

    /** Speculative decoding's rejection-sampling verify (tl_spec.cuh): min(1, p/q) acceptance, residual resampling. */
    public static final String SPEC_VERIFY_KERNEL = "tl_spec_verify_f32";

    /** Chained greedy draft steps (tl_spec.cuh): the next one-token step's inputs from the step's greedy id. */
    public static final String CHAIN_ADVANCE_KERNEL = "tl_chain_advance_i32";

    /** Weight spans toward L2 while a decode step's attention runs (tl_model.cu): the o projection, the gate/up's rows. */
    public static final String L2_PREFETCH_KERNEL = "tl_l2_prefetch";

    /** The MoE router's softmax + top-k (tl_moe.cuh), fp32 logits in. */
    public static final String MOE_ROUTE_KERNEL = "tl_moe_route_f32";

    /** Groups the MoE pairs by expert for the grouped GEMMs (tl_moe.cuh). */
    public static final String MOE_SORT_KERNEL = "tl_moe_sort_i32";

    /** Real architectures (SASS) the fatbins carry (the model fatbin's 90 is sm_90a, listed as 90 in its header). */
    public static final int[] SASS_ARCHES = {80, 86, 89, 90, 100, 120};
    /** Virtual architecture whose PTX the fatbin carries for newer GPUs. */
    public static final int PTX_ARCH = 90;
    /** The streaming-copy kernel the bench uses as a device copy ceiling. */
    public static final String COPY_KERNEL = "tl_copy16";

    private Kernels() {}

    /** Entry point of {@code algorithm} for {@code dtype}, e.g. {@code tl_allreduce_twostage_bf16}. */
    public static String allreduceKernel(Algorithm algorithm, DType dtype) {
        if (!algorithm.isCustom()) {
            throw new IllegalArgumentException(algorithm + " is not a custom kernel");
        }
        return "tl_allreduce_" + algorithm.name().toLowerCase(java.util.Locale.ROOT) + "_" + dtype.name();
    }

    /**
     * Entry point of the allreduce fused with the residual add + RMSNorm (OneStage's reduction, tl_onestage_rmsnorm in
     * tl_allreduce.cuh), e.g. {@code tl_allreduce_rmsnorm_bf16}; bf16 and fp16 only (the model's element types).
     */
    public static String allreduceNormKernel(DType dtype) {
        if (dtype == DType.fp32) {
            throw new IllegalArgumentException(
                    "the fused allreduce + RMSNorm has no fp32 entry (model types: bf16, fp16)");
        }
        return "tl_allreduce_rmsnorm_" + dtype.name();
    }

    /**
     * Entry point of OneStage's push variant (tl_push.cuh: every rank stores its input into its peers' push buffers, no
     * barrier), e.g. {@code tl_allreduce_push_bf16}; bf16 and fp16 only (its "not arrived" mark is a 16-bit pattern).
     */
    public static String allreducePushKernel(DType dtype) {
        return "tl_allreduce_push_"
                + sixteenBit(dtype, "OneStage's push variant").name();
    }

    /** Entry point of the fused allreduce + residual add + RMSNorm on the push variant, e.g. {@code tl_allreduce_push_rmsnorm_bf16}. */
    public static String allreducePushNormKernel(DType dtype) {
        return "tl_allreduce_push_rmsnorm_"
                + sixteenBit(dtype, "the push variant's allreduce + RMSNorm").name();
    }

    private static DType sixteenBit(DType dtype, String what) {
        if (dtype == DType.fp32) {
            throw new IllegalArgumentException(what + " has no fp32 entry (bf16, fp16 only)");
        }
        return dtype;
    }

    /**
     * Entry point of a model kernel for an element type, e.g. {@code tl_attention_bf16}; only bf16 and fp16 are
     * instantiated.
     */
    public static String modelKernel(String base, DType dtype) {
        if (!MODEL_TYPED_KERNELS.contains(base)) {
            throw new IllegalArgumentException(
                    "unknown model kernel '" + base + "', expected one of " + MODEL_TYPED_KERNELS);
        }
        if (dtype == DType.fp32) {
            throw new IllegalArgumentException(base + " has no fp32 instantiation (bf16, fp16 only)");
        }
        return base + "_" + dtype.name();
    }

    /** The allreduce fatbin's bytes, or an exception that says the build skipped nvcc. */
    public static byte[] fatbin() {
        return read(FATBIN_RESOURCE);
    }

    /** The model kernels' fatbin bytes, or an exception that says the build skipped nvcc. */
    public static byte[] modelFatbin() {
        return read(MODEL_FATBIN_RESOURCE);
    }

    private static byte[] read(String resource) {
        try (InputStream in = Kernels.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("kernel fatbin " + resource + " is not on the classpath "
                        + "(the kernels module was built with -Dtensorlane.skipNvcc or without nvcc)");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }

    /** Whether the allreduce fatbin resource is present. */
    public static boolean fatbinPresent() {
        return Kernels.class.getClassLoader().getResource(FATBIN_RESOURCE) != null;
    }

    /** Whether the model fatbin resource is present. */
    public static boolean modelFatbinPresent() {
        return Kernels.class.getClassLoader().getResource(MODEL_FATBIN_RESOURCE) != null;
    }
}
