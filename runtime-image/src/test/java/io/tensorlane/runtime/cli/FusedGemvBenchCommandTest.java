package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.cli.FusedGemvBenchCommand.Linear;
import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.model.WeightType;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class FusedGemvBenchCommandTest {
    @Test
    void theLayerOfTheLlama8bGeometry() {
        assertThat(FusedGemvBenchCommand.layer(4096, 6144, 14336))
                .containsExactly(
                        new Linear("qkv", "norm", 4096, 6144),
                        new Linear("o", "res", 4096, 4096),
                        new Linear("gate_up", "silu", 4096, 14336),
                        new Linear("down", "res", 14336, 4096));
    }

    @ParameterizedTest(name = "{0} {1}: {2} bytes")
    @CsvSource({
        // bf16: two bytes a weight; gate_up holds gate and up
        "DENSE, gate_up, 234881024",
        "DENSE, qkv, 50331648",
        // per channel: one byte a weight and an fp32 scale a row
        "FP8_ROW, qkv, 25190400",
        // 128 x 128 blocks: 48 x 32 scales for qkv, 32 x 112 for down
        "FP8_BLOCK, qkv, 25171968",
        "FP8_BLOCK, down, 58734592"
    })
    void countsTheWeightAndItsScales(WeightType type, String linear, long bytes) {
        Linear l = FusedGemvBenchCommand.layer(4096, 6144, 14336).stream()
                .filter(x -> x.name().equals(linear))
                .findFirst()
                .orElseThrow();
        assertThat(FusedGemvBenchCommand.weightBytes(type, l)).isEqualTo(bytes);
    }

    @ParameterizedTest(name = "{0} bytes over {1}: {2} copies")
    @CsvSource({"100, 1000, 10", "300, 1000, 4", "1000, 1000, 2", "5000, 1000, 2"})
    void cyclesOverAtLeastTwoCopiesThatFillTheCycle(long bytes, long cycle, int copies) {
        assertThat(FusedGemvBenchCommand.copies(bytes, cycle)).isEqualTo(copies);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = ';',
            value = {
                "--iters 0; --iters must be >= 1",
                "--warmup -1; --warmup >= 0",
                "--cycle-mib 0; --cycle-mib >= 1",
                "--hidden 4100; multiples of 16",
                "--hidden 16384; wider than the norm kernels' staged x",
                "--inter 0; must be positive",
                "--heads 32,7,128; hk dividing hq",
                "--heads 32,8; takes hq,hk,hd",
                "--context 0; --context must be >= 1"
            })
    void refusesWhatCannotBeTimedBeforeAnyGpuWork(String args, String message) {
        picocli.CommandLine cl = new picocli.CommandLine(new FusedGemvBenchCommand());
        cl.setExecutionExceptionHandler((ex, c, parsed) -> Main.handle(ex, c));
        StringWriter err = new StringWriter();
        cl.setErr(new PrintWriter(err));
        cl.setOut(new PrintWriter(new StringWriter()));
        int code = cl.execute(args.split(" "));
        assertThat(code).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString()).contains(message);
    }
}
