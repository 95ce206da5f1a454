package io.tensorlane.runtime.model;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Which checkpoint windows go into which device tensor on one tensor-parallel rank (Megatron layout): q/k/v and
 * gate/up split by output rows, o and down by input columns, norms replicated, embedding and lm_head by vocabulary
 * rows. Device tensor keys: {@code embed}, {@code layers.{i}.input_norm|qkv|qkv_bias|q_norm|k_norm|o|post_norm|gate_up|down},
 * {@code final_norm}, {@code lm_head}. The linears (qkv, o, gate_up, down) of a quantized model are FP8 with their scales
 * ({@link Fp8Shards}); everything else stays in the model's dtype.
 */
public final class ShardPlan {
    public static final String EMBED = "model.embed_tokens.weight";
    public static final String LM_HEAD = "lm_head.weight";
    public static final String NORM = "model.norm.weight";
    /** The decoder layers' linear weights (name suffixes): what a quantized checkpoint stores in FP8. */
    static final List<String> LINEARS = List.of(
            "self_attn.q_proj.weight",
            "self_attn.k_proj.weight",
            "self_attn.v_proj.weight",
            "self_attn.o_proj.weight",
            "mlp.gate_proj.weight",
            "mlp.up_proj.weight",
            "mlp.down_proj.weight");

    private ShardPlan() {}

    /** Whether a device tensor key is a MoE layer's stacked experts ({@code layers.{i}.experts_gate_up|experts_down}). */
    public static boolean isExperts(String key) {
        return key.endsWith(".experts_gate_up") || key.endsWith(".experts_down");
    }

    /**
     * Whether some MoE layer's expert projections are stored in FP8 (the quantization covers them, i.e. they are not in
     * its list of unquantized modules; gate/up and down may differ); the router ({@code mlp.gate}) always stays in the
     * model's dtype.
     */
    public static boolean fp8Experts(ModelConfig c) {
        if (c.moe() == null) {
            return false;
        }
        ExpertNames names = c.architecture().experts();
        Quantization q = c.quantization();
        return c.moe().moeLayers().stream()
                .anyMatch(l -> Stream.of(names.gate(), names.up(), names.down())
                        .anyMatch(w -> q.quantizes(Fp8Shards.module(names.expert(l, 0, w)))));
    }

    /** Whether a checkpoint tensor is a linear's weight, stored in FP8 where the quantization covers its module. */
    static boolean isLinear(String name) {
        return LINEARS.stream().anyMatch(name::endsWith) || name.contains(".experts.");
    }

    /** The checkpoint tensor name {@code model.layers.{layer}.{suffix}}. */
    public static String layer(int layer, String suffix) {
        return "model.layers." + layer + "." + suffix;
    }

    /** The source of lm_head: the embedding when tied. */
    public static String lmHeadSource(ModelConfig c) {
        return c.tieWordEmbeddings() ? EMBED : LM_HEAD;
    }

    public static List<DeviceTensor> forRank(TpLayout l, int rank) {
        l.checkRank(rank);
        ModelConfig c = l.config();
        long hidden = c.hiddenSize();
        long hd = c.headDim();
        long hq = l.headsPerRank();
        long hk = l.kvHeadsPerRank();
        long qRow = rank * hq * hd;
        long kvRow = l.kvHeadStart(rank) * hd;
        Map<String, long[]> shapes = expectedShapes(c);
        List<DeviceTensor> out = new ArrayList<>();
        out.add(vocab("embed", EMBED, l, rank));
        for (int i = 0; i < c.numLayers(); i++) {
            String p = "layers." + i + ".";
            out.add(norm(p + "input_norm", layer(i, "input_layernorm.weight"), hidden));
            out.add(Fp8Shards.linear(
                    l,
                    rank,
                    p + "qkv",
                    (hq + 2 * hk) * hd,
                    hidden,
                    List.of(
                            new Piece(layer(i, "self_attn.q_proj.weight"), qRow, 0, hq * hd, hidden, 0),
                            new Piece(layer(i, "self_attn.k_proj.weight"), kvRow, 0, hk * hd, hidden, hq * hd),
                            new Piece(layer(i, "self_attn.v_proj.weight"), kvRow, 0, hk * hd, hidden, (hq + hk) * hd)),
                    shapes));
            if (c.qkvBias()) {
                out.add(new DeviceTensor(
                        p + "qkv_bias",
                        (hq + 2 * hk) * hd,
                        1,
                        List.of(
                                new Piece(layer(i, "self_attn.q_proj.bias"), qRow, 0, hq * hd, 1, 0),
                                new Piece(layer(i, "self_attn.k_proj.bias"), kvRow, 0, hk * hd, 1, hq * hd),
                                new Piece(layer(i, "self_attn.v_proj.bias"), kvRow, 0, hk * hd, 1, (hq + hk) * hd))));
            }
            if (c.qkNorm()) {
                out.add(norm(p + "q_norm", layer(i, "self_attn.q_norm.weight"), hd));
                out.add(norm(p + "k_norm", layer(i, "self_attn.k_norm.weight"), hd));
            }
            out.add(Fp8Shards.linear(
                    l,
                    rank,
                    p + "o",
                    hidden,
                    hq * hd,
                    List.of(new Piece(layer(i, "self_attn.o_proj.weight"), 0, qRow, hidden, hq * hd, 0)),
                    shapes));
            out.add(norm(p + "post_norm", layer(i, "post_attention_layernorm.weight"), hidden));
            if (c.isMoe(i)) {
                experts(out, l, rank, i, shapes);
            } else {
                dense(out, l, rank, i, shapes);
            }
        }
        out.add(norm("final_norm", NORM, hidden));
        out.add(vocab("lm_head", lmHeadSource(c), l, rank));
        return out;
    }

    /** A dense MLP: gate/up fused [2 x inter, hidden] by output rows, down [hidden, inter] by input columns. */
    private static void dense(List<DeviceTensor> out, TpLayout l, int rank, int i, Map<String, long[]> shapes) {
        long hidden = l.config().hiddenSize();
        long inter = l.intermediatePerRank();
        String p = "layers." + i + ".";
        out.add(Fp8Shards.linear(
                l,
                rank,
                p + "gate_up",
                2 * inter,
                hidden,
                List.of(
                        new Piece(layer(i, "mlp.gate_proj.weight"), rank * inter, 0, inter, hidden, 0),
                        new Piece(layer(i, "mlp.up_proj.weight"), rank * inter, 0, inter, hidden, inter)),
                shapes));
        out.add(Fp8Shards.linear(
                l,
                rank,
                p + "down",
                hidden,
                inter,
                List.of(new Piece(layer(i, "mlp.down_proj.weight"), 0, rank * inter, hidden, inter, 0)),
                shapes));
    }

    /**
     * A Mixture-of-Experts MLP: the router [experts, hidden] replicated; every expert split as a dense MLP is, its
     * shards stacked expert-major: {@code experts_gate_up} [experts x 2 x inter, hidden] (expert e's gate rows then its
     * up rows) and {@code experts_down} [experts x hidden, inter].
     */
    private static void experts(List<DeviceTensor> out, TpLayout l, int rank, int i, Map<String, long[]> shapes) {
        ModelConfig c = l.config();
        ExpertNames names = c.architecture().experts();
        long hidden = c.hiddenSize();
        long inter = l.expertIntermediatePerRank();
        int experts = c.moe().experts();
        String p = "layers." + i + ".";
        out.add(new DeviceTensor(
                p + "router", experts, hidden, List.of(new Piece(names.router(i), 0, 0, experts, hidden, 0))));
        List<Piece> gateUp = new ArrayList<>();
        List<Piece> down = new ArrayList<>();
        for (int e = 0; e < experts; e++) {
            long row = e * 2 * inter;
            gateUp.add(new Piece(names.expert(i, e, names.gate()), rank * inter, 0, inter, hidden, row));
            gateUp.add(new Piece(names.expert(i, e, names.up()), rank * inter, 0, inter, hidden, row + inter));
            down.add(new Piece(names.expert(i, e, names.down()), 0, rank * inter, hidden, inter, e * hidden));
        }
        out.add(Fp8Shards.linear(l, rank, p + "experts_gate_up", experts * 2 * inter, hidden, gateUp, shapes));
        out.add(Fp8Shards.linear(l, rank, p + "experts_down", experts * hidden, inter, down, shapes));
    }

    private static DeviceTensor norm(String key, String source, long n) {
        return new DeviceTensor(key, n, 1, List.of(new Piece(source, 0, 0, n, 1, 0)));
    }

    private static DeviceTensor vocab(String key, String source, TpLayout l, int rank) {
        long hidden = l.config().hiddenSize();
        int rows = l.vocabRows(rank);
        List<Piece> pieces = rows == 0 ? List.of() : List.of(new Piece(source, l.vocabStart(rank), 0, rows, hidden, 0));
        return new DeviceTensor(key, l.vocabPerRank(), hidden, pieces);
    }

    /** Bytes of all device tensors of {@code rank}. */
    public static long deviceBytes(TpLayout l, int rank) {
        return forRank(l, rank).stream()
                .mapToLong(t -> t.bytes(l.config().dtype()))
                .sum();
    }

    /** The checkpoint shape each source tensor the plan reads must have: [rows, cols] for 2-D, [n] for 1-D. */
    public static Map<String, long[]> expectedShapes(ModelConfig c) {
        long h = c.hiddenSize();
        long q = c.qSize();
        long kv = c.kvSize();
        long inter = c.intermediateSize();
        Map<String, long[]> m = new LinkedHashMap<>();
        m.put(EMBED, new long[] {c.vocabSize(), h});
        for (int i = 0; i < c.numLayers(); i++) {
            m.put(layer(i, "input_layernorm.weight"), new long[] {h});
            m.put(layer(i, "self_attn.q_proj.weight"), new long[] {q, h});
            m.put(layer(i, "self_attn.k_proj.weight"), new long[] {kv, h});
            m.put(layer(i, "self_attn.v_proj.weight"), new long[] {kv, h});
            if (c.qkvBias()) {
                m.put(layer(i, "self_attn.q_proj.bias"), new long[] {q});
                m.put(layer(i, "self_attn.k_proj.bias"), new long[] {kv});
                m.put(layer(i, "self_attn.v_proj.bias"), new long[] {kv});
            }
            if (c.qkNorm()) {
                m.put(layer(i, "self_attn.q_norm.weight"), new long[] {c.headDim()});
                m.put(layer(i, "self_attn.k_norm.weight"), new long[] {c.headDim()});
            }
            m.put(layer(i, "self_attn.o_proj.weight"), new long[] {h, q});
            m.put(layer(i, "post_attention_layernorm.weight"), new long[] {h});
            if (c.isMoe(i)) {
                ExpertNames names = c.architecture().experts();
                long ei = c.moe().expertIntermediateSize();
                m.put(names.router(i), new long[] {c.moe().experts(), h});
                for (int e = 0; e < c.moe().experts(); e++) {
                    m.put(names.expert(i, e, names.gate()), new long[] {ei, h});
                    m.put(names.expert(i, e, names.up()), new long[] {ei, h});
                    m.put(names.expert(i, e, names.down()), new long[] {h, ei});
                }
            } else {
                m.put(layer(i, "mlp.gate_proj.weight"), new long[] {inter, h});
                m.put(layer(i, "mlp.up_proj.weight"), new long[] {inter, h});
                m.put(layer(i, "mlp.down_proj.weight"), new long[] {h, inter});
            }
        }
        m.put(NORM, new long[] {h});
        if (!c.tieWordEmbeddings()) {
            m.put(LM_HEAD, new long[] {c.vocabSize(), h});
        }
        return m;
    }

    /**
     * Checks that every tensor the plan reads exists with exactly the expected shape and the config's dtype (for the
     * linears of a quantized model: F8_E4M3 and a scale tensor of the quantization's shape). Tensors the plan does not
     * read are ignored. The message lists the problems (the first 20) with expected and actual values.
     */
    public static void validate(Checkpoint ck, ModelConfig c) {
        List<String> problems = new ArrayList<>();
        SafeDType want = c.dtype().safeDType();
        Quantization q = c.quantization();
        for (Map.Entry<String, long[]> e : expectedShapes(c).entrySet()) {
            String name = e.getKey();
            long[] shape = e.getValue();
            TensorInfo t = ck.find(name).orElse(null);
            if (t == null) {
                String hint = name.equals(LM_HEAD) ? " (tie_word_embeddings is false)" : "";
                problems.add(
                        "missing tensor " + name + hint + ", expected shape " + Arrays.toString(shape) + " " + want);
                continue;
            }
            if (!Arrays.equals(t.shape(), shape)) {
                problems.add("tensor " + name + " has shape " + Arrays.toString(t.shape()) + ", expected "
                        + Arrays.toString(shape));
            }
            if (q.quantizes(Fp8Shards.module(name)) && isLinear(name)) {
                Fp8Shards.expect(q, ck, name, shape, problems);
            } else if (t.dtype() != want) {
                problems.add("tensor " + name + " has dtype " + t.dtype() + ", expected " + want + " (config dtype "
                        + c.dtype().hfName()
                        + (q.fp8()
                                ? "; " + q.describe()
                                        + " covers the decoder layers' linears and experts only, not norms,"
                                        + " embeddings or the MoE router"
                                : "")
                        + ")");
            }
        }
        if (!problems.isEmpty()) {
            int shown = Math.min(20, problems.size());
            String more = problems.size() > shown ? "; and " + (problems.size() - shown) + " more" : "";
            throw new ModelException("checkpoint " + ck.dir() + " does not match its config ("
                    + c.architecture().hfName() + "): " + String.join("; ", problems.subList(0, shown)) + more);
        }
    }
}
