package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.contract.Algorithm;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class AllreduceCountsTest {
    @Test
    void callsBytesAndTimedCallsAreKeptPerAlgorithm() {
        AllreduceCounts c = new AllreduceCounts();
        c.add(Algorithm.OneStage, 65, 8192);
        c.add(Algorithm.NCCL, 1, 1 << 20);
        c.addSampled(Algorithm.OneStage, 6_000);
        c.addSampled(Algorithm.OneStage, 8_000);

        assertThat(c.calls(Algorithm.OneStage)).isEqualTo(65);
        assertThat(c.bytes(Algorithm.OneStage)).isEqualTo(65L * 8192);
        assertThat(c.calls(Algorithm.NCCL)).isEqualTo(1);
        assertThat(c.calls(Algorithm.TwoStage)).isZero();
        assertThat(c.sampledCalls(Algorithm.OneStage)).isEqualTo(2);
        assertThat(c.sampledNanos(Algorithm.OneStage)).isEqualTo(14_000);
        assertThat(c.sampledCalls(Algorithm.NCCL)).isZero();
    }

    @Test
    void everyTimedCallReachesTheSinkSetLast() {
        AllreduceCounts c = new AllreduceCounts();
        List<String> first = new ArrayList<>();
        List<String> second = new ArrayList<>();
        c.addSampled(Algorithm.Ring, 1); // before any sink: only counted
        c.onSample((a, ns) -> first.add(a + "=" + ns));
        c.addSampled(Algorithm.Ring, 42);
        c.onSample((a, ns) -> second.add(a + "=" + ns));
        c.addSampled(Algorithm.NCCL, 7);

        assertThat(first).containsExactly("Ring=42");
        assertThat(second).containsExactly("NCCL=7");
        assertThat(c.sampledCalls(Algorithm.Ring)).isEqualTo(2);
    }
}
