package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.text.SamplingParams;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Penalised sequences through the scheduler: every draw of a penalised sequence carries its entries, with the counts of
 * exactly the tokens generated before it (also across preemption and recompute), the min_tokens bans until reached;
 * a plain sequence in the same steps carries none.
 */
class PenaltySchedulerTest extends SchedulerFixture {
    @Test
    void everyDrawCarriesTheCountsOfTheTokensBeforeIt() throws Exception {
        // 7 KV blocks of 4 tokens for two sequences growing to 6 + 12 and 8 + 12 tokens: preemption must happen
        Scheduler s = start(4, 64, 7);
        int[] pp = prompt(6, 3);
        SamplingPenalties pen = new SamplingPenalties(0.25f, 0.5f, 1.2f, Map.of(5, 1.5f), 3);
        SeqRequest penalised = new SeqRequest("p", pp, 12, SamplingParams.greedy(), Set.of(7), false, 0, null, pen);
        Collector a = new Collector(), b = new Collector();
        exec.gated = true; // both queued before the second step: they run side by side and must preempt
        s.submit(penalised, a);
        s.submit(req("plain", prompt(8, 4), 12), b);
        exec.allow(1000);
        a.await();
        b.await();
        List<RowPenalty> seen = new ArrayList<>();
        int plainRows = 0;
        for (StepBatch batch : exec.batches) {
            for (int r = 0; r < batch.logitTokens().length; r++) {
                RowPenalty p = batch.sampling().penalty(r);
                if (p != null) {
                    seen.add(p);
                }
            }
            plainRows += batch.logitTokens().length;
        }
        int[] out = a.ids();
        assertThat(out.length).as("draws past min_tokens").isGreaterThan(3);
        assertThat(seen).as("one entry set per draw of the penalised sequence").hasSize(out.length);
        assertThat(plainRows - seen.size()).as("the plain sequence's draws").isEqualTo(b.ids().length);
        for (int k = 0; k < out.length; k++) {
            RowPenalty p = seen.get(k);
            assertThat(p.presence()).isEqualTo(0.25f);
            assertThat(p.frequency()).isEqualTo(0.5f);
            assertThat(p.repetition()).isEqualTo(1.2f);
            Map<Integer, Integer> want = new TreeMap<>();
            for (int id : pp) want.put(id, 0);
            for (int j = 0; j < k; j++) want.merge(out[j], 1, Integer::sum);
            Map<Integer, Integer> got = new TreeMap<>();
            for (int j = p.biasPairs(); j < p.entries(); j++) got.put(p.pairs()[2 * j], p.pairs()[2 * j + 1]);
            assertThat(got).as("draw %d", k).isEqualTo(want);
            Map<Integer, Float> bias = new TreeMap<>();
            for (int j = 0; j < p.biasPairs(); j++) {
                bias.put(p.pairs()[2 * j], Float.intBitsToFloat(p.pairs()[2 * j + 1]));
            }
            Map<Integer, Float> wantBias = new TreeMap<>(Map.of(5, 1.5f));
            if (k < 3) { // EOS and the stop id are banned while fewer than min_tokens were generated
                wantBias.put(EOS, Float.NEGATIVE_INFINITY);
                wantBias.put(7, Float.NEGATIVE_INFINITY);
            }
            assertThat(bias).as("draw %d", k).isEqualTo(wantBias);
        }
        assertThat(s.stats().preemptions()).as("the case must preempt").isPositive();
    }
}
