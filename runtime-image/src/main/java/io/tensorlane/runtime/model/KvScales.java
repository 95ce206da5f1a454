package io.tensorlane.runtime.model;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * The FP8 KV cache's per-layer scales from a checkpoint: a K code c stands for e4m3(c) x k_scale, a V code for e4m3(c)
 * x v_scale. Read per layer, under {@code model.layers.N.self_attn.}, in this order of preference: {@code k_scale} and
 * {@code v_scale} (compressed-tensors' {@code kv_cache_scheme}, vLLM's names), {@code k_proj.k_scale} and {@code
 * v_proj.v_scale} (the earlier compressed-tensors names vLLM remaps), {@code kv_scale} (one scale for both, AutoFP8).
 * Each is one element (shape [] or [1]) of F32, BF16 or F16, finite and positive. A layer without any keeps 1.0 for
 * both; a layer with only one of k and v is refused (a checkpoint whose scales were lost half-way).
 */
public final class KvScales {
    private KvScales() {}

    /** The scales of {@code layers} layers as {k0, v0, k1, v1, ...} (1.0 where the checkpoint gives none). */
    public static float[] read(Checkpoint ck, int layers) {
        return resolve(layers, name -> ck.find(name).map(t -> ScaleGrid.read(ck, t)));
    }

    /** Whether the checkpoint holds any KV scale (the engine logs where its scales came from). */
    public static boolean present(Checkpoint ck, int layers) {
        for (int l = 0; l < layers; l++) {
            for (String n : names(l)) {
                if (ck.find(n).isPresent()) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Every tensor name a layer's scales may have, in the order they are looked up. */
    static List<String> names(int layer) {
        List<String> out = new ArrayList<>();
        for (String s : new String[] {"k_scale", "v_scale", "k_proj.k_scale", "v_proj.v_scale", "kv_scale"}) {
            out.add(ShardPlan.layer(layer, "self_attn." + s));
        }
        return out;
    }

    /** {@link #read} over a lookup of tensor name to its elements (empty: no such tensor). */
    static float[] resolve(int layers, Function<String, Optional<float[]>> find) {
        float[] out = new float[2 * layers];
        for (int l = 0; l < layers; l++) {
            List<String> n = names(l);
            Optional<Float> k = one(find, n.get(0)).or(() -> one(find, n.get(2)));
            Optional<Float> v = one(find, n.get(1)).or(() -> one(find, n.get(3)));
            Optional<Float> both = one(find, n.get(4));
            if (k.isPresent() != v.isPresent() && both.isEmpty()) {
                throw new ModelException("layer " + l + " has a " + (k.isPresent() ? "k" : "v") + " scale but no "
                        + (k.isPresent() ? "v" : "k") + " scale (looked for " + n + ")");
            }
            out[2 * l] = k.or(() -> both).orElse(1.0f);
            out[2 * l + 1] = v.or(() -> both).orElse(1.0f);
        }
        return out;
    }

    private static Optional<Float> one(Function<String, Optional<float[]>> find, String name) {
        return find.apply(name).map(v -> {
            if (v.length != 1) {
                throw new ModelException(
                        "KV scale " + name + " has " + v.length + " elements, expected one (a per-tensor scale)");
            }
            float s = v[0];
            if (!(s > 0) || Float.isInfinite(s)) {
                throw new ModelException("KV scale " + name + " is " + s + "; a scale must be finite and positive");
            }
            return s;
        });
    }
}
