package io.tensorlane.runtime.sched;

import io.tensorlane.runtime.text.SamplingParams;
import java.util.List;

/**
 * The scheduler's side of speculative decoding (scheduler thread only). Before each step it asks the {@link Proposer}
 * for up to k next tokens of every decoding sequence that speculates ({@link #propose}; the sequence's own
 * {@link Proposer.Session}, opened at its first guess, sees its tokens so far, which only grow); the planner then feeds such a
 * sequence its last token and the guesses as one chunk of k + 1 query tokens with logits for all of them (a verify
 * step), and every row draws its token by the sequence's sampling parameters with counter {@code generated + i}, as
 * the non-speculative run would draw its i-th next token. After the step {@link #verify} keeps the leading guesses the
 * target's draws equal ({@link SpecRule#acceptWhileEqual}) and the scheduler appends them and the target's next token,
 * and rolls the KV cache back past them ({@link BlockAllocator#truncate}). A request sampling by temperature alone
 * whose proposer draws its guesses from distributions of its own (a draft model's q: {@link
 * Proposer.Session#proposeSampled}) is verified by the rejection rule instead ({@link SpecSampling}; the step then
 * returns its logits), which keeps more guesses at the same output distribution.
 *
 * <p>No guesses for: sequences that opted out, that have a token constraint (the masks of later rows would depend on
 * guesses not yet accepted) or penalties (so would their counts: {@link SamplingPenalties}), that want their prompt's
 * logprobs ({@link PromptLogprobs}: their logits rows come out of the same budget), that are one token from
 * {@code max_tokens}. Guesses are cut so that the accepted run
 * plus the target's token never passes {@code max_tokens}, and so that a step's logits rows stay within
 * {@code maxLogitRows} (the engine's buffer: what is left after one row per possible sequence).
 */
public final class Speculator {
    private final SpeculativeConfig config;
    private final Proposer proposer;
    private final int draftRowBudget;
    private final EngineMetrics metrics;
    private final int[] buf;
    private long drafts;
    private long draftTokens;
    private long accepted;
    private final long[] acceptedAt;
    /** The target's vocabulary (the rows of the rejection rule), from the scheduler's {@link #propose}. */
    private int vocab;

    private static final System.Logger LOG = System.getLogger(Speculator.class.getName());
    /** What switched speculation off: a proposer's failure ({@link #propose}); null while it is on. */
    private Throwable failure;

    /**
     * @param maxLogitRows the most logits rows the executor takes in one step
     * @param maxSeqs      the scheduler's most sequences per step (each may need a row of its own)
     * @param metrics      where to count drafts and acceptance, or null
     */
    public Speculator(
            SpeculativeConfig config, Proposer proposer, int maxLogitRows, int maxSeqs, EngineMetrics metrics) {
        this.config = java.util.Objects.requireNonNull(config, "config");
        this.proposer = java.util.Objects.requireNonNull(proposer, "proposer");
        this.draftRowBudget = Math.max(0, maxLogitRows - maxSeqs);
        this.metrics = metrics;
        this.buf = new int[config.k()];
        this.acceptedAt = new long[config.k()];
        if (metrics != null) {
            metrics.speculation(config.k());
        }
    }

    /** The speculator of {@code config} ({@link SpeculativeConfig#proposer}), or null when it is null (off). */
    public static Speculator of(SpeculativeConfig config, int maxLogitRows, int maxSeqs, EngineMetrics metrics) {
        return of(config, null, maxLogitRows, maxSeqs, metrics);
    }

    /**
     * The speculator of {@code config} guessing by {@code proposer} (a loaded draft model's; null: the config's own, the
     * n-gram proposer), or null when {@code config} is null (off).
     */
    public static Speculator of(
            SpeculativeConfig config, Proposer proposer, int maxLogitRows, int maxSeqs, EngineMetrics metrics) {
        if (config == null) {
            return null;
        }
        return new Speculator(config, proposer != null ? proposer : config.proposer(), maxLogitRows, maxSeqs, metrics);
    }

    public SpeculativeConfig config() {
        return config;
    }

    /**
     * Sets {@code s.draft} of every running sequence: its guesses (decoding and speculating), else null. A sequence
     * that will speculate but is still prefilling lets its session prepare ({@link Proposer.Session#prepare}: the
     * n-gram index takes in its prompt over the prefill steps rather than all at the first decode step).
     */
    void propose(List<Sequence> running, int vocab) {
        this.vocab = vocab;
        for (Sequence s : running) {
            s.draft = null;
            s.draftQ = null;
        }
        if (failure != null) {
            return;
        }
        int rows = draftRowBudget;
        boolean guessing = config.batch() == 0 || decoding(running) <= config.batch();
        try {
            for (Sequence s : running) {
                rows -= guess(s, rows, guessing);
            }
        } catch (RuntimeException e) {
            // a draft model's failed step: no guesses from here on. The target goes on without them; when the failure
            // left the GPU unusable (a sticky CUDA error in the context both share), its next step fails and serving
            // stops the usual way.
            failure = e;
            for (Sequence s : running) {
                s.draft = null;
                s.draftQ = null;
            }
            LOG.log(System.Logger.Level.ERROR, "the proposer failed: speculation is off from here", e);
        }
    }

    /** The failure that switched speculation off ({@link #propose}), or null. */
    public Throwable failure() {
        return failure;
    }

    /** Whether {@code s} may take guesses (not whether it is decoding). */
    private static boolean eligible(Sequence s) {
        return s.speculate
                && s.req.constraint() == null
                && s.req.penalties().isNone()
                && s.req.maxTokens() - s.generated - 1 > 0
                && s.promptLogprobs == null;
    }

    /** The decoding sequences of {@code running} that may take guesses ({@link SpeculativeConfig#batch} counts them). */
    private static int decoding(List<Sequence> running) {
        int n = 0;
        for (Sequence s : running) {
            n += s.need() == 1 && eligible(s) ? 1 : 0;
        }
        return n;
    }

    /**
     * Sets {@code s.draft} (and {@code s.draftQ}) of one running sequence within {@code rows} rows; the rows used. Without
     * {@code guessing} (too many decoding sequences) a prefilling one still prepares.
     */
    private int guess(Sequence s, int rows, boolean guessing) {
        int left = s.req.maxTokens() - s.generated - 1;
        if (!eligible(s) || (!guessing && s.need() == 1)) {
            return 0;
        }
        if (s.proposer == null) {
            s.proposer = proposer.open(s.tokens.length);
        }
        if (s.need() != 1) {
            s.proposer.prepare(s.tokens, s.length);
            return 0;
        }
        int room = Math.min(Math.min(config.k(), left), rows);
        if (room <= 0) {
            return 0;
        }
        SamplingParams p = s.req.sampling();
        double[] q = null;
        int n = -1;
        if (SpecSampling.applies(p)) { // guesses from the draft's own q, where the proposer has it
            q = new double[room * vocab];
            n = s.proposer.proposeSampled(
                    s.tokens,
                    s.length,
                    room,
                    buf,
                    p.temperature(),
                    SpecSampling.rng(p.seed(), s.generated, 1),
                    q,
                    vocab);
        }
        if (n < 0) {
            q = null;
            n = s.proposer.propose(s.tokens, s.length, room, buf);
        }
        if (n <= 0) {
            return 0;
        }
        s.draft = java.util.Arrays.copyOf(buf, n);
        s.draftQ = q;
        return n;
    }

    /**
     * After a verify step of {@code n} guesses of {@code s}, whose k + 1 rows start at {@code row}: how many
     * leading guesses the target's tokens equal. Counts the draft and its acceptance.
     */
    int verify(Sequence s, int n, StepResult res, int row) {
        int a;
        if (s.draftQ != null && res.logits() != null) {
            // the rejection rule; its verdict replaces the rows' draws: the kept guesses, then the token after them
            SpecRule.Verdict v =
                    SpecSampling.verify(res.logits(), row, vocab, s.draft, n, s.draftQ, s.req.sampling(), s.generated);
            a = v.accepted();
            System.arraycopy(s.draft, 0, res.ids(), row, a);
            res.ids()[row + a] = v.next();
        } else { // equal draws: exact for any guess, the emitted token being always the target's own draw
            a = SpecRule.acceptWhileEqual(s.draft, n, res.ids(), row);
        }
        drafts++;
        draftTokens += n;
        accepted += a;
        for (int i = 0; i < a; i++) {
            acceptedAt[i]++;
        }
        if (metrics != null) {
            metrics.speculated(n, a);
        }
        return a;
    }

    /**
     * {@link #verify}, then the accepted guesses written after the sequence's tokens (not yet counted in its length: the
     * scheduler appends them one by one) and counted as computed with the last token, and the KV blocks past them given
     * back. Returns how many guesses were accepted.
     */
    int keep(Sequence s, int n, StepResult res, int row, BlockAllocator blocks) {
        int a = verify(s, n, res, row);
        System.arraycopy(s.draft, 0, s.tokens, s.length, a);
        s.computed += 1 + a;
        blocks.truncate(s.table, s.computed);
        return a;
    }

    /**
     * {@code s} ended or was preempted: its proposer session is closed ({@link Proposer.Session#close}: a draft model's
     * KV blocks go back) and dropped; a preempted sequence opens a new one, which feeds its tokens again.
     */
    static void drop(Sequence s) {
        if (s.proposer != null) {
            s.proposer.close();
            s.proposer = null;
        }
    }

    /** Drafts verified, guesses verified, guesses accepted, and accepted per position (tests, logs). */
    public record Counts(long drafts, long draftTokens, long accepted, long[] acceptedAt) {}

    public Counts counts() {
        return new Counts(drafts, draftTokens, accepted, acceptedAt.clone());
    }
}
