package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Admission with cached prefixes: the fake executor's KV cache holds what earlier steps wrote, so a sequence that takes a
 * cached block reads the tokens another sequence computed; the steps' token counts show what was computed.
 */
@Timeout(30)
class PrefixSchedulerTest extends SchedulerFixture {
    /** Tokens fed in the steps from {@code from} on. */
    int fed(int from) {
        return exec.batches.subList(from, exec.batches.size()).stream()
                .mapToInt(StepBatch::tokens)
                .sum();
    }

    FinishReason run(Scheduler s, String id, int[] prompt, int max, Collector c) throws Exception {
        s.submit(req(id, prompt, max), c);
        FinishReason r = c.await();
        assertThat(s.awaitIdle(Duration.ofSeconds(5))).isTrue();
        return r;
    }

    static Stream<Arguments> repeats() {
        return Stream.of(
                Arguments.of(14, true, 12),
                Arguments.of(16, true, 12), // a whole last block is recomputed: it holds the token that samples
                Arguments.of(17, true, 16),
                Arguments.of(5, true, 4),
                Arguments.of(4, true, 0),
                Arguments.of(3, true, 0),
                Arguments.of(14, false, 0),
                Arguments.of(17, false, 0));
    }

    @ParameterizedTest(name = "prompt {0}, caching {1}: {2} cached")
    @MethodSource("repeats")
    void aRepeatedPromptComputesOnlyWhatIsNotCached(int len, boolean caching, int cached) throws Exception {
        Scheduler s = start(4, 64, 100, 32, null, caching);
        int[] p = prompt(len, 5);
        Collector a = new Collector();
        run(s, "a", p, 3, a);
        assertThat(a.cachedTokens).isZero();
        int before = exec.batches.size();
        Collector b = new Collector();
        run(s, "b", p, 3, b);
        assertThat(b.cachedTokens).isEqualTo(cached);
        assertThat(b.admittedCalls).isEqualTo(1);
        StepBatch first = exec.batches.get(before);
        assertThat(first.tokens()).isEqualTo(len - cached);
        assertThat(first.positions()[0]).isEqualTo(cached);
        assertThat(first.tokenIds()).containsExactly(Arrays.copyOfRange(p, cached, len));
        assertThat(fed(before)).isEqualTo(len - cached + 2);
        assertThat(b.ids()).containsExactly(FakeExecutor.reference(p, 3, VOCAB));
        assertThat(blocks.freeBlocks()).isEqualTo(32);
        assertThat(blocks.cachedBlocks()).isEqualTo(caching ? (len + 2) / BS : 0);
    }

    @Test
    void theNextTurnOfAConversationReusesThePromptAndTheGeneratedTokens() throws Exception {
        Scheduler s = start(4, 64, 32);
        int[] p = prompt(10, 1);
        Collector a = new Collector();
        run(s, "turn1", p, 8, a);
        // the first turn computed its 10 prompt tokens and 7 of its 8 answers: 4 full blocks (16 tokens)
        int[] turn2 = IntStream.concat(
                        IntStream.concat(Arrays.stream(p), a.tokens.stream().mapToInt(Integer::intValue)),
                        Arrays.stream(prompt(3, 2)))
                .toArray();
        Collector b = new Collector();
        int before = exec.batches.size();
        run(s, "turn2", turn2, 4, b);
        assertThat(b.cachedTokens).isEqualTo(16);
        assertThat(exec.batches.get(before).tokens()).isEqualTo(turn2.length - 16);
        assertThat(b.ids()).containsExactly(FakeExecutor.reference(turn2, 4, VOCAB));
    }

    @Test
    void aCachedPrefixIsFollowedByChunksOfTheRestAtTheRightPositions() throws Exception {
        Scheduler s = start(2, 8, 32);
        int[] p = prompt(30, 3);
        run(s, "short", Arrays.copyOf(p, 12), 2, new Collector());
        int before = exec.batches.size();
        Collector c = new Collector();
        run(s, "long", p, 2, c);
        assertThat(c.cachedTokens).isEqualTo(12);
        int pos = 12;
        for (int chunk : new int[] {8, 8, 2}) {
            StepBatch b = exec.batches.get(before++);
            assertThat(b.tokens()).isEqualTo(chunk);
            for (int t = 0; t < chunk; t++) {
                assertThat(b.positions()[t]).isEqualTo(pos + t);
                assertThat(b.tokenIds()[t]).isEqualTo(p[pos + t]);
                assertThat(b.slots()[t]).isEqualTo(b.blockTables()[(pos + t) / BS] * BS + (pos + t) % BS);
            }
            pos += chunk;
        }
        assertThat(c.ids()).containsExactly(FakeExecutor.reference(p, 2, VOCAB));
    }

    @ParameterizedTest(name = "caching {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void theChoicesOfOneRequestPrefillTheirPromptOnce(boolean caching) throws Exception {
        Scheduler s = start(4, 64, 100, 32, null, caching);
        exec.gated = true; // the three are queued before the first step ends
        int[] p = prompt(14, 7);
        List<Collector> cs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Collector c = new Collector();
            cs.add(c);
            s.submit(req("n" + i, p, 5), c);
        }
        exec.allow(1_000);
        for (Collector c : cs) {
            assertThat(c.await()).isEqualTo(FinishReason.LENGTH);
            assertThat(c.ids()).containsExactly(FakeExecutor.reference(p, 5, VOCAB));
        }
        int decodes = 3 * 4;
        if (caching) {
            assertThat(fed(0))
                    .as("the prompt once, then 2 tokens per other choice")
                    .isEqualTo(14 + 2 * 2 + decodes);
            assertThat(cs.stream().map(c -> c.cachedTokens)).containsExactly(0, 12, 12);
        } else {
            assertThat(fed(0)).isEqualTo(3 * 14 + decodes);
            assertThat(cs.stream().map(c -> c.cachedTokens)).containsExactly(0, 0, 0);
        }
    }

    @Test
    void evictedBlocksAreRecomputedAndHitsComeBackAfterwards() throws Exception {
        Scheduler s = start(2, 64, 100, 8, null, true);
        int[] a = prompt(12, 1);
        run(s, "a", a, 2, new Collector());
        assertThat(blocks.cachedBlocks()).isEqualTo(3);
        run(s, "b", prompt(26, 2), 4, new Collector()); // 30 tokens: 8 blocks, every one of a's is evicted
        assertThat(blocks.evictions()).isEqualTo(3);
        Collector again = new Collector();
        run(s, "a2", a, 2, again);
        assertThat(again.cachedTokens).isZero();
        assertThat(again.ids()).containsExactly(FakeExecutor.reference(a, 2, VOCAB));
        Collector third = new Collector();
        run(s, "a3", a, 2, third);
        assertThat(third.cachedTokens).isEqualTo(8);
        assertThat(third.ids()).containsExactly(FakeExecutor.reference(a, 2, VOCAB));
    }

    @ParameterizedTest(name = "caching {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void prefixCacheCountersAreInTokens(boolean caching) throws Exception {
        EngineMetrics m = new EngineMetrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), "m", BS, 32);
        Scheduler s = start(4, 64, 100, 32, m, caching);
        int[] p = prompt(14, 4);
        run(s, "a", p, 2, new Collector());
        run(s, "b", p, 2, new Collector());
        run(s, "c", prompt(6, 9), 2, new Collector());
        String text = m.render();
        String l = "{model_name=\"m\",engine=\"0\"}";
        assertThat(text)
                .contains("# TYPE tensorlane:prefix_cache_queries_total counter")
                .contains("# TYPE tensorlane:prefix_cache_hits_total counter")
                .contains("tensorlane:prefix_cache_queries_total" + l + " " + (caching ? "34.0" : "0.0"))
                .contains("tensorlane:prefix_cache_hits_total" + l + " " + (caching ? "12.0" : "0.0"));
    }
}
