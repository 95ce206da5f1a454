package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.runtime.model.ModelConfig;
import io.tensorlane.runtime.sched.SpeculativeConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The draft engine's options ({@link DraftModel#options}, pure) and what {@link DraftModel#load} refuses before any GPU
 * memory is taken (so it runs here, without a GPU).
 */
class DraftModelTest {
    static final String CONFIG = """
      {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 512, "intermediate_size": 1408,
       "num_hidden_layers": LAYERS, "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 4096,
       "rms_norm_eps": 1e-5, "max_position_embeddings": MAXPOS, "tie_word_embeddings": true,
       "torch_dtype": "bfloat16", "rope_theta": 10000.0}
      """;
    static final String TOKENIZER = "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}}}";

    static String config(int layers, int maxPos) {
        return CONFIG.replace("LAYERS", Integer.toString(layers)).replace("MAXPOS", Integer.toString(maxPos));
    }

    static Path model(Path root, String name, int layers, int maxPos, String tokenizer) throws IOException {
        Path d = Files.createDirectories(root.resolve(name));
        Files.writeString(d.resolve("config.json"), config(layers, maxPos));
        if (tokenizer != null) {
            Files.writeString(d.resolve("tokenizer.json"), tokenizer);
        }
        return d;
    }

    static EngineOptions target(Path dir, int maxBatchTokens, int maxModelLen) {
        return new EngineOptions(
                        dir,
                        2,
                        true,
                        Math.min(64, maxBatchTokens),
                        maxBatchTokens,
                        maxModelLen,
                        0,
                        0.85,
                        320,
                        true,
                        false,
                        null,
                        16)
                .withBaselineKernels(true);
    }

    @ParameterizedTest(name = "k={0}, target chunks {1}, max model length {2}")
    @CsvSource({"4,2048,0,512,2048", "4,256,1000,256,1000", "8,64,0,64,2048", "8,4,0,9,2048", "16,8192,512,512,512"})
    void theDraftRunsOneSequenceAtTp1WithTheTargetsLimits(
            int k, int maxBatchTokens, int maxModelLen, int chunk, int len, @TempDir Path dir) {
        ModelConfig tc = ModelConfig.parse(config(8, 2048), "config.json");
        SpeculativeConfig spec = new SpeculativeConfig(SpeculativeConfig.Method.DRAFT, k, 3, dir.resolve("small"));
        EngineOptions d = DraftModel.options(target(dir, maxBatchTokens, maxModelLen), tc, spec);
        assertThat(d.modelDir()).isEqualTo(dir.resolve("small"));
        assertThat(d.tp()).isEqualTo(1);
        assertThat(d.virtualRanks()).isFalse();
        assertThat(d.nccl()).isFalse();
        assertThat(d.maxSeqs()).isEqualTo(1);
        assertThat(d.maxBatchTokens()).isEqualTo(chunk);
        assertThat(d.maxLogitRows()).isEqualTo(k + 1);
        assertThat(d.maxModelLen()).isEqualTo(len); // the target's resolved longest sequence (0: its default)
        assertThat(d.kvCacheTokens()).isZero();
        assertThat(d.memoryFraction()).isEqualTo(0.85);
        assertThat(d.graphs()).isTrue();
        assertThat(d.blockSize()).isEqualTo(16);
        assertThat(d.baselineKernels()).isTrue();
        assertThat(d.kvCacheDtype()).isEqualTo(KvCacheDtype.AUTO);
    }

    static String load(Path target, Path draft) {
        SpeculativeConfig spec = SpeculativeConfig.parse("draft:" + draft + ",k=4", "--speculative");
        StringWriter log = new StringWriter();
        try {
            DraftModel.load(target(target, 2048, 0), spec, new PrintWriter(log)).close();
            return "loaded";
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    @Test
    void aDraftWithAnotherTokenizerIsRefusedBeforeTheGpu(@TempDir Path dir) throws IOException {
        Path t = model(dir, "target", 8, 2048, TOKENIZER);
        Path d = model(dir, "draft", 2, 2048, TOKENIZER.replace("\"b\"", "\"c\""));
        assertThat(load(t, d))
                .startsWith("draft model " + d + " (--speculative draft:" + d + ",k=4): id 1 is \"b\" in the target's")
                .endsWith("the draft model needs the target's tokenizer");
    }

    @Test
    void aDraftShorterThanTheTargetsSequencesIsRefused(@TempDir Path dir) throws IOException {
        Path t = model(dir, "target", 8, 4096, TOKENIZER);
        Path d = model(dir, "draft", 2, 1024, TOKENIZER);
        assertThat(load(t, d))
                .isEqualTo("draft model " + d + " (--speculative draft:" + d + ",k=4): max model length 4096 exceeds "
                        + "the model's max_position_embeddings 1024");
    }

    @Test
    void aDirectoryWithoutAModelIsNamed(@TempDir Path dir) throws IOException {
        Path t = model(dir, "target", 8, 2048, TOKENIZER);
        Path d = Files.createDirectories(dir.resolve("nothing"));
        assertThat(load(t, d))
                .isEqualTo("draft model " + d + " (--speculative draft:" + d + ",k=4): no config.json there");
        // without draft speculation it is the target's own load: here it stops at the target's missing weights
        assertThatThrownBy(() -> DraftModel.load(target(t, 2048, 0), null, new PrintWriter(new StringWriter())))
                .hasMessageContaining("has no model.safetensors.index.json and no *.safetensors file");
    }
}
