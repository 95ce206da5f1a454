package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.sched.StepBatch;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The routing dump's record layout, as oracle/moe_routing.py reads it. */
class RoutingDumpTest {
    @Test
    void oneRecordPerStepInTheDocumentedLayout(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("routing.bin");
        assertThat(RoutingDump.fromEnv(Map.of())).isNull();
        StepBatch b = new StepBatch.Builder(4, 8)
                .add(List.of(7, 2), new int[] {10, 11}, 0, StepBatch.Logits.LAST)
                .add(List.of(5), new int[] {20}, 3, StepBatch.Logits.LAST)
                .build();
        // 2 MoE layers x 3 tokens x top-2
        int[] ids = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        try (RoutingDump d = RoutingDump.fromEnv(Map.of(RoutingDump.ENV, file.toString()))) {
            d.write(b, 2, 2, ids);
            d.write(b, 2, 2, ids);
        }
        ByteBuffer r = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(r.remaining()).isEqualTo(2 * 4 * (3 + 3 * 3 + 12));
        assertThat(new int[] {r.getInt(), r.getInt(), r.getInt()}).containsExactly(3, 2, 2);
        // per token: row, position, token id
        assertThat(new int[] {r.getInt(), r.getInt(), r.getInt()}).containsExactly(0, 0, 10);
        assertThat(new int[] {r.getInt(), r.getInt(), r.getInt()}).containsExactly(0, 1, 11);
        assertThat(new int[] {r.getInt(), r.getInt(), r.getInt()}).containsExactly(1, 3, 20);
        for (int id : ids) {
            assertThat(r.getInt()).isEqualTo(id);
        }
        assertThat(r.getInt()).as("the second step's n").isEqualTo(3);
    }
}
