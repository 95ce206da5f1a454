package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.engine.HostTensors;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The checker's comparison and its behaviour without a GPU (the GPU cases run on a GPU node: {@code tensorlane-runtime kernelcheck}). */
class KernelCheckCommandTest {
    record Run(int code, String out, String err) {}

    static Run run(String... args) {
        CommandLine cl = new CommandLine(new KernelCheckCommand());
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> Main.handle(ex, cmd));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        int code = cl.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void exactComparisonNeedsEqualValues() {
        assertThat(KernelCheckMath.compare(new double[] {1, 2}, new double[] {1, 2}, 0, 0, 0)
                        .pass())
                .isTrue();
        assertThat(KernelCheckMath.compare(new double[] {1, 2.0000001}, new double[] {1, 2}, 0, 0, 0)
                        .pass())
                .isFalse();
    }

    @Test
    void oneRoundingToBf16Passes() {
        double u = HostTensors.unitRoundoff(DType.bf16);
        double ref = 1.0 + 0x1p-8 * 0.999; // rounds to 1.0 in bf16: error just below u * |ref|
        double got = HostTensors.bf16ToFloat(HostTensors.floatToBf16((float) ref));
        assertThat(KernelCheckMath.compare(new double[] {got}, new double[] {ref}, u, 0, 1)
                        .pass())
                .isTrue();
        // two units of roundoff off: fails
        assertThat(KernelCheckMath.compare(new double[] {1 + 2 * 0x1p-7}, new double[] {1}, u, 1e-5, 1)
                        .pass())
                .isFalse();
    }

    @Test
    void nanAndInfinityFail() {
        KernelCheckMath.Stat s =
                KernelCheckMath.compare(new double[] {Double.NaN, 1}, new double[] {1, 1}, 0.1, 0.1, 1);
        assertThat(s.pass()).isFalse();
        assertThat(s.maxAbs()).isInfinite();
        assertThat(KernelCheckMath.compare(
                                new double[] {Double.POSITIVE_INFINITY},
                                new double[] {Double.POSITIVE_INFINITY},
                                0.1,
                                0.1,
                                1)
                        .pass())
                .isFalse();
    }

    @Test
    void kappaScalesWithTheMagnitude() {
        // a near-zero reference element with an fp32-sized absolute error passes thanks to kappa * magnitude
        assertThat(KernelCheckMath.compare(new double[] {3e-6}, new double[] {0}, 0x1p-8, 1e-5, 1)
                        .pass())
                .isTrue();
        assertThat(KernelCheckMath.compare(new double[] {3e-4}, new double[] {0}, 0x1p-8, 1e-5, 1)
                        .pass())
                .isFalse();
    }

    @Test
    void resultLineFormat() {
        String line = new KernelCheckCommand.Result("attention", "bf16", "hq=8", 1.5e-3, 2e-3, true).line();
        assertThat(line.trim().split("\\s+"))
                .containsExactly("attention", "bf16", "hq=8", "1.500e-03", "2.000e-03", "PASS");
    }

    @Test
    void fp32IsRejected() {
        Run r = run("--dtypes", "fp32");
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("bf16 or fp16");
    }

    @Test
    void withoutAGpuItFailsFastWithAClearMessage() {
        // Not Cuda.init(): without a driver its JCuda class fails to initialise once per JVM, and the command must see
        // that first.
        assumeTrue(!Files.exists(Path.of("/dev/nvidiactl")), "a GPU is present; the full check runs there instead");
        Run r = run();
        assertThat(r.code()).isEqualTo(ExitCodes.RUNTIME);
        assertThat(r.err()).startsWith("error: ").containsAnyOf("CUDA driver", "cuInit");
    }
}
