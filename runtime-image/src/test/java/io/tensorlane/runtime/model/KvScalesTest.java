package io.tensorlane.runtime.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.runtime.model.SafetensorsWriter.T;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KvScalesTest {
    private static float[] resolve(int layers, Map<String, float[]> tensors) {
        return KvScales.resolve(layers, n -> Optional.ofNullable(tensors.get(n)));
    }

    private static String attn(int layer, String suffix) {
        return "model.layers." + layer + ".self_attn." + suffix;
    }

    /** Each naming the checkpoints use, one per layer, and a layer with none (1.0). */
    @Test
    void everyNamingIsReadAndMissingScalesAreOne() {
        Map<String, float[]> t = new HashMap<>();
        t.put(attn(0, "k_scale"), new float[] {0.5f});
        t.put(attn(0, "v_scale"), new float[] {0.25f});
        t.put(attn(1, "k_proj.k_scale"), new float[] {2f});
        t.put(attn(1, "v_proj.v_scale"), new float[] {3f});
        t.put(attn(2, "kv_scale"), new float[] {0.125f});
        assertThat(resolve(4, t)).containsExactly(0.5f, 0.25f, 2f, 3f, 0.125f, 0.125f, 1f, 1f);
    }

    @Test
    void separateScalesWinOverTheSharedOne() {
        Map<String, float[]> t = new HashMap<>();
        t.put(attn(0, "k_scale"), new float[] {0.5f});
        t.put(attn(0, "kv_scale"), new float[] {4f});
        assertThat(resolve(1, t)).containsExactly(0.5f, 4f);
    }

    @Test
    void badScalesAreRefusedByName() {
        assertThatThrownBy(() -> resolve(2, Map.of(attn(1, "k_scale"), new float[] {0.5f})))
                .isInstanceOf(ModelException.class)
                .hasMessageContaining("layer 1 has a k scale but no v scale");
        assertThatThrownBy(() -> resolve(1, Map.of(attn(0, "kv_scale"), new float[] {0f})))
                .hasMessageContaining(attn(0, "kv_scale") + " is 0.0");
        assertThatThrownBy(() -> resolve(1, Map.of(attn(0, "kv_scale"), new float[] {Float.NaN})))
                .hasMessageContaining("finite and positive");
        assertThatThrownBy(() -> resolve(1, Map.of(attn(0, "kv_scale"), new float[] {Float.POSITIVE_INFINITY})))
                .hasMessageContaining("finite and positive");
        assertThatThrownBy(() -> resolve(1, Map.of(attn(0, "kv_scale"), new float[] {1f, 2f})))
                .hasMessageContaining("has 2 elements, expected one");
    }

    /** Through a real safetensors file: F32 of shape [] and BF16 of shape [1]. */
    @Test
    void readsScalarTensorsFromTheCheckpoint(@TempDir Path dir) {
        List<T> t = List.of(
                new T(attn(0, "k_scale"), "F32", new long[] {}, Fp8ShardsTest.f32(0.0625f)),
                new T(attn(0, "v_scale"), "BF16", new long[] {1}, Fp8ShardsTest.bf16(0.75f)));
        try (Checkpoint ck = ShardPlanTest.checkpoint(dir, t)) {
            assertThat(KvScales.present(ck, 2)).isTrue();
            assertThat(KvScales.read(ck, 2)).containsExactly(0.0625f, 0.75f, 1f, 1f);
        }
    }

    @Test
    void aCheckpointWithoutScalesHasNone(@TempDir Path dir) {
        List<T> t = List.of(new T(ShardPlan.NORM, "F32", new long[] {2}, Fp8ShardsTest.f32(1f, 1f)));
        try (Checkpoint ck = ShardPlanTest.checkpoint(dir, t)) {
            assertThat(KvScales.present(ck, 2)).isFalse();
            assertThat(KvScales.read(ck, 2)).containsExactly(1f, 1f, 1f, 1f);
        }
    }
}
