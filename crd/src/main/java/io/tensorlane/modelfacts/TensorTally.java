package io.tensorlane.modelfacts;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * What the safetensors headers add up to, for the plan: bytes per dtype, parameters, and how much of both the routed
 * experts of a Mixture of Experts hold ({@link #routedExpert}). Parameters are the elements of every tensor except FP8
 * scales ({@link #scale}: {@code *.weight_scale_inv}, {@code *.weight_scale}, {@code *.input_scale}), so an FP8
 * checkpoint has the parameters of its bf16 original; bytes count every tensor, scales included. Pure.
 *
 * @param bytesByDtype tensor bytes per safetensors dtype
 * @param parameters elements of every tensor that is not a scale
 * @param routedParameters the part of {@code parameters} in routed-expert tensors
 * @param routedBytes bytes of the routed-expert tensors, their scales included
 */
public record TensorTally(Map<String, Long> bytesByDtype, long parameters, long routedParameters, long routedBytes) {
    /**
     * A routed expert's tensor in the Hugging Face layouts: {@code model.layers.N.mlp.experts.E.*} (Qwen3-MoE;
     * also a fused {@code mlp.experts.gate_up_proj}) and {@code model.layers.N.block_sparse_moe.experts.E.*}
     * (Mixtral), under any prefix. The router ({@code mlp.gate}) and shared experts ({@code mlp.shared_expert(s)})
     * are not routed experts.
     */
    static final Pattern ROUTED = Pattern.compile("(^|\\.)layers\\.\\d+\\.(mlp|block_sparse_moe)\\.experts\\.");

    public static final TensorTally EMPTY = new TensorTally(Map.of(), 0, 0, 0);

    public TensorTally {
        bytesByDtype = Collections.unmodifiableMap(new TreeMap<>(bytesByDtype));
    }

    /** The tally of a header's entries. */
    public static TensorTally of(List<SafetensorsHeader.Entry> entries) {
        Map<String, Long> bytes = new TreeMap<>();
        long params = 0, routedParams = 0, routedBytes = 0;
        for (SafetensorsHeader.Entry e : entries) {
            bytes.merge(e.dtype(), e.bytes(), Long::sum);
            long n = scale(e.name()) ? 0 : elements(e.shape());
            params += n;
            if (routedExpert(e.name())) {
                routedParams += n;
                routedBytes += e.bytes();
            }
        }
        return new TensorTally(bytes, params, routedParams, routedBytes);
    }

    /** Both tallies together (the files of one checkpoint). */
    public TensorTally plus(TensorTally o) {
        Map<String, Long> sum = new TreeMap<>(bytesByDtype);
        o.bytesByDtype.forEach((k, v) -> sum.merge(k, v, Long::sum));
        return new TensorTally(
                sum, parameters + o.parameters, routedParameters + o.routedParameters, routedBytes + o.routedBytes);
    }

    /** Bytes of all tensors. */
    public long bytes() {
        return bytesByDtype.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Whether the tensor is one of a routed expert's ({@link #ROUTED}). */
    public static boolean routedExpert(String name) {
        return ROUTED.matcher(name).find();
    }

    /** Whether the tensor is an FP8 scale, not a parameter of the model. */
    public static boolean scale(String name) {
        return name.endsWith("_scale_inv") || name.endsWith(".weight_scale") || name.endsWith(".input_scale");
    }

    private static long elements(long[] shape) {
        long n = 1;
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }
}
