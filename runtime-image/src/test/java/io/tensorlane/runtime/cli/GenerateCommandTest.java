package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.model.ModelConfig;
import io.tensorlane.runtime.model.SafetensorsWriter;
import io.tensorlane.runtime.model.ShardPlan;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code generate} on bad input, on a machine without a GPU: every problem with the model or the request is reported
 * (exit 2, a message naming it) before CUDA is touched.
 */
class GenerateCommandTest {
    private static final String LLAMA = """
      {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
       "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 300,
       "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "max_position_embeddings": 256, "tie_word_embeddings": false,
       "torch_dtype": "bfloat16", "bos_token_id": 274, "eos_token_id": 275}
      """;

    @TempDir
    Path dir;

    private Path model(String config, String dropTensor) throws IOException {
        Path fixture = Path.of("src/test/resources/tokenizers/tiny-bpe");
        for (String f : List.of("tokenizer.json", "tokenizer_config.json", "generation_config.json")) {
            Files.copy(fixture.resolve(f), dir.resolve(f));
        }
        Files.writeString(dir.resolve("config.json"), config);
        if (config.contains("LlamaForCausalLM")) {
            List<SafetensorsWriter.T> tensors = new ArrayList<>();
            for (Map.Entry<String, long[]> e : ShardPlan.expectedShapes(ModelConfig.parse(config, "config.json"))
                    .entrySet()) {
                if (!e.getKey().equals(dropTensor)) {
                    tensors.add(SafetensorsWriter.T.of(e.getKey(), "BF16", e.getValue()));
                }
            }
            SafetensorsWriter.write(dir.resolve("model.safetensors"), tensors);
        }
        return dir;
    }

    private MainTest.Result generate(Path model, String... more) {
        List<String> args = new ArrayList<>(List.of("generate", "--model", model.toString()));
        args.addAll(List.of(more));
        return MainTest.run(args.toArray(String[]::new));
    }

    @Test
    void unsupportedArchitectureIsNamed() throws IOException {
        Path m = model(LLAMA.replace("LlamaForCausalLM", "GPT2LMHeadModel").replace("\"llama\"", "\"gpt2\""), null);
        MainTest.Result r = generate(m, "--prompt", "hello");
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err())
                .contains("GPT2LMHeadModel")
                .contains("LlamaForCausalLM")
                .doesNotContain("Exception");
    }

    @Test
    void missingTensorIsNamedBeforeAnyGpuWork() throws IOException {
        Path m = model(LLAMA, "model.layers.0.mlp.down_proj.weight");
        MainTest.Result r = generate(m, "--prompt", "hello");
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err())
                .contains("model.layers.0.mlp.down_proj.weight")
                .doesNotContain("CUDA")
                .doesNotContain("libcuda");
    }

    @Test
    void tensorParallelDegreeThatCannotSplitTheHeads() throws IOException {
        Path m = model(LLAMA, null);
        MainTest.Result r = generate(m, "--prompt", "hello", "--tp", "4");
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("4").containsIgnoringCase("heads");
    }

    @Test
    void badRequestsAreRejected() throws IOException {
        Path m = model(LLAMA, null);
        assertThat(generate(m).err()).contains("no prompt");
        Path prompts = Files.writeString(dir.resolve("prompts.jsonl"), "{\"text\": \"ok\"}\n{\"txt\": 1}\n");
        MainTest.Result r = generate(m, "--prompts-file", prompts.toString());
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("line 2");
        assertThat(generate(m, "--prompt", "x", "--temperature", "-1").err()).contains("temperature");
        assertThat(generate(m, "--prompt", "x", "--max-tokens", "0").err()).contains("--max-tokens");
        assertThat(generate(m, "--prompt", "x", "--max-model-len", "4096").err())
                .contains("max_position_embeddings 256");
    }
}
