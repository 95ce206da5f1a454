package io.tensorlane.runtime.llm;

import static io.tensorlane.runtime.engine.KernelArgs.i;
import static io.tensorlane.runtime.engine.KernelArgs.p;

import io.tensorlane.contract.DType;
import io.tensorlane.kernels.Kernels;
import io.tensorlane.runtime.model.MoeSpec;
import jcuda.driver.CUfunction;
import jcuda.driver.CUstream;

/**
 * The Mixture-of-Experts kernels of {@link ModelKernels} (tl_moe.cuh): routing, and the expert linears that read only
 * the routed experts' rows. Launch shapes and preconditions as documented there; launches go through the owning
 * {@link ModelKernels}.
 */
final class MoeKernels {
    static final int ROUTE_WARPS = 4;
    /** Output rows per block of the expert linears (one warp each): tl_model.cu's kGemvWarps. */
    static final int WARPS = GemvKernels.WARPS;

    private final ModelKernels k;

    MoeKernels(ModelKernels k) {
        this.k = k;
    }

    void route(
            CUfunction f, long logits, int n, int experts, int topK, boolean norm, long ids, long weights, CUstream s) {
        ModelKernels.positive("experts", experts);
        if (experts > MoeSpec.MAX_EXPERTS || topK < 1 || topK > Math.min(experts, MoeSpec.MAX_TOP_K)) {
            throw new IllegalArgumentException("moe route: " + experts + " experts (at most " + MoeSpec.MAX_EXPERTS
                    + "), top-k " + topK + " (1.." + MoeSpec.MAX_TOP_K + ", at most the experts)");
        }
        if (n <= 0) {
            return;
        }
        k.launch(
                f,
                (n + ROUTE_WARPS - 1) / ROUTE_WARPS,
                1,
                ROUTE_WARPS * 32,
                s,
                Kernels.MOE_ROUTE_KERNEL,
                p(logits),
                i(n),
                i(experts),
                i(topK),
                i(norm ? 1 : 0),
                p(ids),
                p(weights));
    }

    /** y[n*k, out] = the pairs' expert rows of w [experts, out, in] · their token's x [n, in]. */
    void gateUp(DType t, long x, long w, long y, long ids, int n, int topK, int in, int out, CUstream s) {
        shape("moe gate_up", x, w, in, out);
        if (n <= 0) {
            return;
        }
        k.launch(
                k.fn(t, "tl_moe_gate_up"),
                Math.multiplyExact(n, topK),
                (out + WARPS - 1) / WARPS,
                WARPS * 32,
                s,
                "tl_moe_gate_up",
                p(x),
                p(w),
                p(y),
                p(ids),
                i(topK),
                i(in),
                i(out));
    }

    /** y[n, out] = sum over each token's k slots of weight x (its expert's rows of w [experts, out, in] · act row). */
    void down(DType t, long act, long w, long y, long ids, long weights, int n, int topK, int in, int out, CUstream s) {
        shape("moe down", act, w, in, out);
        if (n <= 0) {
            return;
        }
        k.launch(
                k.fn(t, "tl_moe_down"),
                n,
                (out + WARPS - 1) / WARPS,
                WARPS * 32,
                s,
                "tl_moe_down",
                p(act),
                p(w),
                p(y),
                p(ids),
                p(weights),
                i(topK),
                i(in),
                i(out));
    }

    /** Rows of whole 16-byte chunks take vector loads, which need 16-byte aligned bases. */
    private static void shape(String what, long x, long w, int in, int out) {
        ModelKernels.positive("in", in);
        ModelKernels.positive("out", out);
        if (in % 8 == 0 && ((x & 15) != 0 || (w & 15) != 0)) {
            throw new IllegalArgumentException(what + ": rows of in % 8 == 0 need 16-byte aligned x and w (x=0x"
                    + Long.toHexString(x) + ", w=0x" + Long.toHexString(w) + ")");
        }
    }
}
