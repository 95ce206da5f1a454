package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.model.ModelConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** prefixcheck's checks before any GPU work: its sizes, the blocks it takes, a TP degree the geometry refuses. */
class PrefixCheckCommandTest {
    @TempDir
    Path dir;

    static Stream<Arguments> sizes() {
        return Stream.of(
                Arguments.of(200, 37, 0.015625, 2048, null),
                Arguments.of(32, 1, 0.015625, 33, null),
                Arguments.of(31, 1, 0.015625, 2048, "--prefix-tokens must be >= 32 (two full KV blocks), got 31"),
                Arguments.of(200, 0, 0.015625, 2048, "--tail-tokens must be >= 1, got 0"),
                Arguments.of(200, 37, 0.015625, 236, "give --max-batch-tokens >= 237 (now 236)"),
                Arguments.of(200, 37, 0, 2048, "--tolerance must be in (0, 1), got 0.0"),
                Arguments.of(200, 37, 1, 2048, "--tolerance must be in (0, 1), got 1.0"));
    }

    @ParameterizedTest(name = "prefix {0}, tail {1}, tol {2}, batch {3}")
    @MethodSource("sizes")
    void badSizesNameTheOption(int prefix, int tail, double tol, int batch, String problem) {
        String got = PrefixCheckCommand.problem(prefix, tail, tol, 16, batch);
        if (problem == null) {
            assertThat(got).isNull();
        } else {
            assertThat(got).contains(problem);
        }
    }

    @Test
    void theBlocksTakenCoverEveryComputation() {
        // prefix 200 = 12 full blocks + 8; prompt 237 = 15 blocks: writer 15, shifted 13, fresh 15, cached and control
        // 3 each, one-token fresh 13, and one block for each of the two one-token runs
        assertThat(PrefixCheckRun.blocksNeeded(200, 37, 16)).isEqualTo(15 + 13 + 15 + 3 + 3 + 13 + 1 + 1);
        assertThat(PrefixCheckRun.blocksNeeded(32, 1, 16)).isEqualTo(3 + 2 + 3 + 1 + 1 + 3 + 1 + 1);
    }

    static final String QWEN3_MOE = """
            {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 512,
             "intermediate_size": 1024, "moe_intermediate_size": 256, "num_experts": 16, "num_experts_per_tok": 2,
             "norm_topk_prob": true, "decoder_sparse_step": 1, "mlp_only_layers": [0], "num_hidden_layers": 4,
             "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 64, "vocab_size": 4096,
             "max_position_embeddings": 2048, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
             "tie_word_embeddings": false, "dtype": "bfloat16", "use_sliding_window": false}
            """;

    static Stream<Arguments> routing() {
        return Stream.of(
                Arguments.of("dense: every layer", ModelBenchCommandTest.LLAMA_8B, 32),
                Arguments.of("layer 0 dense, then MoE: layers 0 and 1", QWEN3_MOE, 2),
                Arguments.of(
                        "every second layer MoE from layer 1",
                        QWEN3_MOE
                                .replace("\"decoder_sparse_step\": 1", "\"decoder_sparse_step\": 2")
                                .replace("\"mlp_only_layers\": [0]", "\"mlp_only_layers\": []"),
                        2),
                Arguments.of(
                        "every layer MoE: layer 0 only",
                        QWEN3_MOE.replace("\"mlp_only_layers\": [0]", "\"mlp_only_layers\": []"),
                        1));
    }

    /** Layer l's K/V depend on the MLPs before it: the gated layers of a MoE model end at its first MoE layer. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("routing")
    void theLayersNoRouterTouches(String name, String config, int free) {
        assertThat(PrefixCheckRun.routingFree(ModelConfig.parse(config, "config.json")))
                .isEqualTo(free);
    }

    @Test
    void aTpDegreeTheGeometryRefusesIsASkipWithTheReason() throws Exception {
        Files.writeString(dir.resolve("config.json"), ModelBenchCommandTest.LLAMA_8B); // 32 heads, 8 KV heads
        Path json = dir.resolve("out.json");
        MainTest.Result r =
                MainTest.run("prefixcheck", "--model", dir.toString(), "--tp", "3", "--json", json.toString());
        assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).contains("prefixcheck: SKIP").contains("tp 3").contains("num_attention_heads 32");
        JsonNode j = new ObjectMapper().readTree(json.toFile());
        assertThat(j.get("result").asText()).isEqualTo("SKIP");
        assertThat(j.get("tp").asInt()).isEqualTo(3);
        assertThat(j.get("reason").asText()).contains("not divisible by tensor parallel size 3");
    }

    @Test
    void badSizesAreAUsageError() {
        MainTest.Result r = MainTest.run("prefixcheck", "--model", dir.toString(), "--prefix-tokens", "8");
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("--prefix-tokens must be >= 32");
    }

    @Test
    void anFp8KvCacheIsRefused() throws Exception {
        MainTest.Result r = MainTest.run("prefixcheck", "--model", dir.toString(), "--kv-cache-dtype", "fp8");
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("--kv-cache-dtype fp8 is not supported");
    }
}
