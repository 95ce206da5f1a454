package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.text.SamplingParams;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A sequence that will speculate prepares its proposer session while it is prefilled ({@link
 * Proposer.Session#prepare}): the n-gram index has its prompt before the first guess, and the tokens are those of the
 * plain run.
 */
@Timeout(30)
class SpecPrepareTest {
    static final int VOCAB = 97;
    static final int EOS = 96;

    /** One call of the session: prepare or propose, the sequence's length, the tokens indexed before the call. */
    record Call(String kind, int length, int indexedBefore) {}

    final List<Scheduler> open = new ArrayList<>();

    @AfterEach
    void closeAll() {
        open.forEach(Scheduler::close);
    }

    Scheduler start(Speculator spec) {
        SpecTarget target = new SpecTarget(VOCAB, 256, 4, ctx -> SpecTarget.periodic(ctx, VOCAB));
        // 64 tokens per step: a 300-token prompt is prefilled in 5 steps
        SchedulerConfig config = new SchedulerConfig(4, 64, 100, 512, 128);
        Scheduler s = new Scheduler(target, new BlockAllocator(256, 4), config, Set.of(EOS), null, spec);
        open.add(s);
        return s;
    }

    int[] run(Scheduler s, int[] prompt) throws Exception {
        Collector c = new Collector();
        s.submit(new SeqRequest("a", prompt, 40, SamplingParams.greedy(), Set.of(), true, 0), c, true);
        c.await();
        assertThat(s.awaitIdle(Duration.ofSeconds(5))).isTrue();
        return c.ids();
    }

    @Test
    void theNgramIndexTakesInThePromptWhileItIsPrefilled() throws Exception {
        int[] prompt = SpecSchedulerTest.repetitive(300, 3);
        int[] plain = run(start(null), prompt);

        List<Call> calls = Collections.synchronizedList(new ArrayList<>());
        Proposer recording = capacity -> {
            NgramIndex index = new NgramIndex(3, capacity);
            return new Proposer.Session() {
                @Override
                public int propose(int[] tokens, int length, int k, int[] out) {
                    calls.add(new Call("propose", length, index.length()));
                    return index.propose(tokens, length, k, out);
                }

                @Override
                public void prepare(int[] tokens, int length) {
                    calls.add(new Call("prepare", length, index.length()));
                    index.prepare(tokens, length);
                }
            };
        };
        SpeculativeConfig sc = SpeculativeConfig.parse("ngram:k=4,n=3", "test");
        Speculator spec = new Speculator(sc, recording, sc.logitRows(4), 4, null);
        int[] fast = run(start(spec), prompt);

        assertThat(fast).containsExactly(plain);
        assertThat(spec.counts().accepted()).isPositive();
        List<Call> prepares =
                calls.stream().filter(c -> c.kind().equals("prepare")).toList();
        // the first chunk's step admits it (no call); each later chunk's step prepares, the prompt known in full
        assertThat(prepares).isNotEmpty().allSatisfy(c -> assertThat(c.length()).isEqualTo(300));
        assertThat(prepares.get(0).indexedBefore()).isZero();
        int firstPropose = calls.indexOf(calls.stream()
                .filter(c -> c.kind().equals("propose"))
                .findFirst()
                .orElseThrow());
        assertThat(calls.subList(0, firstPropose)).containsExactlyElementsOf(prepares.subList(0, firstPropose));
        assertThat(calls.subList(firstPropose, calls.size())).doesNotContainAnyElementsOf(prepares);
        // the first guess finds the prompt indexed: only the first generated token is new to it
        assertThat(calls.get(firstPropose)).isEqualTo(new Call("propose", 301, 300));
    }
}
