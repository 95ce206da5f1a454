package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.api.v1alpha1.Measurement;
import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.AlgorithmTable;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The preflight's termination message: built from selftest/bench output, bounded to 4096 bytes, read back as-is. */
class PreflightReportTest {
    static final String CSV = """
      algorithm,mode,world,dtype,bytes,median_us,min_us,max_us,algbw_GBps,busbw_GBps,kernel_GBps,samples
      OneStage,eager,8,bf16,43008,31.500,30.000,33.000,1.0,1.0,1.0,7
      OneStage,graph,8,bf16,43008,21.250,20.000,22.000,1.0,1.0,1.0,7
      TwoStage,graph,8,bf16,43008,27.000,26.000,28.000,1.0,1.0,1.0,7
      NCCL,eager,8,bf16,43008,198.000,190.000,210.000,1.0,1.0,1.0,7
      TwoStage,eager,8,bf16,8388608,410.000,400.000,420.000,1.0,1.0,1.0,7
      OneStage,eager,8,bf16,8388608,900.000,880.000,910.000,1.0,1.0,1.0,7
      """;

    @Test
    void successCarriesTheTableAndTheBestLatencyPerSize() throws Exception {
        AlgorithmTable t = new AlgorithmTable(
                8,
                "bench",
                List.of(
                        new AlgorithmTable.Row(524287, Algorithm.OneStage),
                        new AlgorithmTable.Row(8388608, Algorithm.TwoStage)));
        Measurement m = PreflightReport.success(8, t, CSV);
        assertThat(m.algorithmTable)
                .extracting(r -> r.upToBytes + ":" + r.algorithm)
                .containsExactly("524287:OneStage", "8388608:TwoStage");
        assertThat(m.latencies).hasSize(2);
        Measurement.Latency small = m.latencies.get(0);
        assertThat(small.bytes).isEqualTo(43008);
        assertThat(small.customMicros).isEqualTo(21.25);
        assertThat(small.algorithm).isEqualTo("OneStage");
        assertThat(small.ncclMicros).isEqualTo(198.0);
        assertThat(m.latencies.get(1).algorithm).isEqualTo("TwoStage");
        assertThat(m.latencies.get(1).ncclMicros).isNull();

        String json = PreflightReport.toJson(m);
        Measurement back = new ObjectMapper().readValue(json, Measurement.class);
        assertThat(back.p2pVerified).isTrue();
        assertThat(back.selftestPassed).isTrue();
        assertThat(back.failure).isNull();
        assertThat(back.worldSize).isEqualTo(8);
        assertThat(json).doesNotContain("\"time\""); // the operator stamps the Job's completion time
    }

    @Test
    void neverLongerThanTheKubeletKeeps() {
        StringBuilder csv = new StringBuilder(CSV.lines().findFirst().orElseThrow()).append('\n');
        for (int i = 0; i < 200; i++) {
            csv.append("OneStage,eager,8,bf16,").append(1024L * (i + 1)).append(",12.345,1,1,1,1,1,7\n");
        }
        Measurement m = PreflightReport.success(8, AlgorithmTable.defaults(8, 8L << 20), csv.toString());
        String json = PreflightReport.toJson(m);
        assertThat(json.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(4096);
        assertThat(m.latencies).isNotEmpty().hasSizeLessThan(200);
        assertThat(m.latencies.get(0).bytes).isEqualTo(1024); // the smallest sizes are kept
    }

    @Test
    void failureSaysWhy() throws Exception {
        String json = PreflightReport.toJson(PreflightReport.failure(
                8, false, false, "the custom-allreduce selftest failed on 8 GPUs (exit code 1)"));
        Measurement back = new ObjectMapper().readValue(json, Measurement.class);
        assertThat(back.failure).contains("selftest failed");
        assertThat(back.p2pVerified).isFalse();
    }

    @Test
    void aBadCsvIsAClearError() {
        assertThatThrownBy(() -> PreflightReport.latencies("bytes,us\n1,2\n"))
                .hasMessageContaining("unexpected header");
    }
}
