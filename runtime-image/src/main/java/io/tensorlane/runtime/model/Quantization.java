package io.tensorlane.runtime.model;

import java.util.List;
import java.util.regex.Pattern;

/**
 * How a checkpoint's linear layers are stored, from config.json {@code quantization_config}
 * ({@link QuantizationParser}). The decoder layers' linears (q/k/v/o, gate/up/down) of a quantized model are FP8 e4m3
 * with fp32 (or bf16/fp16) scales, except the modules {@code unquantized} names; embeddings, norms and the LM head stay
 * in the model's dtype (as vLLM loads them: its LM head is not a linear layer of the quantization schemes).
 * Activations stay in the model's dtype: the engine computes with the weights dequantized (W8A16), so a checkpoint's
 * static {@code input_scale} is not used.
 *
 * @param method the weight layout
 * @param scaleSuffix the scale tensor's name after the module's: {@code weight_scale_inv} (method fp8, block scales)
 *     or {@code weight_scale}
 * @param unquantized module names or patterns left in the model's dtype ({@code modules_to_not_convert}, {@code ignore})
 * @param regexIgnore whether {@code unquantized} follows compressed-tensors' rule (exact module names, {@code re:}
 *     patterns matched from the start) instead of the fp8 method's (a module whose name contains an entry)
 * @param source where it was read, for messages ({@code quant_method: fp8}, ...)
 */
public record Quantization(
        Method method, String scaleSuffix, List<String> unquantized, boolean regexIgnore, String source) {

    /** The weight layouts the engine reads. */
    public enum Method {
        NONE,
        /** e4m3 weights, one fp32 scale per 128 x 128 block (Qwen3-*-FP8, DeepSeek-V3; compressed-tensors "block"). */
        FP8_BLOCK,
        /** e4m3 weights, one scale per output row (compressed-tensors "channel": the FP8-dynamic checkpoints). */
        FP8_CHANNEL,
        /** e4m3 weights, one scale per tensor (compressed-tensors "tensor"; method fp8 without weight_block_size). */
        FP8_TENSOR
    }

    public static final Quantization NONE = new Quantization(Method.NONE, "", List.of(), false, "none");

    public Quantization {
        unquantized = List.copyOf(unquantized);
    }

    public boolean fp8() {
        return method != Method.NONE;
    }

    /**
     * Whether the linear module (e.g. {@code model.layers.0.mlp.down_proj}, without {@code .weight}) is stored in FP8:
     * the model is quantized and the module is not in {@link #unquantized}.
     */
    public boolean quantizes(String module) {
        if (!fp8()) {
            return false;
        }
        for (String u : unquantized) {
            if (regexIgnore) {
                if (u.startsWith("re:")
                        ? Pattern.compile(u.substring(3)).matcher(module).lookingAt()
                        : u.equals(module)) {
                    return false;
                }
            } else if (module.contains(u)) {
                return false;
            }
        }
        return true;
    }

    /** The device layout of the module's weight. */
    public WeightType weightType(String module) {
        if (!quantizes(module)) {
            return WeightType.DENSE;
        }
        return method == Method.FP8_BLOCK ? WeightType.FP8_BLOCK : WeightType.FP8_ROW;
    }

    /** The scale tensor of a weight tensor: {@code <module>.weight} to {@code <module>.<scaleSuffix>}. */
    public String scaleName(String weightName) {
        if (!weightName.endsWith(".weight")) {
            throw new IllegalArgumentException(weightName + " is not a weight tensor name");
        }
        return weightName.substring(0, weightName.length() - "weight".length()) + scaleSuffix;
    }

    /** One line for logs and messages, e.g. {@code FP8 e4m3, 128x128 block scales (quant_method fp8)}. */
    public String describe() {
        return switch (method) {
            case NONE -> "not quantized";
            case FP8_BLOCK ->
                "FP8 e4m3, " + WeightType.BLOCK + "x" + WeightType.BLOCK + " block scales (" + source + ")";
            case FP8_CHANNEL -> "FP8 e4m3, per-channel scales (" + source + ")";
            case FP8_TENSOR -> "FP8 e4m3, per-tensor scales (" + source + ")";
        };
    }
}
