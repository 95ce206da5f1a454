package io.tensorlane.runtime.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ModelConfigTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    static String resource(String name) {
        try (InputStream in = ModelConfigTest.class.getResourceAsStream("/model/" + name)) {
            assertThat(in).as(name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    static ModelConfig load(String name) {
        return ModelConfig.parse(resource(name), name);
    }

    @Test
    void llama32With3RopeScalingAndTiedEmbeddings() {
        ModelConfig c = load("llama-3.2-1b.json");
        assertThat(c)
                .isEqualTo(new ModelConfig(
                        Architecture.LLAMA,
                        2048,
                        8192,
                        16,
                        32,
                        8,
                        64,
                        128256,
                        1e-5,
                        500000.0,
                        RopeScaling.llama3(32.0, 1.0, 4.0, 8192),
                        131072,
                        true,
                        false,
                        false,
                        WeightDType.BF16,
                        null,
                        128000,
                        List.of(128001),
                        Quantization.NONE,
                        null));
        assertThat(c.groupSize()).isEqualTo(4);
        assertThat(c.parameterCount()).isEqualTo(1_235_814_400L); // Llama-3.2-1B: 1.24B
    }

    @Test
    void transformers5RopeParametersGiveTheSameConfig() {
        assertThat(load("llama-3.2-1b-v5.json")).isEqualTo(load("llama-3.2-1b.json"));
    }

    @Test
    void llama31WithEosListAndSeparateLmHead() {
        ModelConfig c = load("llama-3.1-8b-instruct.json");
        assertThat(c.headDim()).isEqualTo(128);
        assertThat(c.ropeScaling()).isEqualTo(RopeScaling.llama3(8.0, 1.0, 4.0, 8192));
        assertThat(c.eosTokenIds()).containsExactly(128001, 128008, 128009);
        assertThat(c.tieWordEmbeddings()).isFalse();
        assertThat(c.qkvBias()).isFalse();
        assertThat(c.slidingWindow()).isNull();
        assertThat(c.parameterCount()).isEqualTo(8_030_261_248L); // Llama-3.1-8B: 8.03B
    }

    @Test
    void mistralSlidingWindow() {
        ModelConfig v01 = load("mistral-7b-v0.1.json");
        assertThat(v01.architecture()).isEqualTo(Architecture.MISTRAL);
        assertThat(v01.slidingWindow()).isEqualTo(4096);
        assertThat(v01.ropeTheta()).isEqualTo(10000.0);
        assertThat(v01.ropeScaling()).isNull();
        assertThat(v01.bosTokenId()).isEqualTo(1);
        assertThat(v01.eosTokenIds()).containsExactly(2);
        ModelConfig v03 = load("mistral-7b-instruct-v0.3.json");
        assertThat(v03.slidingWindow()).isNull();
        assertThat(v03.ropeTheta()).isEqualTo(1e6);
        assertThat(v03.vocabSize()).isEqualTo(32768);
    }

    @Test
    void qwen25HasQkvBiasAndIgnoresSlidingWindowUnlessEnabled() {
        ModelConfig c = load("qwen2.5-7b-instruct.json");
        assertThat(c.architecture()).isEqualTo(Architecture.QWEN2);
        assertThat(c.qkvBias()).isTrue();
        assertThat(c.qkNorm()).isFalse();
        assertThat(c.headDim()).isEqualTo(128);
        assertThat(c.numKvHeads()).isEqualTo(4);
        assertThat(c.slidingWindow()).isNull();
        assertThat(c.rmsNormEps()).isEqualTo(1e-6);
        ModelConfig sliding = ModelConfig.parse(
                edit(resource("qwen2.5-7b-instruct.json"), o -> o.put("use_sliding_window", true)), "q");
        assertThat(sliding.slidingWindow()).isEqualTo(131072);
    }

    @Test
    void qwen3HeadDimDiffersFromHiddenOverHeads() {
        ModelConfig c = load("qwen3-0.6b.json");
        assertThat(c.architecture()).isEqualTo(Architecture.QWEN3);
        assertThat(c.headDim()).isEqualTo(128).isNotEqualTo(c.hiddenSize() / c.numHeads());
        assertThat(c.qSize()).isEqualTo(2048);
        assertThat(c.qkNorm()).isTrue();
        assertThat(c.qkvBias()).isFalse();
        assertThat(c.tieWordEmbeddings()).isTrue();
        assertThat(c.ropeTheta()).isEqualTo(1e6);
        assertThat(c.parameterCount()).isEqualTo(596_049_920L); // Qwen3-0.6B: 0.6B
    }

    @Test
    void qwen3Transformers5StyleWithFp16() {
        ModelConfig c = load("qwen3-8b-v5.json");
        assertThat(c.dtype()).isEqualTo(WeightDType.FP16);
        assertThat(c.ropeTheta()).isEqualTo(1e6);
        assertThat(c.ropeScaling()).isNull();
        assertThat(c.numLayers()).isEqualTo(36);
        assertThat(c.headDim()).isEqualTo(128);
    }

    @Test
    void defaultsWhenOptionalFieldsAreAbsent() {
        ModelConfig c = ModelConfig.parse(
                edit(resource("mistral-7b-v0.1.json"), o -> {
                    o.remove(List.of(
                            "num_key_value_heads",
                            "rope_theta",
                            "tie_word_embeddings",
                            "bos_token_id",
                            "eos_token_id",
                            "sliding_window"));
                    o.remove("architectures");
                }),
                "c");
        assertThat(c.architecture()).isEqualTo(Architecture.MISTRAL); // from model_type
        assertThat(c.numKvHeads()).isEqualTo(32);
        assertThat(c.ropeTheta()).isEqualTo(10000.0);
        assertThat(c.tieWordEmbeddings()).isFalse();
        assertThat(c.bosTokenId()).isNull();
        assertThat(c.eosTokenIds()).isEmpty();
        assertThat(c.slidingWindow()).isNull();
    }

    @Test
    void linearRopeInBothStyles() {
        ModelConfig v4 = ModelConfig.parse(
                edit(
                        resource("mistral-7b-v0.1.json"),
                        o -> o.putObject("rope_scaling").put("type", "linear").put("factor", 2.0)),
                "v4");
        assertThat(v4.ropeScaling()).isEqualTo(RopeScaling.linear(2.0));
        ModelConfig v5 = ModelConfig.parse(
                edit(resource("mistral-7b-v0.1.json"), o -> {
                    o.remove("rope_theta");
                    o.putObject("rope_parameters")
                            .put("rope_type", "linear")
                            .put("factor", 2.0)
                            .put("rope_theta", 10000.0);
                }),
                "v5");
        assertThat(v5).isEqualTo(v4);
    }

    @Test
    void attentionBiasEnablesQkvBiasForLlama() {
        ModelConfig c = ModelConfig.parse(
                edit(resource("llama-3.1-8b-instruct.json"), o -> o.put("attention_bias", true)), "c");
        assertThat(c.qkvBias()).isTrue();
    }

    @Test
    void readsConfigJsonFromADirectory(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("config.json"), resource("qwen3-0.6b.json"));
        assertThat(ModelConfig.read(dir)).isEqualTo(load("qwen3-0.6b.json"));
        Path empty = Files.createDirectory(dir.resolve("empty"));
        assertThatThrownBy(() -> ModelConfig.read(empty))
                .isInstanceOf(ModelException.class)
                .hasMessageContaining("config.json does not exist");
    }

    static Stream<Arguments> badConfigs() {
        return Stream.<Arguments>of(
                bad(
                        "unknown architecture",
                        o -> o.putArray("architectures").add("GPT2LMHeadModel"),
                        "architecture GPT2LMHeadModel is not supported (supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM, MixtralForCausalLM)"),
                bad(
                        "no architecture",
                        o -> o.remove(List.of("architectures", "model_type")),
                        "missing field architectures"),
                bad(
                        "float32",
                        o -> o.put("torch_dtype", "float32"),
                        "dtype float32 is not supported (bf16 or fp16 weights)"),
                bad("no dtype", o -> o.remove("torch_dtype"), "missing field torch_dtype"),
                bad(
                        "yarn",
                        o -> o.putObject("rope_scaling")
                                .put("type", "yarn")
                                .put("factor", 4.0)
                                .put("original_max_position_embeddings", 32768),
                        "rope_scaling: rope type yarn is not supported"),
                bad(
                        "dynamic v5",
                        o -> o.putObject("rope_parameters")
                                .put("rope_type", "dynamic")
                                .put("factor", 2.0),
                        "rope_parameters: rope type dynamic is not supported"),
                bad(
                        "longrope",
                        o -> o.putObject("rope_scaling").put("rope_type", "longrope"),
                        "rope type longrope is not supported"),
                bad(
                        "llama3 without low_freq_factor",
                        o -> o.putObject("rope_scaling")
                                .put("rope_type", "llama3")
                                .put("factor", 8.0)
                                .put("high_freq_factor", 4.0)
                                .put("original_max_position_embeddings", 8192),
                        "missing field rope_scaling.low_freq_factor"),
                bad(
                        "linear factor 0",
                        o -> o.putObject("rope_scaling").put("type", "linear").put("factor", 0.0),
                        "linear rope factor must be > 0, got 0.0"),
                bad(
                        "per-layer rope",
                        o -> o.putObject("rope_parameters")
                                .putObject("full_attention")
                                .put("rope_theta", 1e6),
                        "per-layer-type rope parameters are not supported"),
                bad(
                        "partial rotary",
                        o -> o.put("partial_rotary_factor", 0.5),
                        "partial_rotary_factor 0.5 is not supported"),
                bad(
                        "heads not divisible by kv heads",
                        o -> o.put("num_key_value_heads", 5),
                        "num_attention_heads 32 is not a multiple of num_key_value_heads 5"),
                bad(
                        "hidden not divisible by heads",
                        o -> o.put("num_attention_heads", 24).put("num_key_value_heads", 8),
                        "hidden_size 4096 is not a multiple of num_attention_heads 24 and there is no head_dim"),
                bad("missing hidden_size", o -> o.remove("hidden_size"), "missing field hidden_size"),
                bad("missing rms_norm_eps", o -> o.remove("rms_norm_eps"), "missing field rms_norm_eps"),
                bad(
                        "string int",
                        o -> o.put("num_hidden_layers", "32"),
                        "num_hidden_layers must be an integer, got \"32\""),
                bad("fractional int", o -> o.put("intermediate_size", 14336.5), "intermediate_size must be an integer"),
                bad("zero layers", o -> o.put("num_hidden_layers", 0), "num_hidden_layers must be > 0, got 0"),
                bad("negative eps", o -> o.put("rms_norm_eps", -1e-5), "rms_norm_eps must be > 0"),
                bad("odd head_dim", o -> o.put("head_dim", 127), "head_dim 127 must be even"),
                bad(
                        "eos outside vocab",
                        o -> o.put("eos_token_id", 32000),
                        "eos_token_id 32000 is outside the vocabulary [0, 32000)"),
                bad(
                        "bool as string",
                        o -> o.put("tie_word_embeddings", "false"),
                        "tie_word_embeddings must be true or false"),
                bad(
                        "sliding window without size",
                        o -> o.put("architectures", (String) null)
                                .put("model_type", "qwen2")
                                .put("use_sliding_window", true)
                                .putNull("sliding_window"),
                        "use_sliding_window is true but sliding_window is missing"));
    }

    static Arguments bad(String what, Consumer<ObjectNode> edit, String fragment) {
        return Arguments.of(what, edit, fragment);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badConfigs")
    void rejectsBadConfigsWithTheFieldInTheMessage(String what, Consumer<ObjectNode> edit, String fragment) {
        String json = edit(resource("mistral-7b-v0.1.json"), edit);
        assertThatThrownBy(() -> ModelConfig.parse(json, "/models/m/config.json"))
                .isInstanceOf(ModelException.class)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("/models/m/config.json: ")
                .hasMessageContaining(fragment);
    }

    @Test
    void rejectsNonJson() {
        assertThatThrownBy(() -> ModelConfig.parse("{\"hidden_size\": ", "cfg.json"))
                .isInstanceOf(ModelException.class)
                .hasMessageStartingWith("cfg.json: not valid JSON");
        assertThatThrownBy(() -> ModelConfig.parse("[1, 2]", "cfg.json"))
                .hasMessage("cfg.json: expected a JSON object");
    }

    @Test
    void architectureAndDtypeNames() {
        assertThat(Architecture.fromHf("Qwen2ForCausalLM")).isEqualTo(Architecture.QWEN2);
        assertThat(WeightDType.fromHf("bfloat16")).isEqualTo(WeightDType.BF16);
        assertThat(WeightDType.fromHf("float16")).isEqualTo(WeightDType.FP16);
        assertThat(WeightDType.FP16.bytes()).isEqualTo(2);
        assertThatThrownBy(() -> WeightDType.fromHf("float32"))
                .hasMessage("dtype float32 is not supported (bf16 or fp16 weights)");
    }

    static String edit(String json, Consumer<ObjectNode> edit) {
        try {
            ObjectNode o = (ObjectNode) MAPPER.readTree(json);
            edit.accept(o);
            return MAPPER.writeValueAsString(o);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
