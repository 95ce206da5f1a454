package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.contract.EngineEnv;
import io.tensorlane.runtime.llm.KvCacheDtype;
import io.tensorlane.runtime.options.EngineArgs;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The engine options every model-loading command shares: each from its flag, else the environment, else a default. */
class EngineArgsTest {
    private static EngineArgs parse(String... args) {
        EngineArgs a = new EngineArgs();
        new CommandLine(a).parseArgs(args);
        return a;
    }

    private static EngineArgs.Resolved resolve(Map<String, String> env, String... args) {
        return parse(args).resolve(env, EngineArgs.DEFAULT_MEMORY_FRACTION, null);
    }

    @Test
    void kvCacheDtypeFromTheOptionThenTheEnvironment() {
        Map<String, String> env = Map.of(EngineEnv.KV_CACHE_DTYPE, "fp8");
        assertThat(resolve(Map.of(), "--model", "m").kvCacheDtype()).isEqualTo(KvCacheDtype.AUTO);
        assertThat(resolve(env, "--model", "m").kvCacheDtype()).isEqualTo(KvCacheDtype.FP8);
        assertThat(resolve(env, "--model", "m", "--kv-cache-dtype", "bf16").kvCacheDtype())
                .isEqualTo(KvCacheDtype.BF16);
        assertThat(resolve(Map.of(), "--model", "m", "--kv-cache-dtype=FP8", "--baseline-kernels")
                        .options(8, 0, 0, 8)
                        .baselineKernels())
                .isTrue();
    }

    @Test
    void aBadValueNamesWhereItCameFrom() {
        assertThatThrownBy(() -> resolve(Map.of(), "--model", "m", "--kv-cache-dtype", "fp4"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--kv-cache-dtype must be auto, bf16, fp16 or fp8")
                .hasMessageContaining("'fp4'");
        assertThatThrownBy(() -> resolve(Map.of(EngineEnv.KV_CACHE_DTYPE, "x"), "--model", "m"))
                .hasMessageContaining(EngineEnv.KV_CACHE_DTYPE + " must be");
        assertThatThrownBy(() -> resolve(Map.of(), "--tp", "9")).hasMessage("--tp must be 1..8, got 9");
        assertThatThrownBy(() -> resolve(Map.of(EngineEnv.WORLD_SIZE, "0")))
                .hasMessage(EngineEnv.WORLD_SIZE + " must be 1..8, got '0'");
        assertThatThrownBy(() -> resolve(Map.of(EngineEnv.WORLD_SIZE, "two")))
                .hasMessage(EngineEnv.WORLD_SIZE + " must be a whole number, got 'two'");
        assertThatThrownBy(() -> resolve(Map.of(), "--max-batch-tokens", "0"))
                .hasMessage("--max-batch-tokens must be >= 1, got 0");
        assertThatThrownBy(() -> resolve(Map.of(), "--kv-cache-tokens", "-5"))
                .hasMessage("--kv-cache-tokens must be >= 0, got -5");
        assertThatThrownBy(() -> resolve(Map.of(EngineEnv.MAX_MODEL_LENGTH, "-1")))
                .hasMessage(EngineEnv.MAX_MODEL_LENGTH + " must be >= 0, got '-1'");
        assertThatThrownBy(() -> resolve(Map.of(), "--memory-fraction", "1.5"))
                .hasMessage("--memory-fraction must be a number in (0, 1), got 1.5");
        assertThatThrownBy(() -> resolve(Map.of(EngineEnv.MEMORY_FRACTION, "most")))
                .hasMessage(EngineEnv.MEMORY_FRACTION + " must be a number in (0, 1), got 'most'");
        assertThatThrownBy(() -> resolve(Map.of(EngineEnv.ALLREDUCE, "MPI")))
                .hasMessage(EngineEnv.ALLREDUCE + " must be Custom, NCCL or None, got 'MPI'");
        assertThatThrownBy(() -> resolve(Map.of(), "--virtual-ranks", "x"))
                .hasMessageContaining("--virtual-ranks takes no value")
                .hasMessageContaining("'x'");
        assertThatThrownBy(() -> resolve(Map.of()).requireModel())
                .hasMessage("no model: give --model DIR or set " + EngineEnv.MODEL_DIR);
    }

    @Test
    void virtualRanksAloneOrTheDeprecatedCountOfRanks() {
        EngineArgs.Resolved bare = resolve(Map.of(EngineEnv.WORLD_SIZE, "4"), "--virtual-ranks");
        assertThat(bare.virtualRanks()).isTrue();
        assertThat(bare.tp()).isEqualTo(4);
        assertThat(bare.tpGiven()).isNull();
        // followed by another option, the bare form takes no value
        EngineArgs.Resolved before = resolve(Map.of(), "--virtual-ranks", "--tp", "2");
        assertThat(before.virtualRanks()).isTrue();
        assertThat(before.tp()).isEqualTo(2);

        StringWriter err = new StringWriter();
        EngineArgs.Resolved old =
                parse("--virtual-ranks", "8").resolve(Map.of(EngineEnv.WORLD_SIZE, "2"), 0.9, new PrintWriter(err));
        assertThat(old.tp()).isEqualTo(8);
        assertThat(old.tpGiven()).isEqualTo(8);
        assertThat(old.virtualRanks()).isTrue();
        assertThat(err.toString())
                .isEqualTo("warning: --virtual-ranks 8 is deprecated: give --tp 8 --virtual-ranks"
                        + System.lineSeparator());
        assertThat(resolve(Map.of(), "--virtual-ranks=2", "--tp", "2").tp()).isEqualTo(2);
        assertThatThrownBy(() -> resolve(Map.of(), "--virtual-ranks", "2", "--tp", "4"))
                .hasMessageContaining("--virtual-ranks 2 and --tp 4 disagree");
    }

    @Test
    void ncclFromTheFlagOrTheAllreduceMode() {
        assertThat(resolve(Map.of()).nccl()).isFalse();
        assertThat(resolve(Map.of(EngineEnv.ALLREDUCE, "NCCL")).nccl()).isTrue();
        assertThat(resolve(Map.of(EngineEnv.ALLREDUCE, "Custom")).nccl()).isFalse();
        assertThat(resolve(Map.of(EngineEnv.ALLREDUCE, "Custom"), "--nccl").nccl())
                .isTrue();
        assertThat(resolve(Map.of(EngineEnv.ALLREDUCE, "NCCL"), "--no-nccl").nccl())
                .isFalse();
        assertThat(resolve(Map.of()).ncclGiven()).isNull();
        assertThat(resolve(Map.of(), "--no-nccl").ncclGiven()).isFalse();
    }

    @Test
    void theMemoryFractionDefaultIsTheCommands() {
        assertThat(parse().resolve(Map.of(), 0.9, null).memoryFraction()).isEqualTo(0.9);
        assertThat(parse().resolve(Map.of(), null, null).memoryFraction()).isNull();
        assertThat(parse().resolve(Map.of(EngineEnv.MEMORY_FRACTION, "0.42"), null, null)
                        .memoryFraction())
                .isEqualTo(0.42);
        assertThatThrownBy(() ->
                        parse("--model", "m").resolve(Map.of(), null, null).options(8, 0, 0, 8))
                .hasMessageContaining("give --memory-fraction or set " + EngineEnv.MEMORY_FRACTION);
    }
}
