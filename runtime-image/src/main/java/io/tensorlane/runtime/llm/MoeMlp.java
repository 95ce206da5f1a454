package io.tensorlane.runtime.llm;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.model.MoeSpec;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;

/**
 * A Mixture-of-Experts MLP on one rank, every expert tensor-parallel inside (gate/up by intermediate rows, down by
 * intermediate columns, the router replicated), so the layer ends in the same allreduce as a dense one. The router's
 * logits come from cuBLAS (fp32 out); softmax, top-k and the renormalisation run on the GPU ({@code tl_moe_route});
 * each (token, slot) pair's gate/up reads only its expert's rows ({@code tl_moe_gate_up}), SwiGLU runs over the pairs,
 * and {@code tl_moe_down} sums each token's k down projections with their router weights. No host round trip: decode
 * steps replay in CUDA graphs as dense ones do.
 */
final class MoeMlp implements MlpBlock {
    /**
     * Scratch shared by every MoE layer of a rank, for up to {@code tokens} tokens; the expert ids have one slice per MoE
     * layer ({@link #ids(int)}: the step's routing stays readable after it, {@link RoutingDump}).
     */
    record Buffers(long logits, CUdeviceptr ids, long idsPerLayerBytes, long weights, long gateUp, long act) {
        static Buffers allocate(DeviceMemory mem, String phase, DType dt, int tokens, MoeSpec moe, int interPerRank) {
            long pairs = (long) tokens * moe.topK();
            long e = dt.bytes();
            return new Buffers(
                    addr(mem, phase, "router logits", 4L * tokens * moe.experts()),
                    mem.alloc(phase, "expert ids", 4L * pairs * moe.moeLayers().size(), true),
                    4L * pairs,
                    addr(mem, phase, "expert weights", 4L * pairs),
                    addr(mem, phase, "expert gate/up", e * pairs * 2 * interPerRank),
                    addr(mem, phase, "expert act", e * pairs * interPerRank));
        }

        /** The ids of the {@code slot}-th MoE layer. */
        CUdeviceptr ids(int slot) {
            return ids.withByteOffset(slot * idsPerLayerBytes);
        }

        private static long addr(DeviceMemory mem, String phase, String what, long bytes) {
            return Cuda.address(mem.alloc(phase, what, bytes, true));
        }
    }

    private final ModelKernels kernels;
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

    /**
     * @param inter each expert's intermediate columns on this rank
     * @param router [experts, hidden]; gateUpW [experts x 2 inter, hidden]; downW [experts x hidden, inter] (device
     *     addresses, {@link io.tensorlane.runtime.model.ShardPlan}'s stacking)
     * @param slot which MoE layer this is (its slice of the ids)
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
            int slot) {
        this.kernels = kernels;
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
    }

    @Override
    public void forward(int n, long xn, long out, CUstream s, OpMarks mark) {
        int experts = moe.experts();
        int k = moe.topK();
        blas.linear(dt, xn, router, buf.logits(), DType.fp32, n, hidden, experts, experts);
        mark.mark("gemm router");
        kernels.moeRoute(buf.logits(), n, experts, k, moe.normTopK(), ids, buf.weights(), s);
        mark.mark("moe route");
        kernels.moeGateUp(dt, xn, gateUpW, buf.gateUp(), ids, n, k, hidden, 2 * inter, experts, s);
        mark.mark("moe gate_up");
        kernels.siluMul(dt, buf.gateUp(), buf.act(), n * k, inter, s);
        mark.mark("silu*up");
        kernels.moeDown(dt, buf.act(), downW, out, ids, buf.weights(), n, k, inter, hidden, experts, s);
        mark.mark("moe down");
    }
}
