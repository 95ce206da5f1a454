package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.contract.EngineEnv;
import io.tensorlane.runtime.llm.KvCacheDtype;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The engine options generate and bench-model share: the KV cache's dtype from the option or the environment. */
class EngineArgsTest {
    private static EngineArgs parse(String... args) {
        EngineArgs a = new EngineArgs();
        new CommandLine(a).parseArgs(args);
        return a;
    }

    @Test
    void kvCacheDtypeFromTheOptionThenTheEnvironment() {
        Map<String, String> env = Map.of(EngineEnv.KV_CACHE_DTYPE, "fp8");
        assertThat(parse("--model", "m").options(8, 0, 0, 8, Map.of()).kvCacheDtype())
                .isEqualTo(KvCacheDtype.AUTO);
        assertThat(parse("--model", "m").options(8, 0, 0, 8, env).kvCacheDtype())
                .isEqualTo(KvCacheDtype.FP8);
        assertThat(parse("--model", "m", "--kv-cache-dtype", "bf16")
                        .options(8, 0, 0, 8, env)
                        .kvCacheDtype())
                .isEqualTo(KvCacheDtype.BF16);
        assertThat(parse("--model", "m", "--kv-cache-dtype=FP8", "--baseline-kernels")
                        .options(8, 0, 0, 8, Map.of())
                        .baselineKernels())
                .isTrue();
    }

    @Test
    void aBadValueNamesWhereItCameFrom() {
        assertThatThrownBy(
                        () -> parse("--model", "m", "--kv-cache-dtype", "fp4").options(8, 0, 0, 8, Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--kv-cache-dtype must be auto, bf16, fp16 or fp8")
                .hasMessageContaining("'fp4'");
        assertThatThrownBy(() -> parse("--model", "m").options(8, 0, 0, 8, Map.of(EngineEnv.KV_CACHE_DTYPE, "x")))
                .hasMessageContaining(EngineEnv.KV_CACHE_DTYPE + " must be");
    }
}
