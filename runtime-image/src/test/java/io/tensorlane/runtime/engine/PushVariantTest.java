package io.tensorlane.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.DType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which messages OneStage's push variant takes (the rest pull). */
class PushVariantTest {
    @ParameterizedTest(name = "world {0}, max message {1} B, {2} x {3} -> {4}")
    @CsvSource({
        // two or more ranks
        "1, 8388608, bf16, 4096, false",
        "2, 8388608, bf16, 4096, true",
        "8, 8388608, fp16, 4096, true",
        // 16-bit types only: the "not arrived" mark is -0.0 of a 16-bit type
        "2, 8388608, fp32, 4096, false",
        // whole 16-byte packs
        "2, 8388608, bf16, 8, true",
        "2, 8388608, bf16, 9, false",
        "2, 8388608, bf16, 4100, false",
        // within one push region: 256 KiB, or the layout's largest message when smaller
        "2, 8388608, bf16, 131072, true",
        "2, 8388608, bf16, 131080, false",
        "4, 65536, bf16, 32768, true",
        "4, 65536, bf16, 32776, false"
    })
    void fits(int world, long maxMessageBytes, String dtype, long count, boolean fits) {
        BufferLayout layout = BufferLayout.of(world, maxMessageBytes);
        assertThat(PushVariant.fits(layout, DType.parse(dtype), count)).isEqualTo(fits);
    }
}
