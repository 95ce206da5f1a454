package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The scheduler under memory pressure with many requests sharing a few prefixes (some identical, as {@code n > 1};
 * some cut short by their listener or cancelled), checked at every step and at the end:
 *
 * <ul>
 *   <li>every step: a block a row reads is held by at least as many tables as rows read it; a slot written belongs to a
 *       block only its own row holds, held once and not cached (shared blocks are only read);
 *   <li>every sequence reads exactly its own tokens: the fake's next token hashes everything read back through the
 *       block table (positions checked slot by slot), so each greedy output must equal the cache-less reference;
 *   <li>at the end nothing leaks: every block is free, no reference is left.
 * </ul>
 */
@Timeout(60)
class PrefixCacheRandomTest extends SchedulerFixture {
    private final AtomicReference<AssertionError> stepCheck = new AtomicReference<>();

    @Override
    StepExecutor wrap(FakeExecutor fake) {
        return new StepExecutor() {
            @Override
            public StepResult step(StepBatch b, boolean wantLogits) {
                try {
                    check(b);
                } catch (AssertionError e) {
                    stepCheck.compareAndSet(null, e);
                    throw e;
                }
                return fake.step(b, wantLogits);
            }

            @Override
            public int vocabSize() {
                return fake.vocabSize();
            }
        };
    }

    /** On the scheduler thread, so reading the allocator is safe. */
    private void check(StepBatch b) {
        Map<Integer, Integer> readers = new HashMap<>();
        for (int r = 0; r < b.rows(); r++) {
            int rowTokens = 0;
            int maxPos = -1;
            for (int t = 0; t < b.tokens(); t++) {
                if (b.tokenRow()[t] == r) {
                    rowTokens++;
                    maxPos = Math.max(maxPos, b.positions()[t]);
                }
            }
            assertThat(rowTokens).isPositive();
            for (int i = 0; i <= maxPos / BS; i++) {
                readers.merge(b.blockTables()[r * b.maxBlocksPerSeq() + i], 1, Integer::sum);
            }
        }
        readers.forEach((block, n) -> assertThat(blocks.refCount(block))
                .as("block %d read by %d rows", block, n)
                .isGreaterThanOrEqualTo(n));
        for (int t = 0; t < b.tokens(); t++) {
            int block = b.slots()[t] / BS;
            assertThat(b.blockTables()[b.tokenRow()[t] * b.maxBlocksPerSeq() + b.positions()[t] / BS])
                    .isEqualTo(block);
            assertThat(blocks.refCount(block))
                    .as("written block %d is private", block)
                    .isEqualTo(1);
            assertThat(readers.get(block)).isEqualTo(1);
            assertThat(blocks.isCached(block))
                    .as("written block %d is not cached", block)
                    .isFalse();
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4})
    void manySharedPrefixesUnderPressureStayCorrectAndLeakNothing(long seed) throws Exception {
        Random rnd = new Random(seed);
        EngineMetrics m = new EngineMetrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), "m", BS, 28);
        audit = seed % 2 == 1; // the allocator's self-audit after every step finds nothing wrong in a correct run
        Scheduler s = start(6, 16, 1000, 28, m, true);
        List<int[]> systems = List.of(prompt(9, 1), prompt(17, 2), prompt(5, 3), prompt(22, 4));
        exec.gated = true;
        record Req(int[] prompt, int max, Collector c, boolean cancel) {}
        List<Req> reqs = new ArrayList<>();
        List<Scheduler.Handle> cancels = new ArrayList<>();
        for (int i = 0; i < 160; i++) {
            int[] sys = systems.get(rnd.nextInt(systems.size()));
            int[] tail = IntStream.range(0, rnd.nextInt(14))
                    .map(x -> rnd.nextInt(VOCAB - 1))
                    .toArray();
            int[] p = IntStream.concat(Arrays.stream(sys), Arrays.stream(tail)).toArray();
            int max = 1 + rnd.nextInt(12);
            int copies = rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(3) : 1; // n > 1
            for (int k = 0; k < copies; k++) {
                boolean cancel = rnd.nextInt(10) == 0;
                Collector c = new Collector(rnd.nextInt(6) == 0 ? 1 + rnd.nextInt(max) : Integer.MAX_VALUE);
                Scheduler.Handle h = s.submit(req("r" + i + "." + k, p, max), c);
                reqs.add(new Req(p, max, c, cancel));
                if (cancel) {
                    cancels.add(h);
                }
            }
            if (i % 20 == 19) {
                exec.allow(15 + rnd.nextInt(20));
                Thread.sleep(rnd.nextInt(3));
                cancels.forEach(Scheduler.Handle::cancel);
                cancels.clear();
            }
        }
        exec.allow(1_000_000);
        cancels.forEach(Scheduler.Handle::cancel);
        int finished = 0;
        for (Req r : reqs) {
            FinishReason why = r.c().await();
            assertThat(why).isNotEqualTo(FinishReason.ERROR);
            int[] want = FakeExecutor.reference(r.prompt(), r.max(), VOCAB);
            int[] got = r.c().ids();
            assertThat(got).containsExactly(Arrays.copyOf(want, got.length));
            if (!r.cancel()) {
                assertThat(why).isIn(FinishReason.LENGTH, FinishReason.STOP);
                finished++;
            }
        }
        assertThat(stepCheck.get()).isNull();
        assertThat(s.awaitIdle(Duration.ofSeconds(10))).isTrue();
        assertThat(s.failure()).isNull();
        assertThat(blocks.freeBlocks()).as("no leak").isEqualTo(blocks.blocks());
        for (int b = 0; b < blocks.blocks(); b++) {
            assertThat(blocks.refCount(b)).isZero();
        }
        // the run did exercise what it checks: hits, evictions, preemptions
        assertThat(finished).isGreaterThan(100);
        assertThat(m.render()).doesNotContain("tensorlane:prefix_cache_hits_total{model_name=\"m\",engine=\"0\"} 0.0");
        assertThat(blocks.evictions()).isPositive();
        assertThat(s.stats().preemptions()).isPositive();
        // the block gauges say the same: everything free when idle, some blocks still cached
        String text = m.render();
        String l = "{model_name=\"m\",engine=\"0\"} ";
        assertThat(text).contains("tensorlane:kv_cache_free_blocks" + l + "28.0");
        assertThat(text).contains("tensorlane:kv_cache_in_use_blocks" + l + "0.0");
        assertThat(text).contains("tensorlane:kv_cache_cached_blocks" + l + blocks.cachedBlocks() + ".0");
        assertThat(text).contains("tensorlane:prefix_cache_evictions_total" + l + blocks.evictions() + ".0");
        assertThat(s.stats().cachedBlocks()).isPositive();
        if (audit) {
            // the idle loop may audit once more between two reads: the rendered count lies between them
            long before = s.stats().audits();
            String rendered = m.render();
            long after = s.stats().audits();
            assertThat(before).as("audits run").isGreaterThan(100);
            java.util.regex.Matcher count = java.util.regex.Pattern.compile(
                            java.util.regex.Pattern.quote("tensorlane:kv_cache_audits_total" + l) + "(\\d+)\\.0")
                    .matcher(rendered);
            assertThat(count.find()).as("kv_cache_audits_total rendered").isTrue();
            assertThat(Long.parseLong(count.group(1))).isBetween(before, after);
        } else {
            assertThat(s.stats().audits()).isZero();
            assertThat(text).doesNotContain("kv_cache_audits_total");
        }
    }
}
