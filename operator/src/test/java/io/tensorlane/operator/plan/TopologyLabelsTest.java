package io.tensorlane.operator.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.topology.TopologyFixtures;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TopologyLabelsTest {
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "NVIDIA H200|NVIDIA-H200",
                "NVIDIA RTX PRO 6000 Blackwell Server Edition|NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition",
                "  NVIDIA GeForce RTX 4090 (rev a1) |NVIDIA-GeForce-RTX-4090-rev-a1",
                "A100-SXM4-80GB|A100-SXM4-80GB",
                "-._weird_.-|weird",
                "***|unknown",
                "''|unknown",
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b c d|aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-b",
            })
    void sanitizesToValidLabelValues(String in, String expected) {
        String out = TopologyLabels.sanitize(in);
        assertThat(out).isEqualTo(expected);
        assertThat(out).hasSizeLessThanOrEqualTo(63).matches("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "h200-sxm-8|NVLink|Full|8|NVIDIA-H200",
                "rtx-4090-4|PCIe|None|4|NVIDIA-GeForce-RTX-4090",
            })
    void labelsMirrorTheSummary(String fixture, String interconnect, String p2p, String count, String product) {
        assertThat(TopologyLabels.forTopology(TopologyFixtures.load(fixture)))
                .containsEntry(TopologyLabels.INTERCONNECT, interconnect)
                .containsEntry(TopologyLabels.P2P, p2p)
                .containsEntry(TopologyLabels.GPU_COUNT, count)
                .containsEntry(TopologyLabels.GPU_PRODUCT, product);
    }
}
