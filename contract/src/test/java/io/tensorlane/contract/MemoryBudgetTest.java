package io.tensorlane.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The start-up walk: the first allocation that does not fit is the OOM, with what was free then. */
class MemoryBudgetTest {
    static final long MIB = 1L << 20;
    static final MemoryBudget.NonStatic SMALL =
            new MemoryBudget.NonStatic(300 * MIB, 100 * MIB, 50 * MIB, 20 * MIB, 10 * MIB, 20 * MIB);

    static Stream<Arguments> walks() {
        long gpu = 1000 * MIB; // non-static needs 500 MiB
        return Stream.of(
                Arguments.of("everything fits, exactly", gpu, 500 * MIB, Optional.empty()),
                Arguments.of(
                        "1 MiB too much: the reserve is what is missing",
                        gpu,
                        501 * MIB,
                        Optional.of(new MemoryBudget.Oom(MemoryBudget.PHASE_RESERVE, 20 * MIB, 19 * MIB, gpu))),
                Arguments.of(
                        "graphs do not fit",
                        gpu,
                        540 * MIB,
                        Optional.of(new MemoryBudget.Oom(MemoryBudget.PHASE_CUDA_GRAPHS, 50 * MIB, 30 * MIB, gpu))),
                Arguments.of(
                        "activations do not fit",
                        gpu,
                        600 * MIB,
                        Optional.of(new MemoryBudget.Oom(MemoryBudget.PHASE_ACTIVATIONS, 300 * MIB, 270 * MIB, gpu))),
                Arguments.of(
                        "NCCL does not fit",
                        gpu,
                        885 * MIB,
                        Optional.of(new MemoryBudget.Oom(MemoryBudget.PHASE_NCCL, 20 * MIB, 5 * MIB, gpu))),
                Arguments.of(
                        "the allreduce buffers do not fit (the seed's incident)",
                        gpu,
                        895 * MIB,
                        Optional.of(
                                new MemoryBudget.Oom(TerminationMessage.PHASE_IPC_BUFFERS, 10 * MIB, 5 * MIB, gpu))),
                Arguments.of(
                        "the static pool itself does not fit",
                        gpu,
                        950 * MIB,
                        Optional.of(new MemoryBudget.Oom(
                                TerminationMessage.PHASE_STATIC_POOL, 950 * MIB, 900 * MIB, gpu))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("walks")
    void firstFailure(String why, long gpu, long pool, Optional<MemoryBudget.Oom> expected) {
        assertThat(MemoryBudget.firstFailure(gpu, MemoryBudget.startup(pool, SMALL)))
                .isEqualTo(expected);
    }

    @Test
    void theStaticPoolIsRoundedDownToTheAllocationGranule() {
        long total = 102_641_958_912L; // RTX PRO 6000 Blackwell
        long pool = MemoryBudget.staticPoolBytes(0.94, total);
        assertThat(pool % BufferLayout.PEER_GRANULE).isZero();
        assertThat(pool).isLessThanOrEqualTo((long) (0.94 * total)).isGreaterThan((long) (0.94 * total) - (2 << 20));
    }

    @Test
    void theSeedBoxNumbers() {
        // Llama-3.3-70B bf16, TP 8, 16384 batch tokens, custom allreduce with 8 MiB messages, reserve 512 MiB
        var dims = new MemoryBudget.Dims(8192, 64, 8, 128, 28672, 128256, 2);
        var n = MemoryBudget.nonStatic(dims, 16384, 8, true, 8 * MIB, 512 * MIB);
        assertThat(n.activations()).isEqualTo(3_467_116_544L);
        assertThat(n.ipc()).isEqualTo(BufferLayout.of(8, 8 * MIB).totalBytesPerRank());
        assertThat(n.nccl()).isEqualTo(192 * MIB);
        assertThat(n.total()).isEqualTo(n.activations() + 560 * MIB + 1024 * MIB + 192 * MIB + n.ipc() + 512 * MIB);
        assertThat(MemoryBudget.ipcBytes(false, 8, 8 * MIB)).isZero();
        assertThat(MemoryBudget.ipcBytes(true, 1, 8 * MIB)).isZero();
        assertThat(MemoryBudget.ncclBytes(1)).isZero();
        assertThat(MemoryBudget.startup(0, n))
                .extracting(MemoryBudget.Allocation::phase)
                .containsExactly(
                        MemoryBudget.PHASE_CONTEXT,
                        TerminationMessage.PHASE_STATIC_POOL,
                        TerminationMessage.PHASE_IPC_BUFFERS,
                        MemoryBudget.PHASE_NCCL,
                        MemoryBudget.PHASE_ACTIVATIONS,
                        MemoryBudget.PHASE_CUDA_GRAPHS,
                        MemoryBudget.PHASE_RESERVE);
    }

    static Stream<Arguments> sampling() {
        return Stream.of(
                // vocab, batch tokens, k, max model length, parameters and masks, penalty pairs
                Arguments.of(152064, 8192, 0, 4096, 4L * 256 * (14 + 4752), 8L * 256 * (4096 + 556)),
                Arguments.of(152064, 8192, 0, 262144, 4L * 256 * (14 + 4752), 8L * 256 * (152064 + 556)),
                Arguments.of(32000, 7, 0, 4096, 4L * 8 * (14 + 1000), 8L * 8 * (4096 + 556)),
                Arguments.of(32000, 8192, 2, 4096, 4L * 768 * (14 + 1000), 8L * 257 * (4096 + 556)),
                Arguments.of(0, 8192, 0, 4096, 0L, 0L),
                Arguments.of(32000, 0, 0, 4096, 0L, 0L));
    }

    @ParameterizedTest
    @MethodSource("sampling")
    void samplingBuffersForTheSequencesOfAStep(
            int vocab, long tokens, int k, int maxModelLen, long parametersAndMasks, long penaltyPairs) {
        MemoryBudget.Sampling s = MemoryBudget.samplingBytes(vocab, tokens, k, maxModelLen);
        assertThat(s.parametersAndMasks()).isEqualTo(parametersAndMasks);
        assertThat(s.penaltyPairs()).isEqualTo(penaltyPairs);
        assertThat(s.total()).isEqualTo(parametersAndMasks + penaltyPairs);
    }

    /** min(tokens, 256) x k x vocab x 4 x 2 (the logits and probabilities buffers grown by k rows per sequence). */
    @ParameterizedTest(name = "vocab {0}, {1} tokens, k {2}")
    @org.junit.jupiter.params.provider.CsvSource({
        "128256, 8192, 0, 0",
        "128256, 8192, 1, 262668288",
        "128256, 8192, 4, 1050673152",
        "128256, 16384, 8, 2101346304",
        "128256, 64, 4, 262668288",
        "0, 8192, 4, 0",
        "32000, 1, 16, 4096000"
    })
    void speculativeLogitsBytes(int vocab, long tokens, int k, long bytes) {
        assertThat(MemoryBudget.speculativeLogitsBytes(vocab, tokens, k)).isEqualTo(bytes);
    }

    @Test
    void speculationGrowsOnlyTheActivations() {
        var dims = new MemoryBudget.Dims(8192, 64, 8, 128, 28672, 128256, 2);
        var off = MemoryBudget.nonStatic(dims, 16384, 8, true, 8 * MIB, 512 * MIB);
        var on = MemoryBudget.nonStatic(dims, 16384, 8, true, 8 * MIB, 512 * MIB, 4);
        assertThat(MemoryBudget.nonStatic(dims, 16384, 8, true, 8 * MIB, 512 * MIB, 0))
                .isEqualTo(off);
        assertThat(on.activations() - off.activations())
                .isEqualTo(MemoryBudget.speculativeLogitsBytes(128256, 16384, 4))
                .isEqualTo(256L * 4 * 128256 * 4 * 2);
        assertThat(on.total() - off.total()).isEqualTo(on.activations() - off.activations());
    }
}
