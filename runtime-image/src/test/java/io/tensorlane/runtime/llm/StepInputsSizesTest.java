package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.contract.MemoryBudget;
import io.tensorlane.contract.SamplingBuffers;
import io.tensorlane.runtime.sched.SamplingRows;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The sampling buffers the engine allocates at start (StepInputs, no GPU needed to size them) are the contract's, and
 * for an engine of 256 sequences a step they are what the operator's memory plan budgets ({@link
 * MemoryBudget#samplingBytes}).
 */
class StepInputsSizesTest {
    static final int LLAMA_VOCAB = 128256;

    /** The step sizes LlmEngine builds: {@code maxSeqs + 1} step rows, KV blocks of 16 tokens. */
    static RankModel.Dims dims(int maxSeqs, int logitRows, int maxModelLen) {
        return new RankModel.Dims(
                8192,
                logitRows,
                maxSeqs + 1,
                maxSeqs + 1,
                (maxModelLen + 15) / 16,
                16,
                maxModelLen,
                0,
                KvCacheDtype.AUTO);
    }

    static long[] sizes(RankModel.Dims d, boolean sampler) {
        // as RankModel: the parameter buffer's capacity from the logits rows
        return StepInputs.sizes(d, SamplingRows.capacity(d.maxLogitRows()), LLAMA_VOCAB, sampler);
    }

    static Stream<Arguments> engines() {
        return Stream.of(
                // max sequences, logits rows, max model length, parameter+mask bytes, penalty bytes (sampling rank)
                // serve's default: 64 sequences, 64 rows; 4008 mask words a row; 8192 + 300 + 128 + 128 pairs a row
                Arguments.of(64, 64, 8192, 4L * 64 * (14 + 4008), 4L * 2 * 64 * (8192 + 556)),
                // an odd row count is laid out for one more (even) row; 33 step rows, capacity 34: 33 penalised rows
                Arguments.of(32, 33, 8192, 4L * 34 * (14 + 4008), 4L * 2 * 33 * (8192 + 556)),
                // n-gram speculation k = 4: 5 logits rows a sequence get masks, penalties stay one row a sequence (+1)
                Arguments.of(64, 320, 8192, 4L * 320 * (14 + 4008), 4L * 2 * 65 * (8192 + 556)),
                // a context longer than the vocabulary: one count pair per distinct id, at most the vocabulary
                Arguments.of(64, 64, 131072, 4L * 64 * (14 + 4008), 4L * 2 * 64 * (LLAMA_VOCAB + 556)));
    }

    @ParameterizedTest
    @MethodSource("engines")
    void theSamplingBuffersAreTheContractsLayout(
            int maxSeqs, int logitRows, int maxModelLen, long parameterBytes, long penaltyBytes) {
        RankModel.Dims d = dims(maxSeqs, logitRows, maxModelLen);
        long[] sampler = sizes(d, true);
        long[] other = sizes(d, false);
        assertThat(4 * sampler[StepInputs.Buf.SAMPLING.ordinal()])
                .isEqualTo(parameterBytes)
                .isEqualTo(SamplingBuffers.parameterBytes(logitRows, LLAMA_VOCAB));
        assertThat(4 * sampler[StepInputs.Buf.PENALTIES.ordinal()])
                .isEqualTo(penaltyBytes)
                .isEqualTo(SamplingBuffers.penaltyBytes(logitRows, maxSeqs + 1, maxModelLen, LLAMA_VOCAB));
        // every rank holds the parameters and masks; only the sampling rank the penalty pairs
        assertThat(other[StepInputs.Buf.SAMPLING.ordinal()]).isEqualTo(sampler[StepInputs.Buf.SAMPLING.ordinal()]);
        assertThat(other[StepInputs.Buf.PENALTIES.ordinal()]).isEqualTo(1);
    }

    static Stream<Arguments> planned() {
        return Stream.of(Arguments.of(0, 8192), Arguments.of(4, 8192), Arguments.of(0, 131072), Arguments.of(8, 32768));
    }

    @ParameterizedTest
    @MethodSource("planned")
    void anEngineOf256SequencesAllocatesWhatThePlanBudgets(int k, int maxModelLen) {
        // the plan sizes for min(batch tokens, 256) sequences, k + 1 logits rows each
        RankModel.Dims d = dims(MemoryBudget.MAX_SEQUENCES, MemoryBudget.MAX_SEQUENCES * (k + 1), maxModelLen);
        long[] s = sizes(d, true);
        MemoryBudget.Sampling plan = MemoryBudget.samplingBytes(LLAMA_VOCAB, 8192, k, maxModelLen);
        assertThat(plan.parametersAndMasks()).isEqualTo(4 * s[StepInputs.Buf.SAMPLING.ordinal()]);
        assertThat(plan.penaltyPairs()).isEqualTo(4 * s[StepInputs.Buf.PENALTIES.ordinal()]);
    }
}
