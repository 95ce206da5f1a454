package io.tensorlane.runtime.llm;

import io.tensorlane.runtime.engine.CapturedGraph;
import io.tensorlane.runtime.engine.Rank;
import io.tensorlane.runtime.sched.StepBatch;

/**
 * Greedy steps of one sequence chained on the GPU ({@link LlmEngine#chain}): the draft model's k guesses a verify step
 * without reading each back. A draft step of a small model is a few microseconds of GPU work against ~0.1 ms of host
 * work around it (staging and copying its inputs, the graph launch, the synchronize, the watchdog read and the id read
 * back; H200, 2026-12-04: 107 µs a draft step, 24% of a batch-1 run with the draft). Here the first step's inputs are
 * uploaded as usual and its graph replayed; after it and after each of the {@code more} replays of the one-token graph
 * that follow, tl_chain_advance_i32 records the step's greedy id and writes the next one-token step's inputs on the
 * device (that id at the next position, its slot from row 0 of the block tables); one copy and one synchronize end the
 * chain. The ids equal those of the same steps run one at a time: the same graphs over the same inputs.
 *
 * <p>Since the kernel rewrote the ids, positions, slots, token rows and logits tokens on the device, their host copies no
 * longer say what the device holds, so they are marked for a full upload at the next step. On unless {@link
 * KernelChoices#DRAFT_CHAIN_ENV} is {@code off}; that constant's documentation gives the GPU run behind the default.
 */
final class ChainedSteps {
    private static final java.util.logging.Logger LOG =
            java.util.logging.Logger.getLogger(ChainedSteps.class.getName());
    private static final java.util.concurrent.atomic.AtomicBoolean LOGGED =
            new java.util.concurrent.atomic.AtomicBoolean();

    private ChainedSteps() {}

    /**
     * On rank {@code r} (its model {@code model}, the engine's only rank): {@code first} (padded as {@code padded} to its
     * graph {@code g}), then {@code more} replays of the one-token graph {@code one}; the {@code more + 1} greedy ids
     * (the id after {@code first}'s last token, then after each fed id). {@code blockSize}: tokens per KV block.
     */
    static int[] run(
            RankModel model,
            Rank r,
            StepBatch first,
            StepBatch padded,
            int more,
            CapturedGraph g,
            CapturedGraph one,
            int blockSize) {
        StepInputs in = model.inputs();
        var s = r.stream();
        model.uploadInputs(padded);
        g.launch(s);
        int idsIndex = first.logitTokens().length - 1; // its last logits row: the id after its last token
        int posIndex = first.tokens() - 1;
        try {
            for (int j = 0; j <= more; j++) {
                model.kernels
                        .sampler()
                        .chainAdvance(
                                in.device(StepInputs.Buf.OUT_IDS),
                                j == 0 ? idsIndex : 0,
                                j == 0 ? posIndex : 0,
                                in.device(StepInputs.Buf.IDS),
                                in.device(StepInputs.Buf.POSITIONS),
                                in.device(StepInputs.Buf.SLOTS),
                                in.device(StepInputs.Buf.TOKEN_ROW),
                                in.device(StepInputs.Buf.LOGIT_TOKENS),
                                in.device(StepInputs.Buf.TABLES),
                                blockSize,
                                in.device(StepInputs.Buf.CHAIN_OUT),
                                j,
                                j == more,
                                s);
                if (j < more) {
                    one.launch(s);
                }
            }
            in.fetch(StepInputs.Buf.CHAIN_OUT, more + 1, s);
            Rank.StreamWait wait = r.awaitStream();
            r.checkWatchdog(wait);
            if (!LOGGED.getAndSet(true)) {
                LOG.info(() -> "greedy steps chained on the GPU (" + KernelChoices.DRAFT_CHAIN_ENV + " on): a chain of "
                        + (more + 1) + " steps read back once");
            }
            return in.read(StepInputs.Buf.CHAIN_OUT, more + 1);
        } finally {
            in.invalidate(
                    StepInputs.Buf.IDS,
                    StepInputs.Buf.POSITIONS,
                    StepInputs.Buf.SLOTS,
                    StepInputs.Buf.TOKEN_ROW,
                    StepInputs.Buf.LOGIT_TOKENS);
        }
    }

    /**
     * Whether a chain of {@code more} steps after {@code first} fits these buffers: one sequence, greedy, at most
     * {@code maxLogitRows} ids back (the chain's buffer). Pure.
     */
    static boolean fits(StepBatch first, int more, int maxLogitRows) {
        return first.rows() == 1
                && first.tokens() >= 1
                && first.logitTokens().length >= 1
                && first.sampling().trivial()
                && more >= 0
                && more + 1 <= maxLogitRows;
    }
}
