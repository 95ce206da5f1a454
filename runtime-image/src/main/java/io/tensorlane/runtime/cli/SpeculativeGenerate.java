package io.tensorlane.runtime.cli;

import io.tensorlane.runtime.llm.Generator;
import io.tensorlane.runtime.llm.LlmEngine;
import io.tensorlane.runtime.sched.FinishReason;
import io.tensorlane.runtime.sched.Scheduler;
import io.tensorlane.runtime.sched.SchedulerConfig;
import io.tensorlane.runtime.sched.SeqRequest;
import io.tensorlane.runtime.sched.SequenceListener;
import io.tensorlane.runtime.sched.SpeculativeConfig;
import io.tensorlane.runtime.sched.Speculator;
import io.tensorlane.runtime.text.TopLogprobs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code generate --speculative} (and {@code --scheduler}, the same without speculation): the prompts through the serving
 * {@link Scheduler} with a {@link Speculator} when {@code sc} is not null (the offline {@link Generator} has no verify
 * steps), prefix caching off, every prompt queued before the scheduler's first step (its steps do not depend on how fast
 * they were queued: chain on and off, or two runs, step alike). The results
 * have the Generator's shape (no prompt logits); the counts say how many steps ran and what the guesses did.
 */
final class SpeculativeGenerate {
    /**
     * What a run did: scheduler steps, generated tokens, seconds, the speculator's counts (null without speculation),
     * and the steady rate: the tokens of the requests that finished after the first one over the time from the first
     * finish to the last (NaN with fewer than two requests). With {@code --max-seqs 1} the requests run one after the
     * other, so that is batch-1 end-to-end tokens/s (prefill included) past the first request's warm-up (the JVM's
     * compilation, the first CUDA graph captures).
     */
    record Stats(long steps, long tokens, double seconds, Speculator.Counts counts, double steadyTokensPerSecond) {}

    private Stats stats;

    Stats stats() {
        return stats;
    }

    /** Runs {@code reqs}; {@code proposer}: a draft model's ({@code DraftModel}), null for the config's own (n-gram). */
    List<Generator.Result> run(
            LlmEngine engine,
            SpeculativeConfig sc,
            io.tensorlane.runtime.sched.Proposer proposer,
            List<Generator.Request> reqs,
            List<Integer> eos)
            throws InterruptedException, java.util.concurrent.ExecutionException,
                    java.util.concurrent.TimeoutException {
        var o = engine.options();
        SchedulerConfig config = new SchedulerConfig(
                        o.maxSeqs(), o.maxBatchTokens(), reqs.size(), engine.maxModelLen(), engine.maxBlocksPerSeq())
                .withPrefixCaching(false, "generate");
        Speculator spec = Speculator.of(sc, proposer, o.maxLogitRows(), o.maxSeqs(), null);
        List<Collect> cs = new ArrayList<>();
        long t0 = System.nanoTime();
        Scheduler s = new Scheduler(engine, engine.blocks(), config, new HashSet<>(eos), null, spec);
        try {
            // every prompt queued before the next step plans: the steps are the same run to run
            s.together(() -> {
                for (int i = 0; i < reqs.size(); i++) {
                    Generator.Request r = reqs.get(i);
                    Collect c = new Collect();
                    cs.add(c);
                    s.submit(
                            new SeqRequest(
                                    Integer.toString(i),
                                    r.promptIds(),
                                    r.maxTokens(),
                                    r.sampling(),
                                    Set.of(),
                                    r.ignoreEos(),
                                    r.logprobs()),
                            c);
                }
            });
            List<Generator.Result> out = new ArrayList<>();
            for (int i = 0; i < reqs.size(); i++) {
                Collect c = cs.get(i);
                FinishReason why = c.done.get(1, TimeUnit.HOURS);
                if (why == FinishReason.ERROR || why == FinishReason.ABORT) {
                    Throwable f = s.failure();
                    throw new IllegalStateException("prompt " + i + " ended with " + why, f);
                }
                out.add(new Generator.Result(
                        reqs.get(i).promptIds(),
                        c.tokens.stream().mapToInt(Integer::intValue).toArray(),
                        why.label(),
                        c.logprobs,
                        null));
            }
            s.awaitIdle(Duration.ofSeconds(10));
            stats = new Stats(
                    s.stats().steps(),
                    s.stats().generatedTokens(),
                    (System.nanoTime() - t0) / 1e9,
                    spec == null ? null : spec.counts(),
                    steady(cs));
            return out;
        } finally {
            s.close();
        }
    }

    /** {@link Stats#steadyTokensPerSecond} of the finished collectors. */
    static double steady(List<Collect> cs) {
        if (cs.size() < 2) {
            return Double.NaN;
        }
        List<Collect> byEnd = new ArrayList<>(cs);
        byEnd.sort(java.util.Comparator.comparingLong(c -> c.finishNanos));
        long tokens = 0;
        for (Collect c : byEnd.subList(1, byEnd.size())) {
            tokens += c.tokens.size();
        }
        double seconds = (byEnd.get(byEnd.size() - 1).finishNanos - byEnd.get(0).finishNanos) / 1e9;
        return seconds > 0 ? tokens / seconds : Double.NaN;
    }

    static final class Collect implements SequenceListener {
        volatile long finishNanos;
        final List<Integer> tokens = new ArrayList<>();
        final List<TopLogprobs> logprobs = new ArrayList<>();
        final CompletableFuture<FinishReason> done = new CompletableFuture<>();

        @Override
        public boolean onToken(int token, TopLogprobs lp) {
            tokens.add(token);
            if (lp != null) {
                logprobs.add(lp);
            }
            return true;
        }

        @Override
        public void onFinish(FinishReason reason, int prompt, int completion) {
            finishNanos = System.nanoTime();
            done.complete(reason);
        }
    }
}
