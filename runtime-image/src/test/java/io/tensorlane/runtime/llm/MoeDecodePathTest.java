package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which kernels a MoE step takes, by the switch, its tokens and the longest step kept on the device. */
class MoeDecodePathTest {
    @ParameterizedTest(name = "fused={0}, n={1}, pairTokens={2} -> router {3}, pairs {4}, fused pairs {5}")
    @CsvSource({
        // switch off: cuBLAS + route, the four pair kernels, or grouped
        "false, 1, 256, false, true, false",
        "false, 256, 256, false, true, false",
        "false, 257, 256, false, false, false",
        // switch on: the fused router up to 8 tokens, the fused pairs while the step stays on the device
        "true, 1, 256, true, true, true",
        "true, 8, 256, true, true, true",
        "true, 9, 256, false, true, true",
        "true, 256, 256, false, true, true",
        "true, 257, 256, false, false, false",
        // a device limit below 8 tokens: longer steps are grouped, router included
        "true, 4, 4, true, true, true",
        "true, 5, 4, false, false, false",
    })
    void choosesByTheSwitchAndTheStepLength(
            boolean fused, int n, int pairTokens, boolean router, boolean pairs, boolean fusedPairs) {
        MoeDecodePath p = MoeDecodePath.of(fused, n, pairTokens);
        assertThat(p.fusedRouter()).isEqualTo(router);
        assertThat(p.pairs()).isEqualTo(pairs);
        assertThat(p.fusedPairs()).isEqualTo(fusedPairs);
    }
}
