package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.runtime.text.SamplingParams;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The device layout tl_sample_f32 reads (tl_sample.cuh): field blocks of capacity entries at 0, 4c, 8c, 12c, 16c, 20c,
 * 28c bytes, the penalty fields at 32c .. 52c, then a mask slot per row from 56c bytes.
 */
class SamplingRowsTest {
    @Test
    void packsEachFieldInItsBlock() {
        SamplingRows r =
                new SamplingRows(3).set(1, new SamplingParams(0.7f, 0.9f, 40, 0.05f, 0x1234_5678_9ABC_DEF0L), 17);
        int cap = 4;
        ByteBuffer b = ByteBuffer.allocate(4 * 14 * cap).order(ByteOrder.LITTLE_ENDIAN);
        b.asIntBuffer().put(r.pack(cap));
        assertThat(b.getFloat(0)).isZero(); // row 0 never set: greedy
        assertThat(b.getFloat(4)).isEqualTo(0.7f); // temperature[1]
        assertThat(b.getFloat(4 * cap + 4)).isEqualTo(0.9f); // top_p[1]
        assertThat(b.getFloat(4 * cap)).isEqualTo(1f); // top_p of unset rows: off
        assertThat(b.getFloat(4 * cap + 12)).isEqualTo(1f); // padding row 3 too
        assertThat(b.getFloat(8 * cap + 4)).isEqualTo(0.05f); // min_p[1]
        assertThat(b.getInt(12 * cap + 4)).isEqualTo(40); // top_k[1]
        assertThat(b.getInt(16 * cap + 4)).isEqualTo(17); // counter[1]
        assertThat(b.getLong(20 * cap + 8)).isEqualTo(0x1234_5678_9ABC_DEF0L); // seed[1], 8-byte aligned
        assertThat(b.getLong(20 * cap)).isZero();
        assertThat(b.getInt(28 * cap + 4)).as("no mask").isZero();
    }

    @Test
    void maskedRowsAreFlaggedAndHaveASlotEach() {
        int[] mask = {0b101};
        SamplingRows r = new SamplingRows(3).mask(2, mask);
        assertThat(r.allGreedy()).isTrue();
        assertThat(r.trivial())
                .as("a mask must be uploaded even for greedy rows")
                .isFalse();
        assertThat(new SamplingRows(3).trivial()).isTrue();
        int cap = 4;
        int[] w = r.pack(cap);
        assertThat(w).hasSize(14 * cap);
        assertThat(w[7 * cap + 2]).isEqualTo(1);
        assertThat(w[7 * cap]).isZero();
        assertThat(r.padTo(4).mask(2)).isSameAs(mask);
        assertThat(r.padTo(4).mask(3)).isNull();
        // vocab 33: two words per mask; row 1's slot after row 0's, all after the 14 x cap parameter words
        assertThat(SamplingRows.maskWords(33)).isEqualTo(2);
        assertThat(SamplingRows.maskOffset(cap, 1, 33)).isEqualTo(14L * cap + 2);
        assertThat(SamplingRows.layoutWords(cap, 33)).isEqualTo(14L * cap + 2L * cap);
    }

    @Test
    void greedyRowsAndTopKOfOneAreArgmax() {
        assertThat(new SamplingRows(2).allGreedy()).isTrue();
        SamplingRows r = new SamplingRows(2)
                .set(0, new SamplingParams(1f, 1f, 1, 0f, 3), 0)
                .set(1, SamplingParams.greedy(), 0);
        assertThat(r.allGreedy()).isTrue(); // top_k 1 is greedy
        assertThat(r.params(0).temperature()).isZero();
        r.set(1, new SamplingParams(0.5f, 1f, 0, 0f, 3), 4);
        assertThat(r.allGreedy()).isFalse();
        assertThat(r.params(1)).isEqualTo(new SamplingParams(0.5f, 1f, 0, 0f, 3));
        assertThat(r.counter(1)).isEqualTo(4);
    }

    @Test
    void paddingAddsGreedyRows() {
        SamplingRows r = new SamplingRows(1)
                .set(0, new SamplingParams(0.5f, 0.8f, 5, 0f, 9), 2)
                .padTo(4);
        assertThat(r.rows()).isEqualTo(4);
        assertThat(r.params(0)).isEqualTo(new SamplingParams(0.5f, 0.8f, 5, 0f, 9));
        assertThat(r.counter(0)).isEqualTo(2);
        assertThat(r.params(3).isGreedy()).isTrue();
    }

    @Test
    void capacityIsEvenAndBoundsThePack() {
        assertThat(SamplingRows.capacity(7)).isEqualTo(8);
        assertThat(SamplingRows.capacity(8)).isEqualTo(8);
        assertThatThrownBy(() -> new SamplingRows(3).pack(3)).hasMessageContaining("even");
        assertThatThrownBy(() -> new SamplingRows(5).pack(4)).hasMessageContaining(">= 5");
    }

    @Test
    void theBatchCarriesEachLogitsRowsDraw() {
        SamplingParams hot = new SamplingParams(0.9f, 1f, 0, 0f, 5);
        StepBatch b = new StepBatch.Builder(16, 4)
                .add(List.of(0), new int[] {1, 2, 3}, 0, StepBatch.Logits.LAST)
                .sample(hot, 0)
                .add(List.of(1), new int[] {4}, 7, StepBatch.Logits.LAST)
                .add(List.of(2), new int[] {5}, 3, StepBatch.Logits.LAST)
                .sample(hot, 3)
                .build();
        assertThat(b.sampling().rows()).isEqualTo(3);
        assertThat(b.sampling().params(0)).isEqualTo(hot);
        assertThat(b.sampling().params(1).isGreedy()).isTrue();
        assertThat(b.sampling().counter(2)).isEqualTo(3);
        StepBatch padded = b.padTo(6); // 5 tokens + 1 padding token with its own logits row
        assertThat(padded.sampling().rows()).isEqualTo(4);
        assertThat(padded.sampling().params(2)).isEqualTo(hot);
        assertThatThrownBy(() -> new StepBatch.Builder(16, 4)
                        .add(List.of(0), new int[] {1}, 0, StepBatch.Logits.NONE)
                        .sample(hot, 0))
                .hasMessageContaining("no logits row");
    }
}
