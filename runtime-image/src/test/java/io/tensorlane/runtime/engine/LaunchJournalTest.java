package io.tensorlane.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.contract.DType;
import org.junit.jupiter.api.Test;

class LaunchJournalTest {
    @Test
    void keepsTheLastEntriesOldestFirstNumberedSinceTheStart() {
        long[] now = {0};
        LaunchJournal j = new LaunchJournal(3, () -> now[0] += 1_500_000);
        assertThat(j.lines()).isEmpty();
        assertThat(j.last()).isEqualTo("(none)");
        j.launch("OneStage", DType.bf16, 4096, 4, 1);
        j.graph("replay of the graph of bucket", 8);
        assertThat(j.lines())
                .containsExactly(
                        "#1 @1.500 ms OneStage bf16 count 4096 slot 4, 1 blocks",
                        "#2 @3.000 ms replay of the graph of bucket 8");
        j.launch("push", DType.fp16, 8, -1, 1);
        j.launch("TwoStage", DType.fp32, 1_000_000, 0, 16);
        j.launch("allreduce + RMSNorm", DType.bf16, 32768, 5, 8);
        assertThat(j.lines())
                .containsExactly(
                        "#3 @4.500 ms push fp16 count 8, 1 blocks",
                        "#4 @6.000 ms TwoStage fp32 count 1000000 slot 0, 16 blocks",
                        "#5 @7.500 ms allreduce + RMSNorm bf16 count 32768 slot 5, 8 blocks");
        assertThat(j.last()).isEqualTo("#5 @7.500 ms allreduce + RMSNorm bf16 count 32768 slot 5, 8 blocks");
    }
}
