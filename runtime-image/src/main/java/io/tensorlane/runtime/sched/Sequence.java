package io.tensorlane.runtime.sched;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * One sequence's state. Everything but {@link #cancelled} and {@link #timings} belongs to the scheduler thread.
 * {@code tokens[0, length)} are the prompt and the generated tokens; the KV cache holds {@code computed} of them. The
 * next step feeds {@code tokens[computed, ...)}; when a chunk reaches {@code length} its last logits row yields the
 * next token. A preempted sequence goes back to {@code computed = 0} and is recomputed from prompt + generated tokens
 * (taking back from the prefix cache what is still there). The first {@code registered} blocks of {@code table} are in
 * the prefix cache (taken from it at admission, or registered once computed).
 */
final class Sequence implements Scheduler.Handle {
    final SeqRequest req;
    final SequenceListener listener;
    final List<Integer> table = new ArrayList<>();
    final int[] tokens;
    final BlockHashes hashes;
    /** The GPU sampler's penalty entries of this sequence, null when it has no penalty or bias. */
    final PenaltyState penalties;

    int length;
    int computed;
    int registered;
    /** Prompt tokens found in the prefix cache at the first admission; -1 before it. */
    int cachedTokens = -1;

    int generated;
    /** Whether this sequence may speculate (the request did not opt out). */
    boolean speculate = true;
    /** This step's proposed next tokens ({@link Speculator#propose}), null when none. */
    int[] draft;
    /** The distributions {@link #draft} was drawn from (rows of the vocabulary), null for point-mass guesses. */
    double[] draftQ;
    /** The proposer's state for this sequence ({@link Proposer#open}), made when it first speculates. */
    Proposer.Session proposer;

    /** The prompt's logprobs gathered so far ({@link PromptLogprobs}); null when the request asked for none. */
    final List<io.tensorlane.runtime.text.TopLogprobs> promptLogprobs;
    /** Whether {@link #promptLogprobs} went to the listener (from then on the sequence computes like any other). */
    boolean promptLogprobsSent;

    int preemptions;
    final long arrivalNanos;
    long admittedNanos = -1;
    long firstTokenNanos = -1;
    long lastTokenNanos = -1;
    FinishReason finish;
    private final Scheduler owner;
    volatile boolean cancelled;
    volatile RequestTimings timings;

    Sequence(SeqRequest req, SequenceListener listener, Scheduler owner, long now, long cacheSalt, Set<Integer> eos) {
        this.req = req;
        this.penalties = PenaltyState.of(req.penalties(), req.promptIds(), req.minTokensBans(eos));
        this.hashes = new BlockHashes(cacheSalt);
        this.listener = listener;
        this.owner = owner;
        this.tokens = Arrays.copyOf(req.promptIds(), req.promptIds().length + req.maxTokens());
        this.length = req.promptIds().length;
        this.arrivalNanos = now;
        this.promptLogprobs = req.promptLogprobs() >= 0 ? new ArrayList<>() : null;
    }

    /** Tokens the cache still lacks: 1 when decoding. */
    int need() {
        return length - computed;
    }

    @Override
    public String id() {
        return req.id();
    }

    @Override
    public void cancel() {
        if (!cancelled) {
            cancelled = true;
            owner.wake();
        }
    }

    @Override
    public boolean isFinished() {
        return timings != null;
    }

    @Override
    public RequestTimings timings() {
        return timings;
    }

    @Override
    public String toString() {
        return "Sequence[" + req.id() + ", length " + length + ", computed " + computed + ", generated " + generated
                + "]";
    }
}
