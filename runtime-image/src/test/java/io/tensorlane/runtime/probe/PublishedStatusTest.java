package io.tensorlane.runtime.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.Measurement;
import io.tensorlane.topology.TopologyFixtures;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What the probe applies to the status subresource never carries {@code measurement} (the preflight's field), whether
 * or not the status handed to it has one; the links, including {@code --measure}'s per-pair results, go out unchanged.
 */
class PublishedStatusTest {
    static final KubernetesSerialization JSON = new KubernetesSerialization();

    static Stream<Arguments> statuses() {
        return Stream.of(
                Arguments.of("measured links, no measurement", measuredLinks(TopologyFixtures.L40S_2), false),
                Arguments.of(
                        "measured links and a measurement",
                        withMeasurement(measuredLinks(TopologyFixtures.L40S_2)),
                        true),
                Arguments.of(
                        "H200 with a measurement",
                        withMeasurement(TopologyFixtures.load(TopologyFixtures.H200_SXM_8)),
                        true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("statuses")
    void appliedStatusHasNoMeasurement(String name, GpuTopologyStatus status, boolean hadMeasurement) {
        String before = JSON.asJson(status);
        GpuTopologyStatus applied = Publisher.applied(status);

        assertThat(applied.measurement).isNull();
        assertThat(JSON.asJson(applied)).doesNotContain("\"measurement\"");
        assertThat(JSON.asJson(applied.links)).isEqualTo(JSON.asJson(status.links));
        assertThat(JSON.asJson(applied.summary)).isEqualTo(JSON.asJson(status.summary));
        assertThat(JSON.asJson(status)).as("the caller's status is not changed").isEqualTo(before);
        assertThat(status.measurement != null).isEqualTo(hadMeasurement);
    }

    static GpuTopologyStatus measuredLinks(String fixture) {
        return PairMeasurement.apply(
                TopologyFixtures.load(fixture), List.of(new PairMeasurement(0, 1, true, 25.1, null)));
    }

    static GpuTopologyStatus withMeasurement(GpuTopologyStatus s) {
        Measurement m = new Measurement();
        m.time = "2026-11-29T00:00:00Z";
        m.worldSize = s.gpus.size();
        m.selftestPassed = true;
        s.measurement = m;
        return s;
    }
}
