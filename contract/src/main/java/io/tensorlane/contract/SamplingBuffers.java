package io.tensorlane.contract;

/**
 * The Tensorlane runtime's per-row sampling buffers on the GPU (issue #30: sampling penalties and structured outputs),
 * one description for the runtime, which lays them out and allocates them once at engine start ({@code StepInputs} in
 * runtime-image, read by {@code tl_sample_f32} in tl_sample.cuh), and for the operator's memory plan, which budgets them
 * ({@link MemoryBudget#samplingBytes}). Both are int32 buffers of fixed size, allocated whether or not a request ever
 * uses a mask or a penalty (a CUDA graph reads them at fixed addresses):
 *
 * <ul>
 *   <li><b>parameters and token masks</b>, on every rank: for {@link #capacity}{@code (logitRows)} rows,
 *       {@link #WORDS_PER_ROW} words of parameters (temperature, top-p, min-p, top-k, counter, seed, masked, the
 *       penalties and where a row's pairs are) and one token-mask slot of {@link #maskWords}{@code (vocab)} words (one
 *       bit an id) per row ({@link #parameterBytes});
 *   <li><b>penalty pairs</b>, on the rank that samples (rank 0): for {@link #penaltyRows} rows, room for every row's
 *       (id, value) pairs at once, {@link #maxPairsPerRow}: one count pair per distinct id a sequence of {@code
 *       maxModelLen} tokens can hold, the logit_bias entries, the ids min_tokens bans and one ban per bad-word sequence
 *       ({@link #penaltyBytes}).
 * </ul>
 *
 * The host-side token-mask cache of structured outputs (one mask per automaton state, per grammar) lives in the Java
 * heap, not here. Pure.
 */
public final class SamplingBuffers {
    /**
     * Int32 words per row of the parameters (temperature, top-p, min-p, top-k, counter, seed's two, masked, presence,
     * frequency, repetition, pen_start, pen_bias, pen_count).
     */
    public static final int WORDS_PER_ROW = 14;
    /** Most logit_bias entries a request may carry (the penalty buffer is sized by it). */
    public static final int MAX_BIAS = 300;
    /** Most ids min_tokens may ban (EOS and stop ids together). */
    public static final int MAX_BANNED = 128;
    /** Most bad-word token sequences (each bans at most one id per draw). */
    public static final int MAX_BAD_SEQUENCES = 128;

    private SamplingBuffers() {}

    /** Rows the parameter buffer is laid out for: {@code maxRows} rounded up to even. */
    public static int capacity(int maxRows) {
        return maxRows + (maxRows & 1);
    }

    /** Int32 words of one token mask over {@code vocab} ids. */
    public static int maskWords(int vocab) {
        return (vocab + 31) / 32;
    }

    /** Where row {@code row}'s mask starts (int32 words from the layout's start) for {@code capacity} rows. */
    public static long maskOffset(int capacity, int row, int vocab) {
        return (long) WORDS_PER_ROW * capacity + (long) row * maskWords(vocab);
    }

    /** Int32 words of the whole parameter buffer: the parameters and a mask slot per row. */
    public static long layoutWords(int capacity, int vocab) {
        return maskOffset(capacity, capacity, vocab);
    }

    /**
     * Most pairs one row can hold for sequences of at most {@code maxModelLen} tokens over {@code vocab} ids: one count
     * pair per distinct id, the bias, the min_tokens bans and the bad words' bans.
     */
    public static long maxPairsPerRow(int maxModelLen, int vocab) {
        return Math.min((long) maxModelLen, vocab) + MAX_BIAS + MAX_BANNED + MAX_BAD_SEQUENCES;
    }

    /**
     * Rows the penalty buffer holds: one draw per sequence and step, so at most the step's rows ({@code maxRows}, the
     * engine's most sequences per step plus one), and never more than the parameter buffer's {@code capacity} (a
     * prompt-logits dump has more logits rows than sequences, not more penalised draws).
     */
    public static int penaltyRows(int capacity, int maxRows) {
        return Math.min(capacity, maxRows);
    }

    /** Int32 words of the penalty pairs of {@code rows} rows: the most every row can need at once. */
    public static long penaltyInts(int rows, int maxModelLen, int vocab) {
        return 2L * rows * maxPairsPerRow(maxModelLen, vocab);
    }

    /** Bytes of the parameters and token-mask slots for steps of at most {@code logitRows} logits rows (every rank). */
    public static long parameterBytes(int logitRows, int vocab) {
        return Integer.BYTES * layoutWords(capacity(logitRows), vocab);
    }

    /**
     * Bytes of the penalty pairs (the sampling rank) for steps of at most {@code logitRows} logits rows and {@code
     * maxRows} rows, sequences of at most {@code maxModelLen} tokens over {@code vocab} ids.
     */
    public static long penaltyBytes(int logitRows, int maxRows, int maxModelLen, int vocab) {
        return Integer.BYTES * penaltyInts(penaltyRows(capacity(logitRows), maxRows), maxModelLen, vocab);
    }
}
