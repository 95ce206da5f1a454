package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The debug switch {@link SchedulerConfig#blockAudit()}: with it on, an allocator corrupted under the scheduler (here a
 * reference taken behind its back on the scheduler thread, as a bug in the bookkeeping would) stops serving after the
 * step that did it, with the audit's message as the failure; with it off the same run goes on and the leak shows only in
 * the free-block count.
 */
@Timeout(30)
class BlockAuditSchedulerTest extends SchedulerFixture {
    private final AtomicInteger stepsSeen = new AtomicInteger();

    @Override
    StepExecutor wrap(FakeExecutor fake) {
        return new StepExecutor() {
            @Override
            public StepResult step(StepBatch b, boolean wantLogits) {
                if (stepsSeen.incrementAndGet() == 3) {
                    blocks.take(leakable()); // a reference no table holds
                }
                return fake.step(b, wantLogits);
            }

            @Override
            public int vocabSize() {
                return fake.vocabSize();
            }
        };
    }

    /** A registered block (the prompt's first block is cached by the third step). */
    private int leakable() {
        for (int b = 0; b < blocks.blocks(); b++) {
            if (blocks.isCached(b)) {
                return b;
            }
        }
        throw new AssertionError("no cached block to leak");
    }

    @ParameterizedTest(name = "audit {0}")
    @ValueSource(booleans = {true, false})
    void aCorruptedAllocatorStopsServingOnlyWithTheAuditOn(boolean on) throws Exception {
        audit = on;
        Scheduler s = start(4, 8, 100, 32, null, true);
        Collector c = new Collector();
        s.submit(req("a", prompt(12, 1), 6), c); // steps: prompt chunk of 8, chunk of 4, then decodes
        FinishReason r = c.await();
        if (on) {
            assertThat(r).isEqualTo(FinishReason.ERROR);
            assertThat(s.failure())
                    .hasMessageContaining("KV block audit failed: block ")
                    .hasMessageContaining("has 2 references, 1 tables hold it");
            assertThat(stepsSeen.get())
                    .as("stopped right after the corrupting step")
                    .isEqualTo(3);
        } else {
            assertThat(r).isEqualTo(FinishReason.LENGTH);
            assertThat(s.awaitIdle(Duration.ofSeconds(5))).isTrue();
            assertThat(s.failure()).isNull();
            assertThat(s.stats().freeBlocks()).as("the leak").isEqualTo(31);
            assertThat(s.stats().audits()).isZero();
        }
    }
}
