package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Around the steps: cancel, a full queue, drain, failures, throwing listeners, rejected requests, close. */
@Timeout(30)
class SchedulerLifecycleTest extends SchedulerFixture {
    @Test
    void cancelFreesTheBlocksAndEndsWithAbort() throws Exception {
        Scheduler s = start(4, 64, 32);
        exec.gated = true;
        Collector run = new Collector();
        Collector queued = new Collector();
        Scheduler.Handle h = s.submit(req("run", prompt(9, 1), 100), run);
        exec.allow(3);
        waitFor(() -> run.tokens.size() == 3);
        h.cancel();
        h.cancel();
        exec.allow(100);
        assertThat(run.await()).isEqualTo(FinishReason.ABORT);
        assertThat(run.finishCalls).isEqualTo(1);
        assertThat(run.completionTokens).isBetween(3, 4);
        assertThat(s.awaitIdle(Duration.ofSeconds(5))).isTrue();
        assertThat(blocks.freeBlocks()).isEqualTo(32);
        assertThat(h.isFinished()).isTrue();
        assertThat(h.timings().reason()).isEqualTo(FinishReason.ABORT);
        // A cancelled request that never ran.
        exec.gated = true;
        Scheduler.Handle h2 = s.submit(req("q", prompt(4, 2), 5), queued);
        h2.cancel();
        exec.allow(100);
        assertThat(queued.await()).isIn(FinishReason.ABORT, FinishReason.LENGTH);
    }

    @Test
    void promptsQueuedTogetherArePlannedInOneStep() throws Exception {
        Scheduler s = start(4, 64, 64);
        List<Collector> cs = new ArrayList<>();
        s.together(() -> {
            for (int i = 0; i < 3; i++) {
                cs.add(new Collector());
                s.submit(req("p" + i, prompt(5 + i, i), 4), cs.get(i));
                if (i == 0) {
                    sleep(200); // unheld, the scheduler would step the first prompt alone meanwhile
                }
            }
        });
        for (Collector c : cs) {
            assertThat(c.await()).isEqualTo(FinishReason.LENGTH);
        }
        assertThat(exec.batches.get(0).rows()).isEqualTo(3); // the three prompts' prefill together
        assertThat(exec.batches.get(0).tokens()).isEqualTo(5 + 6 + 7);
        // a later submit still runs (the queue is released)
        Collector late = new Collector();
        s.submit(req("late", prompt(4, 9), 2), late);
        assertThat(late.await()).isEqualTo(FinishReason.LENGTH);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void aFullQueueRejectsWithARetryHint() throws Exception {
        Scheduler s = start(1, 64, 2, 32, null);
        exec.gated = true;
        List<Collector> cs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            cs.add(new Collector());
        }
        s.submit(req("a", prompt(4, 1), 3), cs.get(0));
        waitFor(() -> exec.entered.get() == 1); // a is running
        s.submit(req("b", prompt(4, 2), 3), cs.get(1));
        s.submit(req("c", prompt(4, 3), 3), cs.get(2));
        assertThatThrownBy(() -> s.submit(req("d", prompt(4, 4), 3), new Collector()))
                .isInstanceOf(QueueFullException.class)
                .satisfies(e ->
                        assertThat(((QueueFullException) e).retryAfterSeconds()).isBetween(1, 60));
        exec.allow(100);
        for (Collector c : cs) {
            assertThat(c.await()).isEqualTo(FinishReason.LENGTH);
        }
    }

    @Test
    void drainFinishesTheWorkAndRejectsNewRequests() throws Exception {
        Scheduler s = start(1, 64, 32);
        exec.gated = true;
        Collector a = new Collector();
        Collector b = new Collector();
        s.submit(req("a", prompt(4, 1), 5), a);
        s.submit(req("b", prompt(4, 2), 5), b);
        s.drain();
        assertThat(s.isDraining()).isTrue();
        assertThatThrownBy(() -> s.submit(req("c", prompt(4, 3), 5), new Collector()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("draining");
        assertThat(s.awaitIdle(Duration.ofMillis(50))).isFalse();
        exec.allow(100);
        assertThat(s.awaitIdle(Duration.ofSeconds(10))).isTrue();
        assertThat(a.await()).isEqualTo(FinishReason.LENGTH);
        assertThat(b.await()).isEqualTo(FinishReason.LENGTH);
        assertThat(s.stats().running()).isZero();
    }

    @Test
    void aFatalStepFailureEndsEverySequenceWithErrorAndStopsServing() throws Exception {
        Scheduler s = start(1, 64, 32);
        exec.failOnStep = i -> i == 2;
        exec.gated = true;
        Collector a = new Collector();
        Collector b = new Collector();
        s.submit(req("a", prompt(4, 1), 10), a);
        s.submit(req("b", prompt(4, 2), 10), b); // waits: maxSeqs 1
        exec.allow(100);
        assertThat(a.await()).isEqualTo(FinishReason.ERROR);
        assertThat(b.await()).isEqualTo(FinishReason.ERROR);
        assertThat(a.completionTokens).isEqualTo(2);
        assertThat(s.failure()).hasMessageContaining("injected");
        assertThatThrownBy(() -> s.submit(req("c", prompt(4, 3), 5), new Collector()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("failed");
        assertThat(s.awaitIdle(Duration.ofSeconds(5))).isTrue();
        assertThat(blocks.freeBlocks()).isEqualTo(32);
    }

    @Test
    void aNonFatalStepFailureEndsOnlyThatStepsSequences() throws Exception {
        Scheduler s = start(1, 64, 32);
        exec.fatal = false;
        exec.failOnStep = i -> i == 2;
        Collector a = new Collector();
        Collector b = new Collector();
        s.submit(req("a", prompt(4, 1), 10), a);
        s.submit(req("b", prompt(4, 2), 4), b);
        assertThat(a.await()).isEqualTo(FinishReason.ERROR);
        assertThat(b.await()).isEqualTo(FinishReason.LENGTH);
        assertThat(b.ids()).containsExactly(FakeExecutor.reference(prompt(4, 2), 4, VOCAB));
        assertThat(s.failure()).isNull();
        Collector c = new Collector();
        s.submit(req("c", prompt(4, 3), 3), c);
        assertThat(c.await()).isEqualTo(FinishReason.LENGTH);
    }

    @Test
    void aThrowingListenerEndsOnlyItsSequence() throws Exception {
        Scheduler s = start(4, 64, 32);
        Collector ok = new Collector();
        SequenceListener bad = new SequenceListener() {
            @Override
            public boolean onToken(int token, io.tensorlane.runtime.text.TopLogprobs lp) {
                throw new IllegalStateException("boom");
            }

            @Override
            public void onFinish(FinishReason reason, int p, int c) {}
        };
        Scheduler.Handle h = s.submit(req("bad", prompt(4, 1), 5), bad);
        s.submit(req("ok", prompt(4, 2), 5), ok);
        assertThat(ok.await()).isEqualTo(FinishReason.LENGTH);
        waitFor(h::isFinished);
        assertThat(h.timings().reason()).isEqualTo(FinishReason.ERROR);
    }

    @Test
    void requestsThatCanNeverRunAreRejectedAtSubmit() {
        Scheduler s = start(4, 64, 10, 8, null); // 8 blocks x 4 = 32 tokens
        assertThatThrownBy(() -> s.submit(req("long", prompt(200, 1), 100), new Collector()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("max model length");
        assertThatThrownBy(() -> s.submit(req("big", prompt(20, 1), 20), new Collector()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("KV blocks");
        assertThatThrownBy(() -> s.submit(req("vocab", new int[] {1, VOCAB}, 2), new Collector()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("vocabulary");
        assertThatThrownBy(() -> req("empty", new int[0], 2)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void closeAbortsWhatIsLeftAndRejectsNewRequests() throws Exception {
        Scheduler s = start(1, 64, 32);
        exec.gated = true;
        Collector a = new Collector();
        s.submit(req("a", prompt(4, 1), 5), a);
        exec.allow(1);
        waitFor(() -> a.tokens.size() == 1);
        Thread closer = new Thread(s::close);
        closer.start();
        exec.allow(100);
        closer.join(10_000);
        assertThat(a.await()).isIn(FinishReason.ABORT, FinishReason.LENGTH);
        assertThatThrownBy(() -> s.submit(req("b", prompt(4, 2), 5), new Collector()))
                .isInstanceOf(IllegalStateException.class);
    }
}
