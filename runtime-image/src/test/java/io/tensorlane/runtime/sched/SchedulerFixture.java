package io.tensorlane.runtime.sched;

import io.tensorlane.runtime.text.SamplingParams;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;

/** What the scheduler tests share: a scheduler over a {@link FakeExecutor} (closed after each test), prompts, requests. */
abstract class SchedulerFixture {
    static final int VOCAB = 97;
    static final int EOS = 96;
    static final int BS = 4;

    final List<Scheduler> open = new ArrayList<>();
    FakeExecutor exec;
    BlockAllocator blocks;
    /** Schedulers started after this is set audit the allocator after every step ({@link BlockAudit}). */
    boolean audit;

    Scheduler start(int maxSeqs, int maxBatchTokens, int maxWaiting, int kvBlocks, EngineMetrics metrics) {
        return start(maxSeqs, maxBatchTokens, maxWaiting, kvBlocks, metrics, true);
    }

    /** A scheduler with prefix caching on or off; {@link #wrap} may put a checking executor around the fake. */
    Scheduler start(
            int maxSeqs, int maxBatchTokens, int maxWaiting, int kvBlocks, EngineMetrics metrics, boolean caching) {
        exec = new FakeExecutor(VOCAB, kvBlocks, BS);
        blocks = new BlockAllocator(kvBlocks, BS);
        SchedulerConfig config = new SchedulerConfig(maxSeqs, maxBatchTokens, maxWaiting, 256, 64)
                .withPrefixCaching(caching, "fixture")
                .withBlockAudit(audit);
        Scheduler s = new Scheduler(wrap(exec), blocks, config, Set.of(EOS), metrics);
        open.add(s);
        return s;
    }

    /** The executor the scheduler drives: the fake itself unless a test checks every step. */
    StepExecutor wrap(FakeExecutor fake) {
        return fake;
    }

    Scheduler start(int maxSeqs, int maxBatchTokens, int kvBlocks) {
        return start(maxSeqs, maxBatchTokens, 100, kvBlocks, null);
    }

    @AfterEach
    void closeAll() {
        open.forEach(Scheduler::close);
    }

    static int[] prompt(int n, int salt) {
        return IntStream.range(0, n)
                .map(i -> (i * 13 + salt * 7 + 1) % (VOCAB - 1))
                .toArray();
    }

    static SeqRequest req(String id, int[] prompt, int max) {
        return new SeqRequest(id, prompt, max, SamplingParams.greedy(), Set.of(), true, 0);
    }

    static void waitFor(BooleanSupplier c) throws InterruptedException {
        long end = System.nanoTime() + 10_000_000_000L;
        while (!c.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("condition not reached");
            }
            Thread.sleep(1);
        }
    }
}
