package io.tensorlane.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AllreduceTest {
    @ParameterizedTest
    @CsvSource(
            nullValues = "null",
            value = {
                "Custom, Custom", "nccl, NCCL", "' None ', None", "NONE, None",
                "Auto, null", "'', null", "null, null", "Ring, null"
            })
    void findsTheValueCaseInsensitively(String text, String expected) {
        assertThat(Allreduce.find(text)).isEqualTo(Optional.ofNullable(expected).map(Allreduce::valueOf));
    }
}
