package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The host side of kernelcheck's masked sampling cases: masks, the lowest ids, the best allowed id. */
class KernelCheckMaskedSamplingTest {
    @Test
    void masksLowestAndBest() {
        int[] m = KernelCheckMaskedSampling.mask(new int[] {0, 31, 32, 40}, 2);
        assertThat(m[0]).isEqualTo(1 | (1 << 31));
        assertThat(m[1]).isEqualTo(1 | (1 << 8));
        float[] x = {5f, -1f, 3f, -2f, 3f, 9f};
        assertThat(KernelCheckMaskedSampling.lowest(x, 0, 6, 2)).containsExactly(3, 1);
        assertThat(KernelCheckMaskedSampling.lowest(x, 2, 4, 1)).containsExactly(1); // the row x[2..6)
        assertThat(KernelCheckMaskedSampling.best(x, 0, new int[] {4, 2, 1})).isEqualTo(2); // tie 3f: the lower id
    }
}
