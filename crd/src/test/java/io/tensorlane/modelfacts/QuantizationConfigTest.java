package io.tensorlane.modelfacts;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tensorlane.api.v1alpha1.ModelQuantization;
import io.tensorlane.api.v1alpha1.ModelQuantization.Weights;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * config.json's quantization_config → what status.model.quantization says (method, weight layout, in words), and that
 * FP8 weights make the model's dtype fp8 while config.json's dtype stays the activations'. The excerpts are the
 * published checkpoints' own (Qwen3-8B-FP8, an llm-compressor FP8-dynamic Llama, meta-llama's 405B-FP8).
 */
class QuantizationConfigTest {
    static final ObjectMapper MAPPER = new ObjectMapper();

    static final String QWEN3_FP8 = """
            {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]}""";
    static final String FP8_DYNAMIC = """
            {"config_groups": {"group_0": {"input_activations": {"dynamic": true, "num_bits": 8, "strategy": "token",
              "symmetric": true, "type": "float"}, "targets": ["Linear"], "weights": {"dynamic": false, "num_bits": 8,
              "strategy": "channel", "symmetric": true, "type": "float"}}},
             "format": "float-quantized", "ignore": ["lm_head"], "quant_method": "compressed-tensors"}""";
    static final String FBGEMM = """
            {"activation_scheme": "dynamic", "modules_to_not_convert": ["lm_head"], "quant_method": "fbgemm_fp8"}""";

    /** Llama-3.1-8B-Instruct's config.json with {@code quantizationConfig} (JSON) added, when not null. */
    static ConfigFacts facts(String quantizationConfig) {
        try {
            ObjectNode config = (ObjectNode) MAPPER.readTree(ConfigFactsTest.resource("llama-3.1-8b-instruct.json"));
            if (quantizationConfig != null) {
                config.set("quantization_config", MAPPER.readTree(quantizationConfig));
            }
            return ConfigFacts.parse(MAPPER.writeValueAsString(config), "config.json");
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new AssertionError(e);
        }
    }

    static ModelQuantization read(String quantizationConfig) {
        return facts(quantizationConfig).quantization();
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("Qwen3-*-FP8: block-scaled", QWEN3_FP8, "fp8", Weights.FP8Block, "fp8 block 128x128"),
                Arguments.of(
                        "method fp8 without a block size: one scale per tensor",
                        "{\"quant_method\": \"fp8\", \"activation_scheme\": \"static\"}",
                        "fp8",
                        Weights.FP8Tensor,
                        "fp8 per-tensor"),
                Arguments.of(
                        "a block size that is no pair",
                        "{\"quant_method\": \"fp8\", \"weight_block_size\": [128]}",
                        "fp8",
                        Weights.Other,
                        "fp8 with weight_block_size [128]"),
                Arguments.of(
                        "compressed-tensors FP8-dynamic: per channel",
                        FP8_DYNAMIC,
                        "compressed-tensors",
                        Weights.FP8Channel,
                        "fp8 per-channel"),
                Arguments.of(
                        "compressed-tensors per tensor",
                        FP8_DYNAMIC.replace("\"channel\"", "\"tensor\""),
                        "compressed-tensors",
                        Weights.FP8Tensor,
                        "fp8 per-tensor"),
                Arguments.of(
                        "compressed-tensors blocks",
                        FP8_DYNAMIC.replace(
                                "\"strategy\": \"channel\"",
                                "\"strategy\": \"block\", \"block_structure\": [128, 128]"),
                        "compressed-tensors",
                        Weights.FP8Block,
                        "fp8 block 128x128"),
                Arguments.of(
                        "compressed-tensors INT8 weights: not FP8",
                        FP8_DYNAMIC.replace("\"type\": \"float\"}}}", "\"type\": \"int\"}}}"),
                        "compressed-tensors",
                        Weights.Other,
                        "compressed-tensors (float-quantized, not FP8 weights)"),
                Arguments.of("meta-llama *-FP8", FBGEMM, "fbgemm_fp8", Weights.FP8Channel, "fp8 per-channel"),
                Arguments.of(
                        "AWQ: bytes from the headers, not FP8",
                        "{\"quant_method\": \"awq\", \"bits\": 4}",
                        "awq",
                        Weights.Other,
                        "awq (not FP8)"),
                Arguments.of(
                        "no quant_method: never an error",
                        "{\"bits\": 4}",
                        "unknown",
                        Weights.Other,
                        "quantization_config names no quant_method"),
                Arguments.of(
                        "not an object: never an error",
                        "\"fp8\"",
                        "unknown",
                        Weights.Other,
                        "quantization_config is not an object"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void readsTheWeightLayout(String name, String qc, String method, Weights weights, String format) {
        ModelQuantization q = read(qc);
        assertThat(q.method).isEqualTo(method);
        assertThat(q.weights).isEqualTo(weights);
        assertThat(q.format).isEqualTo(format);
        assertThat(q.fp8()).isEqualTo(weights != Weights.Other);
    }

    @Test
    void anUnquantizedCheckpointHasNone() {
        assertThat(read(null)).isNull();
        assertThat(read("null")).isNull();
    }

    /** FP8 weights: the model's dtype is fp8, config.json's bfloat16 stays in status.model.dtype (the activations'). */
    @Test
    void fp8WeightsMakeTheModelDtypeFp8AndKeepTheConfigDtype() {
        var status = ModelFacts.of(
                        facts(QWEN3_FP8),
                        List.of(new TensorTally(Map.of("F8_E4M3", 100L, "BF16", 200L), 200, 0, 0)),
                        "hf://a/b")
                .toStatus("hf://a/b@main", "sha", "2026-12-02T00:00:00Z");
        assertThat(status.dtype).isEqualTo("bfloat16");
        assertThat(status.quantization.format).isEqualTo("fp8 block 128x128");
        assertThat(ModelDtype.of(status)).contains(DType.fp8);
        status.quantization = read("{\"quant_method\": \"awq\"}");
        assertThat(ModelDtype.of(status)).as("not FP8: config.json's dtype").contains(DType.bf16);
    }
}
