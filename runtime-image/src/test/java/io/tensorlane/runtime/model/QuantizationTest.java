package io.tensorlane.runtime.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class QuantizationTest {
    private static final ObjectMapper M = new ObjectMapper();

    static JsonNode json(String s) {
        try {
            return M.readTree(s.replace('\'', '"'));
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    static Quantization parse(String s) {
        return QuantizationParser.parse(json(s));
    }

    /** Qwen3-8B-FP8's quantization_config. */
    static final String QWEN3_FP8 = "{'activation_scheme': 'dynamic', 'modules_to_not_convert': ['lm_head'], "
            + "'fmt': 'e4m3', 'quant_method': 'fp8', 'weight_block_size': [128, 128]}";

    /** An FP8-dynamic checkpoint's (llm-compressor, per-channel weights, dynamic per-token activations). */
    static final String FP8_DYNAMIC = "{'quant_method': 'compressed-tensors', 'format': 'float-quantized', "
            + "'quantization_status': 'compressed', 'ignore': ['lm_head', 're:.*layers\\\\.1\\\\.mlp.*'], "
            + "'kv_cache_scheme': null, 'config_groups': {'group_0': {'targets': ['Linear'], "
            + "'weights': {'num_bits': 8, 'type': 'float', 'strategy': 'channel', 'symmetric': true, 'dynamic': false},"
            + " 'input_activations': {'num_bits': 8, 'type': 'float', 'strategy': 'token', 'symmetric': true, "
            + "'dynamic': true}, 'output_activations': null}}}";

    @Test
    void blockScaledFp8() {
        Quantization q = parse(QWEN3_FP8);
        assertThat(q.method()).isEqualTo(Quantization.Method.FP8_BLOCK);
        assertThat(q.scaleName("model.layers.3.mlp.down_proj.weight"))
                .isEqualTo("model.layers.3.mlp.down_proj.weight_scale_inv");
        assertThat(q.weightType("model.layers.3.mlp.down_proj")).isEqualTo(WeightType.FP8_BLOCK);
        assertThat(q.quantizes("lm_head")).isFalse();
        assertThat(q.describe()).isEqualTo("FP8 e4m3, 128x128 block scales (quant_method fp8)");
    }

    @Test
    void fp8WithoutBlocksIsPerTensor() {
        Quantization q = parse("{'quant_method': 'fp8', 'activation_scheme': 'static'}");
        assertThat(q.method()).isEqualTo(Quantization.Method.FP8_TENSOR);
        assertThat(q.scaleName("a.weight")).isEqualTo("a.weight_scale");
        assertThat(q.weightType("model.layers.0.self_attn.q_proj")).isEqualTo(WeightType.FP8_ROW);
    }

    @Test
    void compressedTensorsPerChannelWithRegexIgnore() {
        Quantization q = parse(FP8_DYNAMIC);
        assertThat(q.method()).isEqualTo(Quantization.Method.FP8_CHANNEL);
        assertThat(q.scaleName("model.layers.0.self_attn.o_proj.weight"))
                .isEqualTo("model.layers.0.self_attn.o_proj.weight_scale");
        assertThat(q.quantizes("model.layers.0.mlp.down_proj")).isTrue();
        assertThat(q.quantizes("model.layers.1.mlp.down_proj")).isFalse(); // re: pattern
        assertThat(q.quantizes("model.layers.11.mlp.down_proj")).isTrue(); // "layers\.1\." does not match 11
        assertThat(q.quantizes("lm_head")).isFalse();
        assertThat(q.quantizes("model.lm_head_extra")).isTrue(); // exact names only, unlike the fp8 method's rule
    }

    @Test
    void compressedTensorsTensorAndBlockStrategies() {
        assertThat(parse(FP8_DYNAMIC.replace("'channel'", "'tensor'")).method())
                .isEqualTo(Quantization.Method.FP8_TENSOR);
        Quantization b = parse(FP8_DYNAMIC.replace(
                "'strategy': 'channel'", "'strategy': 'block', " + "'block_structure': [128, 128]"));
        assertThat(b.method()).isEqualTo(Quantization.Method.FP8_BLOCK);
        assertThat(b.scaleSuffix()).isEqualTo("weight_scale");
    }

    /** llm-compressor's static FP8 KV-cache scheme: per-layer k_scale / v_scale in the checkpoint (KvScales). */
    @Test
    void compressedTensorsStaticPerTensorKvSchemeIsRead() {
        Quantization q = parse(FP8_DYNAMIC.replace(
                "'kv_cache_scheme': null",
                "'kv_cache_scheme': {'num_bits': 8, 'type': 'float', 'strategy': 'tensor', 'dynamic': false, "
                        + "'symmetric': true}"));
        assertThat(q.method()).isEqualTo(Quantization.Method.FP8_CHANNEL);
    }

    @Test
    void absentOrNullIsNotQuantized() {
        assertThat(QuantizationParser.parse(null)).isEqualTo(Quantization.NONE);
        assertThat(QuantizationParser.parse(json("null"))).isEqualTo(Quantization.NONE);
        assertThat(Quantization.NONE.quantizes("model.layers.0.mlp.down_proj")).isFalse();
        assertThat(Quantization.NONE.weightType("model.layers.0.mlp.down_proj")).isEqualTo(WeightType.DENSE);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "gptq|{'quant_method': 'gptq', 'bits': 4}|quant_method gptq is not supported",
                "no method|{'bits': 4}|has no quant_method",
                "e5m2|{'quant_method': 'fp8', 'fmt': 'e5m2'}|fmt e5m2 is not supported",
                "64x64 blocks|{'quant_method': 'fp8', 'weight_block_size': [64, 64]}|[64,64] is not supported",
                "128x64 blocks|{'quant_method': 'fp8', 'weight_block_size': [128, 64]}|only [128, 128] blocks",
                "odd scheme|{'quant_method': 'fp8', 'activation_scheme': 'mixed'}|activation_scheme mixed",
                "not an object|['fp8']|must be an object",
                "int8 tensors|{'quant_method': 'compressed-tensors', 'format': 'int-quantized'}|format int-quantized",
                "packed int4|{'quant_method': 'compressed-tensors', 'format': 'pack-quantized'}|format pack-quantized",
            })
    void refusals(String name, String config, String message) {
        assertThatThrownBy(() -> parse(config))
                .isInstanceOf(ModelException.class)
                .hasMessageContaining(message);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "4-bit weights|'num_bits': 8, 'type': 'float', 'strategy': 'channel'|'num_bits': 4, 'type': "
                        + "'int', 'strategy': 'channel'|4-bit int; only 8-bit float",
                "group strategy|'strategy': 'channel'|'strategy': 'group'|strategy group is not supported",
                "64 blocks|'strategy': 'channel'|'strategy': 'block', 'block_structure': [64, 64]|[64,64] is not",
                "dynamic weights|'dynamic': false}|'dynamic': true}|weights.dynamic is true",
                "asymmetric|'symmetric': true, 'dynamic': false|'symmetric': false, 'dynamic': false|zero points",
                "int kv|'kv_cache_scheme': null|'kv_cache_scheme': {'num_bits': 8, 'type': 'int'}|kv_cache_scheme is 8-bit int",
                "dynamic kv|'kv_cache_scheme': null|'kv_cache_scheme': {'num_bits': 8, 'type': 'float', 'strategy': "
                        + "'tensor', 'dynamic': true}|static symmetric per-tensor FP8",
                "per-head kv|'kv_cache_scheme': null|'kv_cache_scheme': {'num_bits': 8, 'type': 'float', 'strategy': "
                        + "'attn_head', 'dynamic': false}|static symmetric per-tensor FP8",
                "attention targets|'targets': ['Linear']|'targets': ['re:.*self_attn.*']|exactly [\"Linear\"]",
                "output quant|'output_activations': null|'output_activations': {'num_bits': 8}|output quantization",
            })
    void compressedTensorsRefusals(String name, String from, String to, String message) {
        String config = FP8_DYNAMIC.replace(from, to);
        assertThat(config).isNotEqualTo(FP8_DYNAMIC);
        assertThatThrownBy(() -> parse(config))
                .isInstanceOf(ModelException.class)
                .hasMessageContaining(message);
    }

    @Test
    void twoConfigGroupsAreRefused() {
        String two = FP8_DYNAMIC.replace(
                "'config_groups': {", "'config_groups': {'group_1': {'targets': ['Linear'], 'weights': {}}, ");
        assertThatThrownBy(() -> parse(two)).hasMessageContaining("exactly one group, got 2");
    }

    @Test
    void configJsonCarriesIt() {
        String cfg = "{'architectures': ['LlamaForCausalLM'], 'hidden_size': 256, 'intermediate_size': 512, "
                + "'num_hidden_layers': 2, 'num_attention_heads': 2, 'num_key_value_heads': 2, 'vocab_size': 100, "
                + "'rms_norm_eps': 1e-5, 'max_position_embeddings': 512, 'torch_dtype': 'bfloat16', "
                + "'quantization_config': " + QWEN3_FP8 + "}";
        ModelConfig c = ModelConfig.parse(cfg.replace('\'', '"'), "config.json");
        assertThat(c.quantization().method()).isEqualTo(Quantization.Method.FP8_BLOCK);
        assertThat(c.dtype()).isEqualTo(WeightDType.BF16);
        assertThatThrownBy(() -> ModelConfig.parse(
                        cfg.replace(QWEN3_FP8, "{'quant_method': 'awq'}").replace('\'', '"'), "config.json"))
                .hasMessageStartingWith("config.json: quantization_config.quant_method awq is not supported");
    }
}
