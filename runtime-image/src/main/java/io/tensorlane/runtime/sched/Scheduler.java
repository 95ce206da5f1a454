package io.tensorlane.runtime.sched;

import io.tensorlane.runtime.text.TopLogprobs;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The serving loop: one thread runs steps of a {@link StepExecutor} back to back while there is work, and sleeps on a
 * condition when there is none. Continuous batching with chunked prefill and preemption by recompute ({@link
 * BatchPlanner}), automatic prefix caching when {@link SchedulerConfig#prefixCaching()} ({@link PrefixCache}); the
 * executor draws every token (on the GPU); logits reach the host only for logprobs. With a {@link Speculator}, decoding
 * sequences verify proposed tokens in the same steps and keep the accepted ones ({@code verified}).
 *
 * <p>Threads: {@link #submit}, {@link Handle#cancel}, {@link #drain}, {@link #awaitIdle}, {@link #stats} and {@link
 * #close} may be called from any thread. Listeners run on the scheduler thread (see {@link SequenceListener}). The
 * block allocator belongs to the scheduler thread once the scheduler is built.
 *
 * <p>Failures: an exception from the executor ends every sequence of the failed step with {@link FinishReason#ERROR}.
 * If {@link StepExecutor#isFatal} says so (the default: a failed GPU step leaves the cache and the ranks in an unknown
 * state), the scheduler stops serving: every other sequence ends with ERROR, {@link #submit} throws
 * IllegalStateException and {@link #failure()} returns the cause (health goes unready; the pod restarts). Otherwise the
 * scheduler goes on with the other sequences and new requests.
 */
public final class Scheduler implements AutoCloseable {
    /** A submitted sequence. */
    public interface Handle {
        String id();

        /** Ends the sequence at the next step boundary (frees its KV blocks; onFinish(ABORT)). Idempotent. */
        void cancel();

        boolean isFinished();

        /** The request's timings once finished, else null. */
        RequestTimings timings();
    }

    private static final System.Logger LOG = System.getLogger(Scheduler.class.getName());

    private final StepExecutor executor;
    private final BlockAllocator blocks;
    private final SchedulerConfig config;
    private final Set<Integer> eos;
    private final EngineMetrics metrics;
    private final BatchPlanner planner;
    private final PrefixCache prefix;
    private final Speculator spec;
    private final int vocab;
    private final Thread thread;
    private final SchedulerInbox inbox;
    // Scheduler thread only.
    private final List<Sequence> running = new ArrayList<>();
    private final Deque<Sequence> waiting = new ArrayDeque<>();
    private long preemptions;
    private long steps;
    private long promptTokens;
    private long generatedTokens;
    private long audits;
    /** The step's drawn rows' logprobs ({@link RowLogprobs}), read by {@link #accept}. */
    private TopLogprobs[] stepLogprobs;

    private volatile Throwable failure;
    private volatile SchedulerStats stats;

    /**
     * Starts the scheduler thread.
     *
     * @param eosTokenIds the model's EOS ids (generation_config.json), ending sequences unless {@code ignoreEos}
     * @param metrics     where to record request metrics, or null
     */
    public Scheduler(
            StepExecutor executor,
            BlockAllocator blocks,
            SchedulerConfig config,
            Set<Integer> eosTokenIds,
            EngineMetrics metrics) {
        this(executor, blocks, config, eosTokenIds, metrics, null);
    }

    /** The same with speculative decoding by {@code spec} (null: none; see {@link Speculator}). */
    public Scheduler(
            StepExecutor executor,
            BlockAllocator blocks,
            SchedulerConfig config,
            Set<Integer> eosTokenIds,
            EngineMetrics metrics,
            Speculator spec) {
        this.spec = spec;
        this.executor = Objects.requireNonNull(executor, "executor");
        this.blocks = Objects.requireNonNull(blocks, "blocks");
        this.config = Objects.requireNonNull(config, "config");
        this.eos = Set.copyOf(eosTokenIds);
        this.metrics = metrics;
        this.vocab = executor.vocabSize();
        this.inbox = new SchedulerInbox(config);
        this.prefix = new PrefixCache(blocks, config.prefixCaching());
        this.planner = new BatchPlanner(blocks, prefix, config, s -> {
            preemptions++;
            if (metrics != null) {
                metrics.preempted();
            }
        });
        this.stats = SchedulerStats.idle(blocks.blocks());
        if (metrics != null) {
            metrics.bind(this::stats);
            metrics.bindFailure(this::failure);
        }
        this.thread = new Thread(this::loop, "tensorlane-scheduler");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Runs {@code submits} (calls of {@link #submit}) with the queue held: the sequences they queue are all planned from
     * the same step on, so an offline run's steps are the same run to run ({@code generate}: its batches do not depend on
     * how fast the prompts were queued). Steps already running finish meanwhile; the next waits for the queue.
     */
    public void together(Runnable submits) {
        inbox.holding(submits);
    }

    /**
     * Queues a sequence. Throws IllegalArgumentException when it can never run (longer than the max model length, more
     * KV than the whole cache or a block table holds, token ids outside the vocabulary), {@link QueueFullException} when
     * {@code maxWaiting} requests already wait, IllegalStateException while draining, closed or failed.
     */
    public Handle submit(SeqRequest req, SequenceListener listener) {
        return submit(req, listener, true);
    }

    /** {@link #submit}; {@code speculate} false: this sequence never speculates (the request opted out). */
    public Handle submit(SeqRequest req, SequenceListener listener, boolean speculate) {
        Objects.requireNonNull(listener, "listener");
        config.check(req, blocks, vocab);
        return inbox.submit(this::failure, () -> {
            Sequence s = new Sequence(req, listener, this, System.nanoTime(), config.prefixCacheSalt(), eos);
            s.speculate = speculate;
            return s;
        });
    }

    /** Stops admitting requests (submit throws IllegalStateException); those already in finish. */
    public void drain() {
        inbox.drain();
    }

    public boolean isDraining() {
        return inbox.isDraining();
    }

    /** Waits until no sequence is queued or running; false on timeout. */
    public boolean awaitIdle(Duration timeout) throws InterruptedException {
        return inbox.awaitIdle(timeout);
    }

    /** The executor failure that stopped serving, or null. */
    public Throwable failure() {
        return failure;
    }

    /** The latest snapshot (updated after every step). */
    public SchedulerStats stats() {
        return stats;
    }

    public SchedulerConfig config() {
        return config;
    }

    /** Stops the thread; sequences still queued or running end with ABORT. */
    @Override
    public void close() {
        inbox.close();
        if (Thread.currentThread() != thread) {
            try {
                thread.join(TimeUnit.SECONDS.toMillis(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    void wake() {
        inbox.wake();
    }

    // --- the loop (scheduler thread) --------------------------------------------------------------------------------

    private void loop() {
        int emptyPlans = 0;
        while (true) {
            if (!inbox.awaitWork(!running.isEmpty() || !waiting.isEmpty(), waiting)) {
                break;
            }
            reapCancelled();
            if (failure != null) {
                finishAll(FinishReason.ERROR);
            }
            if (running.isEmpty() && waiting.isEmpty()) {
                audit();
                publish();
                continue;
            }
            if (spec != null) {
                spec.propose(running, vocab);
            }
            BatchPlanner.Plan plan = planner.plan(running, waiting, System.nanoTime());
            updateWaitingCount();
            if (plan.isEmpty()) {
                // Transient after a sequence preempted itself; twice in a row means the head can never run.
                if (++emptyPlans > 2 && running.isEmpty() && !waiting.isEmpty()) {
                    Sequence s = waiting.pollFirst();
                    LOG.log(
                            System.Logger.Level.ERROR,
                            "cannot schedule " + s + " with " + blocks.freeBlocks() + " free KV blocks");
                    finish(s, FinishReason.ERROR);
                }
                publish();
                continue;
            }
            emptyPlans = 0;
            runStep(plan);
            audit();
            publish();
        }
        finishAll(FinishReason.ABORT);
        publish();
    }

    private void runStep(BatchPlanner.Plan plan) {
        StepResult res;
        try {
            res = executor.step(plan.batch(), plan.wantLogits());
            steps++;
        } catch (RuntimeException | Error e) {
            LOG.log(System.Logger.Level.ERROR, "step of " + plan.entries().size() + " sequences failed", e);
            boolean fatal = executor.isFatal(e);
            if (fatal) {
                failure = e;
            }
            for (BatchPlanner.Entry en : plan.entries()) {
                running.remove(en.seq());
                finish(en.seq(), FinishReason.ERROR);
            }
            if (fatal) {
                finishAll(FinishReason.ERROR);
            }
            return;
        }
        for (Sequence s : plan.admitted()) {
            admitted(s);
        }
        long now = System.nanoTime();
        stepLogprobs = RowLogprobs.of(plan.entries(), res, vocab);
        for (BatchPlanner.Entry en : plan.entries()) {
            Sequence s = en.seq();
            if (en.drafts() > 0) {
                verified(s, en, res, now);
                continue;
            }
            if (en.promptRow() >= 0) {
                PromptLogprobs.collect(s, res, en.promptRow(), en.n(), vocab);
            }
            s.computed += en.n();
            prefix.registerComputed(s); // before accept: a sequence that ends there leaves its blocks cached
            if (en.logitRow() >= 0) {
                accept(s, res, en.logitRow(), now);
            }
        }
    }

    /**
     * A verify step ran: the accepted guesses go into the tokens before the prefix cache registers blocks that cover
     * them, the KV cache keeps the last token and them (blocks past them go back), then every kept token and the
     * target's next one reach the listener in order, until one ends the sequence (EOS, stop, max_tokens).
     */
    private void verified(Sequence s, BatchPlanner.Entry en, StepResult res, long now) {
        int a = spec.keep(s, en.drafts(), res, en.logitRow(), blocks);
        prefix.registerComputed(s);
        for (int i = 0; i <= a && s.finish == null; i++) {
            accept(s, res, en.logitRow() + i, now);
        }
    }

    /** A sequence's first admission ran: the prefix-cache counters and the listener learn its cached prompt tokens. */
    private void admitted(Sequence s) {
        if (metrics != null && prefix.enabled()) {
            metrics.prefixCache(s.req.promptIds().length, s.cachedTokens);
        }
        try {
            s.listener.onAdmitted(s.cachedTokens);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "onAdmitted of " + s.req.id() + " threw", e);
        }
    }

    /** Takes logits row {@code row} as {@code s}'s next token, tells the listener, and ends the sequence if due. */
    private void accept(Sequence s, StepResult res, int row, long now) {
        SeqRequest r = s.req;
        int token = res.ids()[row];
        TopLogprobs lp = r.logprobs() > 0 && stepLogprobs != null ? stepLogprobs[row] : null;
        s.tokens[s.length++] = token;
        s.generated++;
        generatedTokens++;
        if (s.firstTokenNanos < 0) {
            s.firstTokenNanos = now;
            promptTokens += r.promptIds().length;
            if (metrics != null) {
                metrics.firstToken(r.promptIds().length, (now - s.arrivalNanos) / 1e9);
            }
        } else if (metrics != null && now != s.lastTokenNanos) { // one gap per step (tokens of one verify share it)
            metrics.interToken((now - s.lastTokenNanos) / 1e9);
        }
        s.lastTokenNanos = now;
        if (metrics != null) {
            metrics.generationTokens(1);
        }
        boolean more;
        try {
            PromptLogprobs.deliver(s);
            more = s.listener.onToken(token, lp);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "listener of " + r.id() + " threw; ending it", e);
            running.remove(s);
            finish(s, FinishReason.ERROR);
            return;
        }
        FinishReason reason = StopCheck.after(r, s.generated, token, more, eos);
        if (reason != null) {
            running.remove(s);
            finish(s, reason);
        }
    }

    private void reapCancelled() {
        List<Sequence> gone = new ArrayList<>();
        running.removeIf(s -> s.cancelled && gone.add(s));
        waiting.removeIf(s -> s.cancelled && gone.add(s));
        gone.forEach(s -> finish(s, FinishReason.ABORT));
        updateWaitingCount();
    }

    private void finishAll(FinishReason reason) {
        inbox.drainTo(waiting);
        List<Sequence> all = new ArrayList<>(running);
        all.addAll(waiting);
        running.clear();
        waiting.clear();
        for (Sequence s : all) {
            finish(s, reason);
        }
        updateWaitingCount();
    }

    /** Ends {@code s} (already out of running and waiting): frees its blocks, records, tells the listener. */
    private void finish(Sequence s, FinishReason reason) {
        if (s.finish != null) {
            return;
        }
        s.finish = reason;
        blocks.release(s.table);
        Speculator.drop(s); // its n-gram index or draft KV goes now, not when the client drops the handle
        long now = System.nanoTime();
        RequestTimings t = RequestTimings.of(s, now, reason);
        if (metrics != null) {
            metrics.finished(t);
        }
        try {
            s.listener.onFinish(reason, s.req.promptIds().length, s.generated);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "onFinish of " + s.req.id() + " threw", e);
        }
        s.timings = t;
        publish(); // before awaitIdle can return
        inbox.finished(reason, t.e2eSeconds());
    }

    /** The debug audit ({@link SchedulerConfig#blockAudit}): an inconsistent allocator stops serving. */
    private void audit() {
        if (config.blockAudit() && failure == null) {
            audits++;
            List<String> problems = BlockAudit.check(blocks, running, waiting);
            if (!problems.isEmpty()) {
                failure = new IllegalStateException(BlockAudit.describe(problems));
                LOG.log(System.Logger.Level.ERROR, failure.getMessage());
                finishAll(FinishReason.ERROR);
            }
        }
    }

    private void updateWaitingCount() {
        inbox.updateWaitingCount(waiting.size());
    }

    private void publish() {
        stats = SchedulerStats.of(
                running.size(), waiting.size(), blocks, preemptions, steps, promptTokens, generatedTokens, audits);
    }
}
