package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class StepBatchTest {
    @Test
    void slotsFollowTheBlockTable() {
        StepBatch b = new StepBatch.Builder(4, 8)
                .add(List.of(7, 2), new int[] {10, 11, 12, 13, 14}, 0, StepBatch.Logits.LAST)
                .add(List.of(5, 1, 3), new int[] {20}, 9, StepBatch.Logits.LAST)
                .build();
        assertThat(b.tokens()).isEqualTo(6);
        assertThat(b.rows()).isEqualTo(2);
        assertThat(b.positions()).containsExactly(0, 1, 2, 3, 4, 9);
        // block 7 holds positions 0..3, block 2 position 4; the second sequence's position 9 is in its third block (3),
        // offset 1.
        assertThat(b.slots()).containsExactly(28, 29, 30, 31, 8, 13);
        assertThat(b.tokenRow()).containsExactly(0, 0, 0, 0, 0, 1);
        assertThat(b.logitTokens()).containsExactly(4, 5);
        assertThat(b.blockTables()).hasSize(16);
        assertThat(b.blockTables()[0]).isEqualTo(7);
        assertThat(b.blockTables()[1]).isEqualTo(2);
        assertThat(b.blockTables()[8]).isEqualTo(5);
        assertThat(b.blockTables()[10]).isEqualTo(3);
    }

    @Test
    void manyRowsKeepEachBlockTableInItsOwnRowAndUnusedEntriesZero() {
        int width = 5;
        StepBatch.Builder builder = new StepBatch.Builder(2, width);
        for (int r = 0; r < 37; r++) { // past several doublings of the table's capacity
            List<Integer> table = new ArrayList<>();
            for (int i = 0; i <= r % width; i++) {
                table.add(1000 * r + i);
            }
            builder.add(table, new int[] {r}, 0, StepBatch.Logits.LAST);
        }
        StepBatch b = builder.build();

        assertThat(b.rows()).isEqualTo(37);
        assertThat(b.blockTables()).hasSize(37 * width);
        for (int r = 0; r < 37; r++) {
            for (int i = 0; i < width; i++) {
                assertThat(b.blockTables()[r * width + i])
                        .as("row %d entry %d", r, i)
                        .isEqualTo(i <= r % width ? 1000 * r + i : 0);
            }
            assertThat(b.slots()[r]).isEqualTo(1000 * r * 2);
        }
    }

    @Test
    void logitsForEveryTokenOrNone() {
        StepBatch b = new StepBatch.Builder(16, 2)
                .add(List.of(0), new int[] {1, 2, 3}, 0, StepBatch.Logits.ALL)
                .add(List.of(1), new int[] {4, 5}, 0, StepBatch.Logits.NONE)
                .add(List.of(2), new int[] {6}, 3, StepBatch.Logits.LAST)
                .build();
        assertThat(b.logitTokens()).containsExactly(0, 1, 2, 5);
    }

    @Test
    void paddingWritesNoCacheAndUsesAnExtraRow() {
        StepBatch b = new StepBatch.Builder(16, 2)
                .add(List.of(3), new int[] {9}, 4, StepBatch.Logits.LAST)
                .add(List.of(4), new int[] {8}, 0, StepBatch.Logits.LAST)
                .build()
                .padTo(4);
        assertThat(b.tokens()).isEqualTo(4);
        assertThat(b.rows()).isEqualTo(3);
        assertThat(b.slots()).containsExactly(52, 64, -1, -1);
        assertThat(b.tokenRow()).containsExactly(0, 1, 2, 2);
        assertThat(b.logitTokens()).containsExactly(0, 1, 2, 3);
        assertThat(b.blockTables()).hasSize(6);
    }

    @Test
    void rejectsChunksBeyondTheTable() {
        StepBatch.Builder b = new StepBatch.Builder(4, 2);
        assertThatThrownBy(() -> b.add(List.of(0), new int[] {1, 2, 3, 4, 5}, 0, StepBatch.Logits.LAST))
                .hasMessageContaining("holds 4 tokens, chunk ends at 5");
        assertThatThrownBy(() -> b.add(List.of(0, 1, 2), new int[] {1}, 0, StepBatch.Logits.LAST))
                .hasMessageContaining("exceeds 2");
        assertThatThrownBy(() -> b.add(List.of(0), new int[0], 0, StepBatch.Logits.LAST))
                .hasMessageContaining("empty chunk");
    }

    @Test
    void allocatorHandsOutAndTakesBackBlocks() {
        BlockAllocator a = new BlockAllocator(5, 16);
        List<Integer> t = new ArrayList<>();
        assertThat(a.ensure(t, 33)).isTrue();
        assertThat(t).containsExactly(0, 1, 2);
        assertThat(a.ensure(t, 48)).isTrue();
        assertThat(t).hasSize(3);
        assertThat(a.usage()).isEqualTo(0.6);
        List<Integer> u = new ArrayList<>();
        assertThat(a.ensure(u, 49)).isFalse();
        assertThat(u).isEmpty();
        assertThat(a.freeBlocks()).isEqualTo(2);
        a.release(t);
        assertThat(t).isEmpty();
        assertThat(a.freeBlocks()).isEqualTo(5);
        assertThat(a.ensure(u, 49)).isTrue();
        assertThat(u).hasSize(4);
        assertThatThrownBy(() -> a.allocate(2)).hasMessageContaining("1 of 5 free");
        assertThatThrownBy(() -> a.release(new ArrayList<>(List.of(9)))).hasMessageContaining("not a block");
    }
}
