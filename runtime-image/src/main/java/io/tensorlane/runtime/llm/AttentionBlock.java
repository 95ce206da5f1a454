package io.tensorlane.runtime.llm;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Cuda;
import jcuda.driver.CUstream;

/**
 * A decoder layer's attention between its qkv and o projections, on one rank: bias, q/k norm and RoPE with the step's
 * keys and values written to the paged cache, then paged attention over the cache into {@code attn}. A step of one
 * token takes one kernel for both where {@link AttentionKernels#fusedRope} is on and the head dim allows ({@link
 * AttentionKernels#launchWithRope}); every other step launches {@code tl_qkv_rope}, then the attention (tensor-core
 * tiles for prefill runs where the step has them). Owns the rotated queries and the key slices' workspace.
 */
final class AttentionBlock {
    private final ModelKernels kernels;
    private final RankWeights weights;
    private final StepInputs inputs;
    private final KvCache kv;
    private final RankModel.Dims dims;
    private final DType dt;
    private final int hq;
    private final int hk;
    private final int hd;
    private final float scale;
    private final long qkv;
    private final long attn;
    private final long q;
    private final long workspace;

    /**
     * Allocates the queries ({@code maxTokens} rows) and the slices' workspace (zeroed: the fused combine's counters
     * start at zero, {@link AttentionSlices#TICKETS_BYTES}) under {@code tag}; {@code qkv} and {@code attn} are the
     * rank's projection buffers it reads and writes.
     */
    AttentionBlock(
            DeviceMemory mem,
            String tag,
            ModelKernels kernels,
            RankWeights weights,
            StepInputs inputs,
            KvCache kv,
            RankModel.Dims dims,
            DType dt,
            int hq,
            int hk,
            int hd,
            long qkv,
            long attn) {
        this.kernels = kernels;
        this.weights = weights;
        this.inputs = inputs;
        this.kv = kv;
        this.dims = dims;
        this.dt = dt;
        this.hq = hq;
        this.hk = hk;
        this.hd = hd;
        this.scale = (float) (1.0 / Math.sqrt(hd));
        this.qkv = qkv;
        this.attn = attn;
        this.q = Cuda.address(mem.alloc(tag, "q", dt.bytes() * (long) dims.maxTokens() * hq * hd, true));
        long wsBytes = AttentionSlices.workspaceBytes(hq, hk, hd);
        this.workspace = wsBytes > 0 ? Cuda.address(mem.alloc(tag, "attention slices", wsBytes, true)) : 0;
    }

    /**
     * Whether a step of {@code n} tokens and {@code numTiles} prefill tiles takes {@link AttentionKernels#launchWithRope}
     * ({@code on}: {@link AttentionKernels#fusedRope}): a step of one token (it is its sequence's only one, so no token
     * of the step reads a key another one writes) at a head dim the split-key kernel takes.
     */
    static boolean fusesRope(int n, int numTiles, boolean on, int hq, int hk, int hd) {
        return on && n == 1 && numTiles == 0 && AttentionSlices.splitGroup(hq / hk, hd) != 0;
    }

    /**
     * Layer {@code l}'s attention for a step of {@code n} tokens whose {@link AttentionPlan} has {@code numTiles} tiles
     * and {@code numRest} tokens left to the split-key kernel (inputs already uploaded); {@code mark} names what was
     * enqueued.
     */
    void forward(
            int l, int n, int numTiles, int numRest, float eps, CUstream s, java.util.function.Consumer<String> mark) {
        String p = "layers." + l + ".";
        long positions = inputs.device(StepInputs.Buf.POSITIONS);
        long slots = inputs.device(StepInputs.Buf.SLOTS);
        long tokenRow = inputs.device(StepInputs.Buf.TOKEN_ROW);
        long tables = inputs.device(StepInputs.Buf.TABLES);
        long bias = weights.getOrZero(p + "qkv_bias");
        long qNorm = weights.getOrZero(p + "q_norm");
        long kNorm = weights.getOrZero(p + "k_norm");
        AttentionKernels ak = kernels.attentionKernels();
        if (fusesRope(n, numTiles, ak.fusedRope(), hq, hk, hd)) {
            ak.launchWithRope(
                    dt,
                    new AttentionKernels.Rope(qkv, bias, qNorm, kNorm, eps, weights.cos(), weights.sin(), slots),
                    kv.k(l),
                    kv.v(l),
                    tables,
                    tokenRow,
                    positions,
                    dims.maxBlocksPerSeq(),
                    dims.blockSize(),
                    attn,
                    workspace,
                    n,
                    hq,
                    hk,
                    hd,
                    scale,
                    kv.scales(l),
                    s);
            mark.accept("rope+kv write+attention");
            return;
        }
        kernels.qkvRope(
                dt,
                qkv,
                bias,
                qNorm,
                kNorm,
                eps,
                weights.cos(),
                weights.sin(),
                positions,
                slots,
                q,
                kv.k(l),
                kv.v(l),
                n,
                hq,
                hk,
                hd,
                kv.scales(l),
                s);
        mark.accept("rope+kv write");
        kernels.attention(
                dt,
                q,
                kv.k(l),
                kv.v(l),
                tables,
                tokenRow,
                positions,
                dims.maxBlocksPerSeq(),
                dims.blockSize(),
                attn,
                workspace,
                inputs.device(StepInputs.Buf.ATTN_TILES),
                numTiles,
                inputs.device(StepInputs.Buf.ATTN_REST),
                numRest,
                n,
                hq,
                hk,
                hd,
                scale,
                kv.scales(l),
                s);
        mark.accept("attention");
    }
}
