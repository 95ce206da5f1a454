package io.tensorlane.runtime.llm;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
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
 * <p>Steps of at most {@link Buffers#pairTokens} tokens (every decode step) stay on the device: each (token, slot)
 * pair's gate/up and down read only its expert's rows, and each token's k rows are weighted and summed; no host round
 * trip, so they replay in CUDA graphs as dense steps do. Longer steps (prefill) group the pairs by expert on the GPU,
 * read the groups' sizes back (one synchronisation a layer: these steps are never captured), and run one cuBLAS GEMM
 * per expert and projection on the gathered rows (tensor cores), then un-permute.
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
            int pairTokens,
            long pairDown,
            long counts,
            CUdeviceptr offsets,
            long sortedTok,
            long inv,
            long rows,
            CUdeviceptr pointers) {
        /** {@code pairTokens}: the longest step kept on the device (at least the decode steps' rows). */
        static Buffers allocate(
                DeviceMemory mem,
                String phase,
                DType dt,
                int tokens,
                int pairTokens,
                MoeSpec moe,
                int hidden,
                int inter) {
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
                    small,
                    addr(mem, phase, "expert down (fp32)", 4L * small * moe.topK() * hidden),
                    addr(mem, phase, "expert counts", 4L * moe.experts()),
                    mem.alloc(phase, "expert offsets", 4L * (moe.experts() + 1), true),
                    addr(mem, phase, "sorted tokens", 4L * pairs),
                    addr(mem, phase, "pair order", 4L * pairs),
                    tokens > small ? addr(mem, phase, "expert rows", e * pairs * hidden) : 0,
                    mem.alloc(phase, "grouped GEMM pointers", 8L * 3 * moe.experts(), true));
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
    private final long gateUpW;
    private final long downW;
    private final Buffers buf;
    private final long ids;
    private final int[] offsets;
    /** Per active expert of a grouped step: its rows, and the w / x / y addresses (three blocks of experts entries). */
    private final int[] tokens;

    private final long[] ptrs;
    /** Whether cuBLAS's grouped GEMM is used ({@link KernelChoices#moeGroupedGemm}; cleared when cuBLAS has none). */
    private boolean groupedGemm;

    /**
     * @param inter each expert's intermediate columns on this rank
     * @param router [experts, hidden]; gateUpW [experts x 2 inter, hidden]; downW [experts x hidden, inter] (device
     *     addresses, {@link io.tensorlane.runtime.model.ShardPlan}'s stacking)
     * @param slot which MoE layer this is (its slice of the ids)
     * @param groupedGemm long steps through cuBLAS's grouped GEMM ({@link KernelChoices#MOE_GROUPED_GEMM_ENV})
     */
    MoeMlp(
            ModelKernels kernels,
            Cublas blas,
            DType dt,
            MoeSpec moe,
            int hidden,
            int inter,
            long router,
            long gateUpW,
            long downW,
            Buffers buf,
            int slot,
            boolean groupedGemm) {
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
        this.groupedGemm = groupedGemm;
        this.offsets = new int[moe.experts() + 1];
        this.tokens = new int[moe.experts()];
        this.ptrs = new long[3 * moe.experts()];
    }

    @Override
    public void forward(int n, long xn, long out, CUstream s, OpMarks mark) {
        int experts = moe.experts();
        int k = moe.topK();
        blas.linear(dt, xn, router, buf.logits(), DType.fp32, n, hidden, experts, experts);
        mark.mark("gemm router");
        kernels.route(buf.logits(), n, experts, k, moe.normTopK(), ids, buf.weights(), s);
        mark.mark("moe route");
        if (n <= buf.pairTokens()) {
            kernels.gateUp(dt, xn, gateUpW, buf.gateUp(), ids, n, k, hidden, 2 * inter, s);
            mark.mark("moe gate_up");
            model.siluMul(dt, buf.gateUp(), buf.act(), n * k, inter, s);
            mark.mark("silu*up");
            kernels.down(dt, buf.act(), downW, buf.pairDown(), ids, n * k, inter, hidden, s);
            mark.mark("moe down");
            kernels.combine(dt, buf.pairDown(), 0, buf.weights(), out, n, k, hidden, s);
            mark.mark("moe combine");
        } else {
            grouped(n, xn, out, s, mark);
        }
    }

    /**
     * y rows [offsets[e], offsets[e+1]) = x rows of the same range · expert e's weight (at {@code w + e * wElems}
     * elements, [out, in]) for every expert with rows: a GEMM per expert, or with {@link KernelChoices#moeGroupedGemm} one grouped
     * cuBLAS call (the pointers uploaded first, on the stream; a cuBLAS without it falls back).
     */
    private void perExpert(long w, long wElems, long x, int in, long y, int out, CUstream s) {
        long e = dt.bytes();
        int groups = 0;
        for (int x0 = 0; x0 < moe.experts(); x0++) {
            int rows = offsets[x0 + 1] - offsets[x0];
            if (rows > 0) {
                tokens[groups] = rows;
                ptrs[groups] = w + x0 * wElems * e;
                ptrs[moe.experts() + groups] = x + (long) offsets[x0] * in * e;
                ptrs[2 * moe.experts() + groups] = y + (long) offsets[x0] * out * e;
                groups++;
            }
        }
        if (groupedGemm) {
            long[] packed = new long[3 * groups];
            for (int i = 0; i < 3; i++) {
                System.arraycopy(ptrs, i * moe.experts(), packed, i * groups, groups);
            }
            Cuda.check(
                    cuMemcpyHtoDAsync(buf.pointers(), Pointer.to(packed), 8L * packed.length, s),
                    "cuMemcpyHtoDAsync(grouped GEMM pointers)");
            if (blas.groupedLinear(dt, groups, tokens, in, out, Cuda.address(buf.pointers()))) {
                return;
            }
            groupedGemm = false; // this cuBLAS has no grouped GEMM: one per expert from now on
        }
        for (int i = 0; i < groups; i++) {
            blas.linear(dt, ptrs[moe.experts() + i], ptrs[i], ptrs[2 * moe.experts() + i], dt, tokens[i], in, out, out);
        }
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
        perExpert(gateUpW, 2L * inter * hidden, buf.rows(), hidden, buf.gateUp(), 2 * inter, s);
        mark.mark("moe gate_up (grouped)");
        model.siluMul(dt, buf.gateUp(), buf.act(), pairs, inter, s);
        mark.mark("silu*up");
        perExpert(downW, (long) hidden * inter, buf.act(), inter, buf.rows(), hidden, s);
        mark.mark("moe down (grouped)");
        kernels.combine(dt, buf.rows(), buf.inv(), buf.weights(), out, n, k, hidden, s);
        mark.mark("moe combine");
    }
}
