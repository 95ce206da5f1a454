package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.contract.EngineEnv;
import io.tensorlane.runtime.options.EngineArgs;
import io.tensorlane.runtime.sched.SpeculativeConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code --speculative} / {@link EngineEnv#SPECULATIVE}, shared by generate, bench-model and serve. */
class EngineArgsSpeculativeTest {
    private static EngineArgs.Resolved resolve(Map<String, String> env, String... args) {
        EngineArgs a = new EngineArgs();
        new CommandLine(a).parseArgs(args);
        return a.resolve(env, EngineArgs.DEFAULT_MEMORY_FRACTION, null);
    }

    @Test
    void fromTheFlagThenTheEnvironmentElseOff() {
        assertThat(resolve(Map.of(), "--model", "m").speculative()).isNull();
        Map<String, String> env = Map.of(EngineEnv.SPECULATIVE, "ngram:k=2,n=2");
        assertThat(resolve(env, "--model", "m").speculative())
                .isEqualTo(new SpeculativeConfig(SpeculativeConfig.Method.NGRAM, 2, 2, null));
        assertThat(resolve(env, "--model", "m", "--speculative", "ngram:k=6").speculative())
                .isEqualTo(new SpeculativeConfig(SpeculativeConfig.Method.NGRAM, 6, 3, null));
        assertThat(resolve(env, "--model", "m", "--speculative", "off").speculative())
                .isNull();
    }

    @Test
    void theEngineGetsALogitsRowPerVerifiedToken() {
        assertThat(resolve(Map.of(), "--model", "m", "--speculative", "ngram:k=4")
                        .options(8, 0, 0, 8)
                        .maxLogitRows())
                .isEqualTo(40);
        assertThat(resolve(Map.of(), "--model", "m").options(8, 0, 0, 8).maxLogitRows())
                .isEqualTo(8);
        // a command that needs more rows anyway (prompt logits) keeps them
        assertThat(resolve(Map.of(), "--model", "m", "--speculative", "ngram:k=1")
                        .options(8, 0, 0, 2048)
                        .maxLogitRows())
                .isEqualTo(2048);
    }

    @Test
    void theLongestStepWithoutAPromptIsTheVerifyStepNotTheLogitsBuffer() {
        // (speculative, max sequences, logits rows asked) -> verify tokens, decode tokens (what MoE keeps on the GPU)
        Object[][] rows = {
            {null, 8, 8, 0, 9},
            {null, 8, 2048, 0, 9}, // prompt logits: more rows, not longer device-kept steps
            {"ngram:k=4", 8, 8, 40, 40},
            {"ngram:k=4", 8, 2048, 40, 40},
            {"draft:/d,k=2", 16, 16, 48, 48},
            {"ngram:k=1", 1, 1, 2, 2}, // one sequence: two tokens, the spare row's as many
        };
        for (Object[] r : rows) {
            var args = r[0] == null
                    ? resolve(Map.of(), "--model", "m")
                    : resolve(Map.of(), "--model", "m", "--speculative", (String) r[0]);
            var o = args.options((int) r[1], 0, 0, (int) r[2]);
            assertThat(o.verifyTokens()).as("verify tokens of %s", r[0]).isEqualTo(r[3]);
            assertThat(o.decodeTokens()).as("decode tokens of %s", r[0]).isEqualTo(r[4]);
        }
    }

    @Test
    void aBadValueNamesWhereItCameFromAndTheField() {
        assertThatThrownBy(() -> resolve(Map.of(), "--speculative", "ngram:k=0"))
                .hasMessage("--speculative 'ngram:k=0': k must be 1..16, got 0");
        assertThatThrownBy(() -> resolve(Map.of(EngineEnv.SPECULATIVE, "ngram:q=1")))
                .hasMessageStartingWith(EngineEnv.SPECULATIVE + " 'ngram:q=1': unknown field 'q'");
        assertThatThrownBy(() -> resolve(Map.of(), "--speculative", "draft:k=4"))
                .hasMessageContaining("draft needs the draft model's directory first");
    }

    @Test
    void aDraftModelIsTakenFromTheFlagOrTheVariable() {
        var flag = resolve(Map.of(), "--model", "m", "--speculative", "draft:/m/small,k=3");
        assertThat(flag.speculative().method()).isEqualTo(io.tensorlane.runtime.sched.SpeculativeConfig.Method.DRAFT);
        assertThat(flag.speculative().draftDir()).isEqualTo(java.nio.file.Path.of("/m/small"));
        assertThat(flag.speculative().k()).isEqualTo(3);
        assertThat(flag.options(8, 0, 0, 8).maxLogitRows()).isEqualTo(32); // k + 1 rows a sequence, as n-gram's
        var env = resolve(Map.of(EngineEnv.SPECULATIVE, "draft:/d,k=2"), "--model", "m");
        assertThat(env.speculative().draftDir()).isEqualTo(java.nio.file.Path.of("/d"));
        assertThat(env.speculative().toString()).isEqualTo("draft:/d,k=2");
    }
}
