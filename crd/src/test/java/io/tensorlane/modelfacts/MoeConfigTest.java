package io.tensorlane.modelfacts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** config.json → the experts, top-k and MoE layers of a Mixture of Experts; the variants that are not planned. */
class MoeConfigTest {
    static Stream<Arguments> layerTable() {
        return Stream.of(
                Arguments.of(4, 1, Set.of(), List.of(0, 1, 2, 3)),
                Arguments.of(4, 2, Set.of(), List.of(1, 3)),
                Arguments.of(6, 3, Set.of(), List.of(2, 5)),
                Arguments.of(4, 1, Set.of(0), List.of(1, 2, 3)),
                Arguments.of(6, 2, Set.of(1, 2), List.of(3, 5)),
                Arguments.of(2, 1, Set.of(0, 1), List.of()));
    }

    @ParameterizedTest(name = "{0} layers, step {1}, mlp_only {2}: MoE layers {3}")
    @MethodSource("layerTable")
    void whichLayersAreMoeAsTransformersDecidesIt(int layers, int step, Set<Integer> mlpOnly, List<Integer> moe) {
        assertThat(MoeConfig.moeLayers(layers, step, mlpOnly)).containsExactlyElementsOf(moe);
    }

    static final String QWEN3 = """
            "architectures": ["Qwen3MoeForCausalLM"], "num_hidden_layers": 4, "hidden_size": 64,
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 100,
            "intermediate_size": 256, "max_position_embeddings": 256, "torch_dtype": "bfloat16\"""";

    static Stream<Arguments> qwen3Table() {
        return Stream.of(
                // transformers' Qwen3MoeConfig defaults when the MoE fields are absent
                Arguments.of("", 128, 8, 768, 4),
                Arguments.of(
                        ", \"num_experts\": 16, \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 32",
                        16,
                        2,
                        32,
                        4),
                Arguments.of(
                        ", \"num_experts\": 16, \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 32, "
                                + "\"mlp_only_layers\": [0, 3]",
                        16,
                        2,
                        32,
                        2),
                Arguments.of(
                        ", \"num_experts\": 16, \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 32, "
                                + "\"decoder_sparse_step\": 2",
                        16,
                        2,
                        32,
                        2),
                Arguments.of(
                        ", \"num_experts\": 4, \"num_experts_per_tok\": 4, \"moe_intermediate_size\": 32, "
                                + "\"shared_expert_intermediate_size\": 0",
                        4,
                        4,
                        32,
                        4));
    }

    @ParameterizedTest(name = "{index}: {1} experts, top-{2}, {3} wide, {4} MoE layers")
    @MethodSource("qwen3Table")
    void qwen3MoeFieldsAndDefaults(String fields, int experts, int topK, int inter, int moeLayers) {
        var g = ConfigFacts.parse("{" + QWEN3 + fields + "}", "config.json").geometry();
        assertThat(List.of(g.experts, g.expertsPerToken, g.expertIntermediateSize, g.moeLayers))
                .containsExactly(experts, topK, inter, moeLayers);
        assertThat(g.intermediateSize).as("the dense layers' size, as written").isEqualTo(256);
        assertThat(g.denseLayers()).isEqualTo(4 - moeLayers);
    }

    static Stream<Arguments> brokenTable() {
        return Stream.of(
                Arguments.of(
                        ", \"num_experts\": 4, \"num_experts_per_tok\": 5",
                        "num_experts_per_tok 5 is more than num_experts 4"),
                Arguments.of(", \"mlp_only_layers\": [4]", "mlp_only_layers names layer 4, but num_hidden_layers is 4"),
                Arguments.of(", \"mlp_only_layers\": 1", "mlp_only_layers must be a list of layer indices, got 1"),
                Arguments.of(
                        ", \"mlp_only_layers\": [0, 1, 2, 3]",
                        "no layer is a Mixture-of-Experts layer (decoder_sparse_step 1, mlp_only_layers [0, 1, 2, 3]"),
                Arguments.of(", \"num_experts\": 0", "num_experts must be > 0, got 0"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("brokenTable")
    void brokenMoeFieldsSayWhichAndWhy(String fields, String message) {
        assertThatThrownBy(() -> ConfigFacts.parse("{" + QWEN3 + fields + "}", "hf://o/m@a/config.json"))
                .isInstanceOf(ModelFactsException.class)
                .hasMessageStartingWith("hf://o/m@a/config.json: ")
                .hasMessageContaining(message);
    }

    static Stream<Arguments> variantTable() {
        return Stream.of(
                Arguments.of(
                        "qwen1.5-moe-a2.7b.json",
                        "Qwen2MoeForCausalLM",
                        List.of("a shared expert (Qwen2-MoE style) (shared_expert_intermediate_size 5632)")),
                Arguments.of(
                        "deepseek-v3.json",
                        "DeepseekV3ForCausalLM",
                        List.of(
                                "shared experts (DeepSeek style) (n_shared_experts 1)",
                                "grouped top-k routing (n_group 8, topk_group 4)",
                                "multi-head latent attention (kv_lora_rank 512, q_lora_rank 1536)")));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("variantTable")
    void unsupportedVariantsAreNamedWithTheirFields(String file, String arch, List<String> variants) {
        String json = ConfigFactsTest.resource(file);
        assertThat(MoeConfig.unsupportedVariants(ConfigJson.parse(json, file))).containsExactlyElementsOf(variants);
        assertThatThrownBy(() -> ConfigFacts.parse(json, "hf://o/m@a/config.json"))
                .isInstanceOfSatisfying(
                        UnsupportedArchitectureException.class,
                        e -> assertThat(e.architecture()).isEqualTo(arch))
                .hasMessageStartingWith("hf://o/m@a/config.json: architecture " + arch + " uses " + variants.get(0))
                .hasMessageContaining("which Tensorlane does not plan or serve")
                .hasMessageContaining("Qwen3MoeForCausalLM, MixtralForCausalLM");
    }

    static Stream<Arguments> variantFieldTable() {
        return Stream.of(
                Arguments.of(", \"shared_expert_intermediate_size\": 512", "a shared expert (Qwen2-MoE style)"),
                Arguments.of(", \"n_shared_experts\": 2", "shared experts (DeepSeek style) (n_shared_experts 2)"),
                Arguments.of(", \"n_group\": 4, \"topk_group\": 2", "grouped top-k routing (n_group 4, topk_group 2)"),
                Arguments.of(", \"kv_lora_rank\": 128", "multi-head latent attention (kv_lora_rank 128)"),
                Arguments.of(", \"q_lora_rank\": 64", "multi-head latent attention (q_lora_rank 64)"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("variantFieldTable")
    void aVariantFieldInAQwen3MoeConfigIsRefusedToo(String field, String variant) {
        assertThatThrownBy(() -> ConfigFacts.parse("{" + QWEN3 + field + "}", "config.json"))
                .isInstanceOf(UnsupportedArchitectureException.class)
                .hasMessageContaining("architecture Qwen3MoeForCausalLM uses " + variant);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("ungroupedTable")
    void oneGroupOrZeroSharedExpertsIsNoVariant(String field) {
        assertThat(ConfigFacts.parse("{" + QWEN3 + field + "}", "config.json").geometry().experts)
                .isEqualTo(128);
    }

    static Stream<String> ungroupedTable() {
        return Stream.of(
                ", \"n_group\": 1, \"topk_group\": 1",
                ", \"n_shared_experts\": 0",
                ", \"shared_expert_intermediate_size\": null",
                ", \"kv_lora_rank\": null");
    }
}
