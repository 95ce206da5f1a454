package io.tensorlane.operator.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Quantity;
import io.tensorlane.operator.render.Renderer;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The GPU count of a capacity/request map: the plain-decimal fast path and Quantity's own parse agree. */
class GpuCapacityTest {
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "8|8", "0|0", "16|16", "2000m|2", "1k|1000", "8.0|8", "1e1|10", "-1|-1",
            })
    void readsTheCount(String quantity, int expected) {
        assertThat(NodeLabelDecision.gpuCapacity(Map.of(Renderer.GPU_RESOURCE, new Quantity(quantity))))
                .isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {"8|", "4|''", "2|k"})
    void amountAndFormatApart(String amount, String format) {
        int expected = new Quantity(amount, format).getNumericalAmount().intValue();
        assertThat(NodeLabelDecision.gpuCapacity(Map.of(Renderer.GPU_RESOURCE, new Quantity(amount, format))))
                .isEqualTo(expected);
    }

    @org.junit.jupiter.api.Test
    void absentIsZero() {
        assertThat(NodeLabelDecision.gpuCapacity(null)).isZero();
        assertThat(NodeLabelDecision.gpuCapacity(Map.of("cpu", new Quantity("8"))))
                .isZero();
    }
}
