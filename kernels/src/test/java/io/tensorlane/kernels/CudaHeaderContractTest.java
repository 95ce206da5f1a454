package io.tensorlane.kernels;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.BufferLayout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The CUDA header's {@code #define}s and the Java contract (tensorlane-contract) describe the same buffers and
 * algorithm codes; this test reads the header the kernels are compiled from and fails when the two disagree.
 */
class CudaHeaderContractTest {
    private static final Pattern DEFINE =
            Pattern.compile("^#define\\s+(TL_\\w+)\\s+(0x[0-9A-Fa-f]+|\\d+)u?\\b", Pattern.MULTILINE);

    static Map<String, Long> defines() throws IOException {
        String header = Files.readString(Path.of("src/main/cuda/tl_allreduce.cuh"));
        Map<String, Long> out = new HashMap<>();
        Matcher m = DEFINE.matcher(header);
        while (m.find()) {
            String v = m.group(2);
            out.put(m.group(1), v.startsWith("0x") ? Long.parseLong(v.substring(2), 16) : Long.parseLong(v));
        }
        return out;
    }

    @Test
    void bufferLayoutMirrorsTheHeader() throws IOException {
        Map<String, Long> d = defines();
        assertThat(d)
                .containsEntry("TL_MAX_RANKS", (long) BufferLayout.MAX_RANKS)
                .containsEntry("TL_FLAG_SLOTS", (long) BufferLayout.FLAG_SLOTS)
                .containsEntry("TL_THREADS", (long) BufferLayout.THREADS_PER_BLOCK)
                .containsEntry("TL_FIXED_SLOTS", (long) BufferLayout.FIXED_POINTER_SLOTS)
                .containsEntry("TL_PUSH_SLOT", (long) BufferLayout.PUSH_POINTER_SLOT)
                .containsEntry("TL_PUSH_PHASES", (long) BufferLayout.PUSH_PHASES)
                .containsEntry("TL_PUSH_EMPTY_ELEMENT", (long) BufferLayout.PUSH_EMPTY_ELEMENT)
                .containsEntry("TL_WAIT_PUSH", (long) BufferLayout.PUSH_WAIT_SLOT);
    }

    @Test
    void algorithmCodesMirrorTheHeader() throws IOException {
        Map<String, Long> d = defines();
        assertThat(d)
                .containsEntry("TL_ALGO_ONESTAGE", (long) Algorithm.OneStage.kernelCode())
                .containsEntry("TL_ALGO_TWOSTAGE", (long) Algorithm.TwoStage.kernelCode())
                .containsEntry("TL_ALGO_RING", (long) Algorithm.Ring.kernelCode());
    }
}
