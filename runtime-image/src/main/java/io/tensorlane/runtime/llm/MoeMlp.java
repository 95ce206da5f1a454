package io.tensorlane.runtime.llm;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.model.MoeSpec;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;

/**
 * A Mixture-of-Experts MLP on one rank, every expert tensor-parallel inside (gate/up by intermediate rows, down by
 * intermediate columns, the router replicated), so the layer ends in the same allreduce as a dense one. The router's
 * logits come from cuBLAS (fp32 out); softmax, top-k and the renormalisation run on the GPU ({@code tl_moe_route}).
 *
 * <p>Decode and verify steps ({@link MoeDecodePath#deviceLimit}) stay on the device: each (token, slot)
 * pair's gate/up and down read only its expert's rows, and each token's k rows are weighted and summed; no host round
 * trip, so they replay in CUDA graphs as dense steps do. Longer steps (prefill) group the pairs by expert on the GPU,
 * read the groups' sizes back (one synchronisation a layer: these steps are never captured), and run one cuBLAS GEMM
 * per expert and projection on the gathered rows (tensor cores; {@link ExpertGemms}; FP8 experts in one FP8
 * tensor-core launch a projection, {@link Fp8ExpertGemm}, or with {@link KernelChoices#MOE_FP8_GEMM_ENV} off
 * dequantized one at a time), then un-permute. FP8 experts (e4m3 with block or per-row scales) take the FP8 pair
 * kernels in short steps (tl_moe_fp8.cuh: only the routed experts' bytes are read, dequantized in registers). With
 * {@link KernelChoices#moeFusedDecode} the short steps take {@link MoeDecodeKernels} instead (three launches a layer
 * instead of six: {@link MoeDecodePath}).
 */
final class MoeMlp implements MlpBlock {
    /**
     * Scratch shared by every MoE layer of a rank, for up to {@code tokens} tokens; the expert ids have one slice per MoE
     * layer ({@link #ids(int)}: the step's routing stays readable after it, {@link RoutingDump}).
     */
    record Buffers(
            long logits,
            CUdeviceptr ids,
            long idsPerLayerBytes,
            long weights,
            long gateUp,
            long act,
            int decodeRows,
            int pairTokens,
            long pairDown,
            long counts,
            CUdeviceptr offsets,
            long sortedTok,
            long inv,
            long rows,
            CUdeviceptr pointers,
            long expertScratch,
            Fp8ExpertGemm.Buffers fp8Gemm,
            long routerCounter,
            long normed) {
        /**
         * {@code decodeRows}: the longest step of any shape kept on the device (one token a sequence and the spare row);
         * {@code pairTokens}: the longest one of short chunks kept there (the verify steps' tokens; {@link
         * MoeDecodePath#deviceLimit}); {@code fp8Experts}:
         * the experts are FP8, so long steps run them on FP8 tensor cores ({@code fp8Gemm}: {@link Fp8ExpertGemm}'s
         * scratch) or dequantize one expert projection at a time into a scratch ({@link ExpertGemms}).
         */
        static Buffers allocate(
                DeviceMemory mem,
                String phase,
                DType dt,
                int tokens,
                int decodeRows,
                int pairTokens,
                MoeSpec moe,
                int hidden,
                int inter,
                boolean fp8Experts,
                boolean fp8Gemm) {
            long pairs = (long) tokens * moe.topK();
            long e = dt.bytes();
            int small = Math.min(tokens, pairTokens);
            return new Buffers(
                    addr(mem, phase, "router logits", 4L * tokens * moe.experts()),
                    mem.alloc(phase, "expert ids", 4L * pairs * moe.moeLayers().size(), true),
                    4L * pairs,
                    addr(mem, phase, "expert weights", 4L * pairs),
                    addr(mem, phase, "expert gate/up", e * pairs * 2 * inter),
                    addr(mem, phase, "expert act", e * pairs * inter),
                    Math.min(decodeRows, small),
                    small,
                    addr(mem, phase, "expert down (fp32)", 4L * small * moe.topK() * hidden),
                    addr(mem, phase, "expert counts", 4L * moe.experts()),
                    mem.alloc(phase, "expert offsets", 4L * (moe.experts() + 1), true),
                    addr(mem, phase, "sorted tokens", 4L * pairs),
                    addr(mem, phase, "pair order", 4L * pairs),
                    tokens > small ? addr(mem, phase, "expert rows", e * pairs * hidden) : 0,
                    mem.alloc(phase, "grouped GEMM pointers", 8L * 3 * moe.experts(), true),
                    fp8Experts && tokens > small && !fp8Gemm
                            ? addr(mem, phase, "fp8 expert dequantized", e * 2L * inter * hidden)
                            : 0,
                    fp8Experts && tokens > small && fp8Gemm
                            ? Fp8ExpertGemm.Buffers.allocate(
                                    mem, phase, Math.toIntExact(pairs), Math.max(hidden, inter), moe.experts())
                            : null,
                    addr(mem, phase, "router counter", 4),
                    addr(mem, phase, "normed row (fused step)", e * hidden));
        }

        /** The ids of the {@code slot}-th MoE layer. */
        CUdeviceptr ids(int slot) {
            return ids.withByteOffset(slot * idsPerLayerBytes);
        }

        private static long addr(DeviceMemory mem, String phase, String what, long bytes) {
            return Cuda.address(mem.alloc(phase, what, bytes, true));
        }
    }

    private final MoeKernels kernels;
    private final ModelKernels model;
    private final Cublas blas;
    private final DType dt;
    private final MoeSpec moe;
    private final int hidden;
    private final int inter;
    private final long router;
    private final RankWeights.Weight gateUpW;
    private final RankWeights.Weight downW;
    private final Buffers buf;
    private final long ids;
    private final int[] offsets;
    private final ExpertGemms gemms;
    /** The longest step through {@link MoeDecodeKernels} ({@link MoeFusedDecode#maxTokens}). */
    private final int fusedMaxTokens;
    /** One-token steps fold the residual stream through this block ({@link MoeFusedDecode#foldsResidual}). */
    private final boolean foldsResidual;
    /**
     * A folded step's RMSNorm and router in one kernel ({@link MoeFusedDecode#foldsNorm}, a row that fits the kernel's
     * shared memory).
     */
    private final boolean foldsNorm;

    /**
     * @param inter each expert's intermediate columns on this rank
     * @param router [experts, hidden] (device address); gateUpW [experts x 2 inter, hidden]; downW [experts x hidden,
     *     inter] ({@link io.tensorlane.runtime.model.ShardPlan}'s stacking; in the model's dtype or FP8 with scales)
     * @param slot which MoE layer this is (its slice of the ids)
     * @param groupedGemm long steps through cuBLAS's grouped GEMM ({@link KernelChoices#MOE_GROUPED_GEMM_ENV})
     * @param fusedDecode which steps go through {@link MoeDecodeKernels} ({@link KernelChoices#moeFusedDecode})
     */
    MoeMlp(
            ModelKernels kernels,
            Cublas blas,
            DType dt,
            MoeSpec moe,
            int hidden,
            int inter,
            long router,
            RankWeights.Weight gateUpW,
            RankWeights.Weight downW,
            Buffers buf,
            int slot,
            boolean groupedGemm,
            MoeFusedDecode fusedDecode) {
        this.model = kernels;
        this.kernels = kernels.moe();
        this.blas = blas;
        this.dt = dt;
        this.moe = moe;
        this.hidden = hidden;
        this.inter = inter;
        this.router = router;
        this.gateUpW = gateUpW;
        this.downW = downW;
        this.buf = buf;
        this.ids = Cuda.address(buf.ids(slot));
        this.offsets = new int[moe.experts() + 1];
        this.fusedMaxTokens = fusedDecode.maxTokens(gateUpW.type().fp8());
        this.foldsResidual = fusedDecode.foldsResidual();
        this.foldsNorm = fusedDecode.foldsNorm() && hidden <= FusedGemvKernels.MAX_IN;
        this.gemms = new ExpertGemms(
                kernels,
                blas,
                dt,
                moe.experts(),
                buf.expertScratch(),
                buf.pointers(),
                groupedGemm,
                buf.fp8Gemm() != null ? new Fp8ExpertGemm(kernels, dt, moe.experts(), buf.fp8Gemm()) : null);
    }

    @Override
    public void forward(int n, boolean shortChunks, long xn, long out, CUstream s, OpMarks mark) {
        int onDevice = MoeDecodePath.deviceLimit(shortChunks, buf.decodeRows(), buf.pairTokens());
        MoeDecodePath path = MoeDecodePath.of(fusedMaxTokens, n, onDevice);
        route(n, xn, path, s, mark);
        if (path.fusedPairs()) {
            fusedPairs(n, xn, out, false, s, mark);
        } else if (path.pairs()) {
            pairs(n, xn, out, s, mark);
        } else {
            grouped(n, xn, out, s, mark);
        }
    }

    @Override
    public boolean fusable() {
        return foldsResidual && fusesOneToken(fusedMaxTokens, buf.pairTokens());
    }

    /**
     * Whether a one-token step takes the fused router and pairs (so the block can fold the residual stream, {@code
     * step}: {@link MoeFusedDecode#foldsResidual}), for the longest fused step and the longest step kept on the device.
     */
    static boolean fusesOneToken(int fusedMaxTokens, int pairTokens) {
        MoeDecodePath one = MoeDecodePath.of(fusedMaxTokens, 1, pairTokens);
        return one.fusedRouter() && one.fusedPairs();
    }

    /** RMSNorm(residual) x gamma into the block's row, the router and gate/up over it, down added to the residual. */
    @Override
    public void forwardFused(long residual, long gamma, float eps, CUstream s, OpMarks mark) {
        if (foldsNorm) {
            kernels.decode()
                    .routerNorm(
                            dt,
                            residual,
                            gamma,
                            eps,
                            buf.normed(),
                            router,
                            buf.logits(),
                            buf.routerCounter(),
                            hidden,
                            moe.experts(),
                            moe.topK(),
                            moe.normTopK(),
                            ids,
                            buf.weights(),
                            s);
            mark.mark("moe norm+router");
        } else {
            model.addRmsNorm(dt, residual, 0, gamma, buf.normed(), 1, hidden, eps, 2, s);
            mark.mark("norm");
            route(1, buf.normed(), MoeDecodePath.of(fusedMaxTokens, 1, buf.pairTokens()), s, mark);
        }
        fusedPairs(1, buf.normed(), residual, true, s, mark);
    }

    /** The router over xn: the step's expert ids and weights. */
    private void route(int n, long xn, MoeDecodePath path, CUstream s, OpMarks mark) {
        int experts = moe.experts();
        int k = moe.topK();
        if (path.fusedRouter()) {
            kernels.decode()
                    .router(
                            dt,
                            xn,
                            router,
                            buf.logits(),
                            buf.routerCounter(),
                            n,
                            hidden,
                            experts,
                            k,
                            moe.normTopK(),
                            ids,
                            buf.weights(),
                            s);
            mark.mark("moe router");
        } else {
            blas.linear(dt, xn, router, buf.logits(), DType.fp32, n, hidden, experts, experts);
            mark.mark("gemm router");
            kernels.route(buf.logits(), n, experts, k, moe.normTopK(), ids, buf.weights(), s);
            mark.mark("moe route");
        }
    }

    /**
     * gate/up with the silu epilogue into act, then down with each token's weighted sum into {@code out} (T), or
     * ({@code residual}) added to the fp32 residual stream at {@code out}.
     */
    private void fusedPairs(int n, long xn, long out, boolean residual, CUstream s, OpMarks mark) {
        int k = moe.topK();
        MoeDecodeKernels d = kernels.decode();
        if (gateUpW.type().fp8()) {
            d.gateUpSiluFp8(
                    dt,
                    gateUpW.type(),
                    xn,
                    gateUpW.address(),
                    gateUpW.scales(),
                    buf.act(),
                    ids,
                    n,
                    k,
                    hidden,
                    inter,
                    s);
        } else {
            d.gateUpSilu(dt, xn, gateUpW.address(), buf.act(), ids, n, k, hidden, inter, s);
        }
        mark.mark("moe gate_up+silu");
        if (downW.type().fp8()) {
            d.downSumFp8(
                    dt,
                    downW.type(),
                    buf.act(),
                    downW.address(),
                    downW.scales(),
                    out,
                    residual,
                    ids,
                    buf.weights(),
                    n,
                    k,
                    inter,
                    hidden,
                    s);
        } else {
            d.downSum(dt, buf.act(), downW.address(), out, residual, ids, buf.weights(), n, k, inter, hidden, s);
        }
        mark.mark("moe down+sum");
    }

    /** Each pair's gate/up, silu, each pair's down (fp32), then each token's weighted sum. */
    private void pairs(int n, long xn, long out, CUstream s, OpMarks mark) {
        int k = moe.topK();
        if (gateUpW.type().fp8()) {
            kernels.gateUpFp8(
                    dt,
                    gateUpW.type(),
                    xn,
                    gateUpW.address(),
                    gateUpW.scales(),
                    buf.gateUp(),
                    ids,
                    n,
                    k,
                    hidden,
                    2 * inter,
                    s);
        } else {
            kernels.gateUp(dt, xn, gateUpW.address(), buf.gateUp(), ids, n, k, hidden, 2 * inter, s);
        }
        mark.mark("moe gate_up");
        model.siluMul(dt, buf.gateUp(), buf.act(), n * k, inter, s);
        mark.mark("silu*up");
        if (downW.type().fp8()) {
            kernels.downFp8(
                    dt,
                    downW.type(),
                    buf.act(),
                    downW.address(),
                    downW.scales(),
                    buf.pairDown(),
                    ids,
                    n * k,
                    inter,
                    hidden,
                    s);
        } else {
            kernels.down(dt, buf.act(), downW.address(), buf.pairDown(), ids, n * k, inter, hidden, s);
        }
        mark.mark("moe down");
        kernels.combine(dt, buf.pairDown(), 0, buf.weights(), out, n, k, hidden, s);
        mark.mark("moe combine");
    }

    /** The pairs grouped by expert, a cuBLAS GEMM per expert and projection, un-permuted into {@code out}. */
    private void grouped(int n, long xn, long out, CUstream s, OpMarks mark) {
        int experts = moe.experts();
        int k = moe.topK();
        int pairs = n * k;
        kernels.sort(ids, pairs, experts, k, buf.counts(), Cuda.address(buf.offsets()), buf.sortedTok(), buf.inv(), s);
        Cuda.check(
                cuMemcpyDtoHAsync(Pointer.to(offsets), buf.offsets(), 4L * (experts + 1), s),
                "cuMemcpyDtoHAsync(expert offsets)");
        Cuda.check(cuStreamSynchronize(s), "cuStreamSynchronize(expert offsets)");
        mark.mark("moe sort");
        model.gatherRows(dt, xn, buf.sortedTok(), buf.rows(), pairs, hidden, s);
        gemms.run(gateUpW, offsets, buf.rows(), hidden, buf.gateUp(), 2 * inter, s);
        mark.mark("moe gate_up (grouped)");
        model.siluMul(dt, buf.gateUp(), buf.act(), pairs, inter, s);
        mark.mark("silu*up");
        gemms.run(downW, offsets, buf.act(), inter, buf.rows(), hidden, s);
        mark.mark("moe down (grouped)");
        kernels.combine(dt, buf.rows(), buf.inv(), buf.weights(), out, n, k, hidden, s);
        mark.mark("moe combine");
    }
}
