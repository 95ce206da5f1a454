package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.model.ModelConfig;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class LoadBannerTest {
    /** Llama-3.1-8B's geometry; QUANT replaced per case. */
    static final String LLAMA = """
      {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
       "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
       "vocab_size": 128256, "rms_norm_eps": 1e-5, "max_position_embeddings": 131072, "tie_word_embeddings": false,
       "torch_dtype": "bfloat16", "rope_theta": 500000.0QUANT}
      """;

    @Test
    void aBf16ModelOnTwoGpus() {
        ModelConfig c = ModelConfig.parse(LLAMA.replace("QUANT", ""), "config.json");
        assertThat(LoadBanner.of(Path.of("/models/llama"), c, DType.bf16, List.of(0, 1), false))
                .isEqualTo("engine: loading /models/llama (LLAMA, 32 layers, hidden 4096, 32/8 heads, vocab 128256, "
                        + "bf16) on 2 rank(s), GPUs [0, 1]");
    }

    @Test
    void fp8LinearsAndVirtualRanksAreNamed() {
        ModelConfig c = ModelConfig.parse(
                LLAMA.replace(
                        "QUANT",
                        ", \"quantization_config\": {\"activation_scheme\": \"dynamic\", \"fmt\": \"e4m3\", "
                                + "\"quant_method\": \"fp8\", \"weight_block_size\": [128, 128]}"),
                "config.json");
        assertThat(LoadBanner.of(Path.of("m"), c, DType.bf16, List.of(0, 0, 0, 0), true))
                .isEqualTo("engine: loading m (LLAMA, 32 layers, hidden 4096, 32/8 heads, vocab 128256, bf16; linears "
                        + c.quantization().describe() + ") on 4 rank(s), GPUs [0, 0, 0, 0] (virtual ranks)")
                .contains("FP8 e4m3, 128x128 block scales");
    }
}
