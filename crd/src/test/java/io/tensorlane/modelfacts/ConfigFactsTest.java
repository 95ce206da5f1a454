package io.tensorlane.modelfacts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.api.v1alpha1.ModelGeometry;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** config.json → architecture + geometry, on the runtime's fixture configs (copied from runtime-image's tests). */
class ConfigFactsTest {
    static String resource(String name) {
        try (InputStream in = ConfigFactsTest.class.getResourceAsStream("/model/" + name)) {
            assertThat(in).as(name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    static ModelGeometry geometry(int layers, int hidden, int heads, int kv, int headDim, int vocab, int inter) {
        ModelGeometry g = new ModelGeometry();
        g.layers = layers;
        g.hiddenSize = hidden;
        g.attentionHeads = heads;
        g.kvHeads = kv;
        g.headDim = headDim;
        g.vocabSize = vocab;
        g.intermediateSize = inter;
        return g;
    }

    static Stream<Arguments> fixtures() {
        return Stream.of(
                Arguments.of(
                        "llama-3.1-8b-instruct.json",
                        "LlamaForCausalLM",
                        geometry(32, 4096, 32, 8, 128, 128256, 14336),
                        131072,
                        "bfloat16"),
                Arguments.of(
                        "llama-3.2-1b.json",
                        "LlamaForCausalLM",
                        geometry(16, 2048, 32, 8, 64, 128256, 8192),
                        131072,
                        "bfloat16"),
                // transformers 5: dtype instead of torch_dtype, rope_parameters
                Arguments.of(
                        "llama-3.2-1b-v5.json",
                        "LlamaForCausalLM",
                        geometry(16, 2048, 32, 8, 64, 128256, 8192),
                        131072,
                        "bfloat16"),
                Arguments.of(
                        "mistral-7b-instruct-v0.3.json",
                        "MistralForCausalLM",
                        geometry(32, 4096, 32, 8, 128, 32768, 14336),
                        32768,
                        "bfloat16"),
                Arguments.of(
                        "mistral-7b-v0.1.json",
                        "MistralForCausalLM",
                        geometry(32, 4096, 32, 8, 128, 32000, 14336),
                        32768,
                        "bfloat16"),
                Arguments.of(
                        "qwen2.5-7b-instruct.json",
                        "Qwen2ForCausalLM",
                        geometry(28, 3584, 28, 4, 128, 152064, 18944),
                        32768,
                        "bfloat16"),
                // head_dim 128 although hidden/heads = 64
                Arguments.of(
                        "qwen3-0.6b.json",
                        "Qwen3ForCausalLM",
                        geometry(28, 1024, 16, 8, 128, 151936, 3072),
                        40960,
                        "bfloat16"),
                Arguments.of(
                        "qwen3-8b-v5.json",
                        "Qwen3ForCausalLM",
                        geometry(36, 4096, 32, 8, 128, 151936, 12288),
                        40960,
                        "float16"),
                // Mixture of Experts: intermediate_size is the dense MLP's (no dense layer here), experts 768 wide
                Arguments.of(
                        "qwen3-30b-a3b.json",
                        "Qwen3MoeForCausalLM",
                        moe(geometry(48, 2048, 32, 4, 128, 151936, 6144), 128, 8, 768, 48),
                        40960,
                        "bfloat16"),
                // Mixtral: intermediate_size is one expert's
                Arguments.of(
                        "mixtral-8x7b-v0.1.json",
                        "MixtralForCausalLM",
                        moe(geometry(32, 4096, 32, 8, 128, 32000, 14336), 8, 2, 14336, 32),
                        32768,
                        "bfloat16"));
    }

    static ModelGeometry moe(ModelGeometry g, int experts, int topK, int expertIntermediate, int moeLayers) {
        g.experts = experts;
        g.expertsPerToken = topK;
        g.expertIntermediateSize = expertIntermediate;
        g.moeLayers = moeLayers;
        return g;
    }

    @ParameterizedTest
    @MethodSource("fixtures")
    void fixtureConfigs(String file, String arch, ModelGeometry g, int maxPos, String dtype) {
        ConfigFacts f = ConfigFacts.parse(resource(file), file);
        assertThat(f.architecture()).isEqualTo(arch);
        assertThat(f.geometry()).usingRecursiveComparison().isEqualTo(g);
        assertThat(f.maxPositionEmbeddings()).isEqualTo(maxPos);
        assertThat(f.dtype()).isEqualTo(dtype);
    }

    @Test
    void textConfigNestingIsRead() {
        String json = """
        {"architectures": ["Qwen3ForCausalLM"], "torch_dtype": "bfloat16",
         "text_config": {"num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
           "vocab_size": 1000, "intermediate_size": 512, "max_position_embeddings": 2048}}""";
        ConfigFacts f = ConfigFacts.parse(json, "nested/config.json");
        assertThat(f.geometry()).usingRecursiveComparison().isEqualTo(geometry(4, 256, 4, 2, 64, 1000, 512));
        assertThat(f.dtype()).isEqualTo("bfloat16");
    }

    static Stream<Arguments> broken() {
        String ok = """
        "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
        "vocab_size": 100, "intermediate_size": 128, "max_position_embeddings": 256, "torch_dtype": "bfloat16\"""";
        return Stream.of(
                Arguments.of(
                        "{\"architectures\": [\"GPT2LMHeadModel\"], " + ok + "}",
                        "architecture GPT2LMHeadModel is not supported by the Tensorlane runtime (supported: LlamaForCausalLM"),
                Arguments.of("{" + ok + "}", "missing field architectures"),
                Arguments.of("{\"architectures\": [\"A\", \"B\"], " + ok + "}", "architectures must list exactly one"),
                Arguments.of(
                        "{\"architectures\": [\"LlamaForCausalLM\"], " + ok.replace("\"vocab_size\": 100,", "") + "}",
                        "missing field vocab_size"),
                Arguments.of(
                        "{\"architectures\": [\"LlamaForCausalLM\"], "
                                + ok.replace("\"hidden_size\": 64", "\"hidden_size\": \"64\"") + "}",
                        "hidden_size must be an integer, got \"64\""),
                Arguments.of(
                        "{\"architectures\": [\"LlamaForCausalLM\"], "
                                + ok.replace("\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3") + "}",
                        "num_attention_heads 4 is not a multiple of num_key_value_heads 3"),
                Arguments.of(
                        "{\"architectures\": [\"LlamaForCausalLM\"], "
                                + ok.replace(", \"torch_dtype\": \"bfloat16\"", "") + "}",
                        "missing field torch_dtype"),
                Arguments.of(
                        "{\"architectures\": [\"LlamaForCausalLM\"], "
                                + ok.replace("\"hidden_size\": 64", "\"hidden_size\": 66") + "}",
                        "hidden_size 66 is not a multiple of num_attention_heads 4 and there is no head_dim"),
                Arguments.of(
                        "{\"architectures\": [\"LlamaForCausalLM\"], "
                                + ok.replace("\"num_hidden_layers\": 2", "\"num_hidden_layers\": 0") + "}",
                        "num_hidden_layers must be > 0, got 0"),
                Arguments.of(
                        "{\"model_type\": \"gpt2\", " + ok + "}",
                        "model_type gpt2 is not supported (supported: llama, mistral, qwen2, qwen3, qwen3_moe, mixtral)"),
                Arguments.of("{not json", "not valid JSON"),
                Arguments.of("[1, 2]", "expected a JSON object"));
    }

    @ParameterizedTest
    @MethodSource("broken")
    void brokenConfigsSayWhichFieldAndWhy(String json, String message) {
        assertThatThrownBy(() -> ConfigFacts.parse(json, "hf://org/m@abc/config.json"))
                .isInstanceOf(ModelFactsException.class)
                .hasMessageStartingWith("hf://org/m@abc/config.json: ")
                .hasMessageContaining(message);
    }

    @Test
    void whatTheEngineAcceptsTheFactsAcceptToo() {
        // one class name as a plain string, the class from model_type when architectures is absent, integral floats
        String geometry = """
        "num_hidden_layers": 2, "hidden_size": 64.0, "num_attention_heads": 4, "vocab_size": 100,
        "intermediate_size": 128, "max_position_embeddings": 256, "torch_dtype": "torch.float16\"""";
        ConfigFacts plain = ConfigFacts.parse("{\"architectures\": \"MistralForCausalLM\", " + geometry + "}", "a");
        assertThat(plain.architecture()).isEqualTo("MistralForCausalLM");
        assertThat(plain.geometry()).usingRecursiveComparison().isEqualTo(geometry(2, 64, 4, 4, 16, 100, 128));
        assertThat(plain.dtype()).isEqualTo("float16");
        assertThat(ConfigFacts.parse("{\"model_type\": \"qwen2\", " + geometry + "}", "b")
                        .architecture())
                .isEqualTo("Qwen2ForCausalLM");
        assertThat(ConfigFacts.MODEL_TYPES.values()).containsExactlyElementsOf(ConfigFacts.READ);
        assertThat(ConfigFacts.parse("{\"model_type\": \"mixtral\", " + geometry + "}", "m")
                        .geometry()
                        .experts)
                .as("MixtralConfig's default num_local_experts")
                .isEqualTo(8);
        String qwen3Moe = "{\"model_type\": \"qwen3_moe\", \"moe_intermediate_size\": 32, \"num_experts_per_tok\": 2, ";
        assertThat(ConfigFacts.parse(qwen3Moe + "\"num_experts\": 16, " + geometry + "}", "q")
                        .geometry()
                        .experts)
                .as("the Hub's spelling")
                .isEqualTo(16);
        assertThat(ConfigFacts.parse(qwen3Moe + "\"num_local_experts\": 12, " + geometry + "}", "q5")
                        .geometry()
                        .experts)
                .as("what transformers 5 writes")
                .isEqualTo(12);
    }

    @Test
    void unsupportedArchitectureHasItsOwnType() {
        assertThatThrownBy(() -> ConfigFacts.parse("{\"architectures\": [\"GPT2LMHeadModel\"]}", "c.json"))
                .isInstanceOfSatisfying(
                        UnsupportedArchitectureException.class,
                        e -> assertThat(e.architecture()).isEqualTo("GPT2LMHeadModel"))
                .hasMessage("c.json: architecture GPT2LMHeadModel is not supported by the Tensorlane runtime "
                        + "(supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM; "
                        + "Mixture of Experts: Qwen3MoeForCausalLM, MixtralForCausalLM, bf16/fp16 on every engine, "
                        + "FP8 on engines SGLang and VLLM)");
    }

    /** What the runtime serves is what is read: the dense architectures, then the Mixture-of-Experts ones. */
    @Test
    void theArchitecturesReadAreTheDenseThenTheMoeOnes() {
        assertThat(ConfigFacts.DENSE)
                .containsExactly("LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM");
        assertThat(ConfigFacts.MOE).containsExactly("Qwen3MoeForCausalLM", "MixtralForCausalLM");
        assertThat(ConfigFacts.READ)
                .containsExactly(
                        "LlamaForCausalLM",
                        "MistralForCausalLM",
                        "Qwen2ForCausalLM",
                        "Qwen3ForCausalLM",
                        "Qwen3MoeForCausalLM",
                        "MixtralForCausalLM");
    }
}
