package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which kernels a MoE step takes, by the switch, its tokens and the longest step kept on the device. */
class MoeDecodePathTest {
    @ParameterizedTest(name = "fused up to {0}, n={1}, pairTokens={2} -> router {3}, pairs {4}, fused pairs {5}")
    @CsvSource({
        // switch off: cuBLAS + route, the four pair kernels, or grouped
        "0, 1, 256, false, true, false",
        "0, 256, 256, false, true, false",
        "0, 257, 256, false, false, false",
        // auto (bf16/fp16 experts): one-token steps fused, two tokens and more not
        "1, 1, 256, true, true, true",
        "1, 2, 256, false, true, false",
        "1, 8, 256, false, true, false",
        // switch on: the fused router up to 8 tokens, the fused pairs while the step stays on the device
        "2147483647, 1, 256, true, true, true",
        "2147483647, 8, 256, true, true, true",
        "2147483647, 9, 256, false, true, true",
        "2147483647, 256, 256, false, true, true",
        "2147483647, 257, 256, false, false, false",
        // a device limit below 8 tokens: longer steps are grouped, router included
        "2147483647, 4, 4, true, true, true",
        "2147483647, 5, 4, false, false, false",
    })
    void choosesByTheSwitchAndTheStepLength(
            int fusedMaxTokens, int n, int pairTokens, boolean router, boolean pairs, boolean fusedPairs) {
        MoeDecodePath p = MoeDecodePath.of(fusedMaxTokens, n, pairTokens);
        assertThat(p.fusedRouter()).isEqualTo(router);
        assertThat(p.pairs()).isEqualTo(pairs);
        assertThat(p.fusedPairs()).isEqualTo(fusedPairs);
    }

    @ParameterizedTest(name = "fused up to {0}, pairTokens={1} -> a one-token step fused: {2}")
    @CsvSource({
        "1, 256, true", // auto (bf16 experts) and step
        "2147483647, 256, true", // on
        "0, 256, false", // off, and auto with FP8 experts: the block cannot fold the residual stream
        "1, 0, false" // no step kept on the device
    })
    void theBlockFoldsTheResidualStreamOnlyWhereAOneTokenStepIsFused(
            int fusedMaxTokens, int pairTokens, boolean fused) {
        assertThat(MoeMlp.fusesOneToken(fusedMaxTokens, pairTokens)).isEqualTo(fused);
    }

    @ParameterizedTest(name = "short chunks {0}, decode rows {1}, pair tokens {2} -> on the device up to {3}")
    @CsvSource({
        // no speculation: the pair buffers hold the decode rows, every shape alike
        "true, 65, 65, 65",
        "false, 65, 65, 65",
        // k = 4 over 64 sequences: verify steps (short chunks) up to 320 tokens stay on the device and replay graphs;
        // a prompt chunk of more than the decode rows is grouped by expert, as without speculation
        "true, 65, 320, 320",
        "false, 65, 320, 65",
        // the step buffers cap the pair buffers below the decode rows
        "false, 65, 48, 48",
    })
    void verifyStepsStayOnTheDeviceLongPromptChunksDoNot(
            boolean shortChunks, int decodeRows, int pairTokens, int limit) {
        assertThat(MoeDecodePath.deviceLimit(shortChunks, decodeRows, pairTokens))
                .isEqualTo(limit);
    }
}
