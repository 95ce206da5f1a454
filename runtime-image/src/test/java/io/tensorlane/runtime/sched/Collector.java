package io.tensorlane.runtime.sched;

import io.tensorlane.runtime.text.TopLogprobs;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** A listener that records what it gets; {@code stopAfter} tokens it returns false. */
class Collector implements SequenceListener {
    final List<Integer> tokens = new CopyOnWriteArrayList<>();
    final List<TopLogprobs> logprobs = new CopyOnWriteArrayList<>();
    final CompletableFuture<FinishReason> done = new CompletableFuture<>();
    volatile int promptTokens = -1;
    volatile int completionTokens = -1;
    volatile int finishCalls;
    volatile int cachedTokens = -1;
    volatile int admittedCalls;
    private final int stopAfter;

    Collector() {
        this(Integer.MAX_VALUE);
    }

    Collector(int stopAfter) {
        this.stopAfter = stopAfter;
    }

    @Override
    public void onAdmitted(int cached) {
        admittedCalls++;
        cachedTokens = cached;
    }

    @Override
    public boolean onToken(int token, TopLogprobs lp) {
        tokens.add(token);
        logprobs.add(lp);
        return tokens.size() < stopAfter;
    }

    @Override
    public void onFinish(FinishReason reason, int prompt, int completion) {
        finishCalls++;
        promptTokens = prompt;
        completionTokens = completion;
        done.complete(reason);
    }

    FinishReason await() throws Exception {
        return done.get(10, TimeUnit.SECONDS);
    }

    int[] ids() {
        return tokens.stream().mapToInt(Integer::intValue).toArray();
    }
}
