package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.DType;
import io.tensorlane.contract.TerminationMessage;
import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.common.TerminationLog;
import io.tensorlane.runtime.engine.AllreduceTimeoutException;
import io.tensorlane.runtime.engine.CudaOutOfMemoryException;
import io.tensorlane.runtime.engine.WatchdogRecord;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

class MainTest {
    record Result(int code, String out, String err) {}

    static Result run(String... args) {
        CommandLine cl = Main.commandLine();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        int code = cl.execute(args);
        return new Result(code, out.toString(), err.toString());
    }

    @Test
    void dryRunPrintsThePlanWithoutAGpu() {
        Result r = run("selftest", "--dry-run", "--world-sizes", "2,8", "--dtypes", "bf16", "--counts", "1,4097");
        assertThat(r.code()).isEqualTo(ExitCodes.OK);
        assertThat(r.out())
                .contains("world sizes [2, 8]")
                .contains("world 8: buffers per rank signal=2097152(peer)")
                .contains("table: <=8208=OneStage")
                .contains("dry run: arguments, layouts and tables are valid");
    }

    static Stream<Arguments> badArguments() {
        return Stream.of(
                Arguments.of(
                        new String[] {"selftest", "--dry-run", "--world-sizes", "1..3"},
                        "world sizes must be 2..8, got 1"),
                Arguments.of(new String[] {"selftest", "--dry-run", "--dtypes", "int8"}, "unknown dtype 'int8'"),
                Arguments.of(new String[] {"selftest", "--dry-run", "--algorithms", "NCCL"}, "NCCL is not one"),
                Arguments.of(new String[] {"selftest", "--dry-run", "--counts", "0"}, "element counts must be >= 1"),
                Arguments.of(
                        new String[] {"selftest", "--dry-run", "--occupy-fraction", "1.5"},
                        "--occupy-fraction must be in (0, 1)"),
                Arguments.of(new String[] {"bench", "--world-size", "9"}, "worldSize must be 1..8, got 9"),
                Arguments.of(new String[] {"bench", "--max-bytes", "2GiB"}, "maxMessageBytes must be <= 1073741824"),
                Arguments.of(new String[] {"bench", "--min-bytes", "lots"}, "not a size"));
    }

    @ParameterizedTest
    @MethodSource("badArguments")
    void badArgumentsExitWithUsageAndAClearMessage(String[] args, String message) {
        Result r = run(args);
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains(message).doesNotContain("\tat ");
    }

    @Test
    void unknownOptionIsAUsageError() {
        assertThat(run("selftest", "--frobnicate").code()).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void helpListsTheSubcommands() {
        Result r = run("--help");
        assertThat(r.code()).isZero();
        assertThat(r.out()).contains("version").contains("selftest").contains("bench");
    }

    @Test
    void versionNamesTheKernelArchitectures() {
        assertThat(VersionCommand.lines())
                .anySatisfy(l ->
                        assertThat(l).startsWith("kernels: [").contains("sm_90").contains("compute_90"));
    }

    @Test
    void cudaOomBecomesTheTerminationMessage(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("termination-log");
        Files.createFile(log);
        StringWriter err = new StringWriter();
        TerminationMessage m =
                TerminationMessage.cudaOom("ipc-buffers", 19399424, 5373952, 150109880320L, 0, 3, "scratch");
        TerminationLog.write(log, m, new PrintWriter(err));
        JsonNode n = new ObjectMapper().readTree(Files.readString(log));
        assertThat(n.get("reason").asText()).isEqualTo("CudaOutOfMemory");
        assertThat(n.get("phase").asText()).isEqualTo("ipc-buffers");
        assertThat(n.get("requestedBytes").asLong()).isEqualTo(19399424);
        assertThat(n.get("freeBytes").asLong()).isEqualTo(5373952);
        assertThat(err.toString()).contains("\"reason\":\"CudaOutOfMemory\"");
        // the handler maps the exception (also when wrapped) to exit code 3
        CommandLine cl = Main.commandLine();
        cl.setErr(new PrintWriter(new StringWriter()));
        assertThat(Main.handle(new IllegalStateException(new CudaOutOfMemoryException(m)), cl))
                .isEqualTo(ExitCodes.CUDA_OOM);
    }

    @Test
    void aWatchdogTimeoutExitsWithFourAndPrintsEveryRanksRecord() {
        var rank0 = new AllreduceTimeoutException(
                new WatchdogRecord(0, 1, 2, 15, 1621, Algorithm.OneStage, 2, 60_000_000_000L, 60_000_000_000L, 1620));
        var rank1 = new AllreduceTimeoutException(
                new WatchdogRecord(1, 0, 1, 15, 1621, Algorithm.TwoStage, 2, 60_000_000_000L, 60_000_000_000L, 0),
                List.of("#7 OneStage bf16 count 8 slot 4, 1 blocks", "#8 TwoStage bf16 count 4096 slot 4, 1 blocks"));
        rank0.addSuppressed(rank1);
        CommandLine cl = Main.commandLine();
        StringWriter err = new StringWriter();
        cl.setErr(new PrintWriter(err));
        assertThat(Main.handle(new IllegalStateException(rank0), cl)).isEqualTo(ExitCodes.WATCHDOG);
        assertThat(err.toString())
                .contains("allreduce watchdog: rank 1 did not arrive within 60000 ms (rank 0 waited at the OneStage end"
                        + " barrier, block 15, call 1621)")
                .contains("  and on another rank: rank 0 did not arrive within 60000 ms (rank 1 waited at the TwoStage"
                        + " mid barrier, block 15, call 1621)")
                .contains(
                        "    rank 1's last allreduce launches (oldest first; graph replays not listed): #7 OneStage bf16"
                                + " count 8 slot 4, 1 blocks | #8 TwoStage bf16 count 4096 slot 4, 1 blocks");
    }

    @Test
    void terminationLogIsNotCreatedUnderDevOutsideAPod() {
        StringWriter err = new StringWriter();
        TerminationLog.write(
                Path.of("/dev/tensorlane-test-termination-log"),
                TerminationMessage.cudaOom("x", 1, 0, null, null, null, null),
                new PrintWriter(err));
        assertThat(Files.exists(Path.of("/dev/tensorlane-test-termination-log")))
                .isFalse();
        assertThat(err.toString()).contains("CudaOutOfMemory");
    }

    @Test
    void selftestPlanCoversOddCountsAndSizesTheLayoutForTheWidestType() {
        SelftestPlan p = new SelftestPlan(
                List.of(2, 8),
                List.of(DType.bf16, DType.fp32),
                List.of(Algorithm.OneStage, Algorithm.Ring),
                SelftestPlan.DEFAULT_COUNTS);
        assertThat(p.maxMessageBytes()).isEqualTo(2_000_003L * 4);
        assertThat(p.layout(8).maxMessageBytes()).isEqualTo(8_000_016L);
        assertThat(p.cases(8)).hasSize(2 * 2 * SelftestPlan.DEFAULT_COUNTS.size());
        assertThat(p.totalCases()).isEqualTo(2 * 2 * 2 * SelftestPlan.DEFAULT_COUNTS.size());
        assertThat(SelftestPlan.DEFAULT_COUNTS)
                .anySatisfy(c -> assertThat(c % 8).isNotZero());
        assertThatThrownBy(() -> new SelftestPlan(List.of(), List.of(DType.bf16), List.of(Algorithm.Ring), List.of(1L)))
                .hasMessageContaining("at least one");
    }
}
