package io.tensorlane.runtime.sched;

import io.tensorlane.runtime.text.Sampler;
import io.tensorlane.runtime.text.TopLogprobs;
import java.util.List;
import java.util.stream.IntStream;

/**
 * The logprobs of a step's drawn rows whose sequence asked for them ({@code logprobs} > 0): a full-vocabulary
 * log-softmax each (~1 ms at 128k ids), computed side by side on the common pool before the scheduler walks the rows in
 * order, instead of one after another on its thread (32 such rows were ~32 ms a step). Each row is the same pure
 * function of its logits ({@link Sampler#logprobs}), so the values do not depend on the order.
 */
final class RowLogprobs {
    private RowLogprobs() {}

    /**
     * Per logits row of {@code res}, the drawn token's logprobs where the row's sequence wants them (a decode row, or
     * every row of a verify chunk), else null; null altogether when the step has no logits or no such row.
     */
    static TopLogprobs[] of(List<BatchPlanner.Entry> entries, StepResult res, int vocab) {
        if (res.logits() == null) {
            return null;
        }
        int rows = res.ids().length;
        int[] k = null; // allocated at the first row that wants logprobs: most steps have none
        for (BatchPlanner.Entry en : entries) {
            int want = en.seq().req.logprobs();
            if (want <= 0 || en.logitRow() < 0) {
                continue;
            }
            for (int r = en.logitRow(); r <= en.logitRow() + en.drafts() && r < rows; r++) {
                if (k == null) {
                    k = new int[rows];
                }
                k[r] = want;
            }
        }
        if (k == null) {
            return null;
        }
        int[] want = k;
        TopLogprobs[] out = new TopLogprobs[rows];
        IntStream.range(0, rows)
                .parallel()
                .filter(r -> want[r] > 0)
                .forEach(r -> out[r] = Sampler.logprobs(res.logits(), r * vocab, vocab, res.ids()[r], want[r]));
        return out;
    }
}
