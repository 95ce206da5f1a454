package io.tensorlane.runtime.llm;

import io.tensorlane.contract.DType;
import jcuda.driver.CUstream;

/** SwiGLU: gate/up fused in one linear, silu(gate) * up, down; the Llama MLP of every dense layer. */
final class DenseMlp implements MlpBlock {
    private final Linears lin;
    private final ModelKernels kernels;
    private final DType dt;
    private final String prefix;
    private final int hidden;
    private final int inter;
    private final long gateUp;
    private final long act;

    /** Weights {@code prefix + "gate_up"} and {@code prefix + "down"}; scratch gateUp [t, 2 inter], act [t, inter]. */
    DenseMlp(Linears lin, ModelKernels kernels, DType dt, String prefix, int hidden, int inter, long gateUp, long act) {
        this.lin = lin;
        this.kernels = kernels;
        this.dt = dt;
        this.prefix = prefix;
        this.hidden = hidden;
        this.inter = inter;
        this.gateUp = gateUp;
        this.act = act;
    }

    @Override
    public void forward(int n, boolean shortChunks, long xn, long out, CUstream s, OpMarks mark) {
        lin.linear(GemvPolicy.Linear.GATE_UP, xn, prefix + "gate_up", gateUp, n, hidden, 2 * inter, s);
        mark.mark("gemm gate_up");
        kernels.siluMul(dt, gateUp, act, n, inter, s);
        mark.mark("silu*up");
        lin.linear(GemvPolicy.Linear.DOWN, act, prefix + "down", out, n, inter, hidden, s);
        mark.mark("gemm down");
    }

    @Override
    public String gateUpKey() {
        return prefix + "gate_up";
    }

    @Override
    public boolean fusable() {
        return lin.fusable(GemvPolicy.Linear.GATE_UP, prefix + "gate_up", hidden)
                && lin.fusable(GemvPolicy.Linear.DOWN, prefix + "down", inter);
    }

    @Override
    public void forwardFused(long residual, long gamma, float eps, CUstream s, OpMarks mark) {
        lin.normLinear(residual, gamma, eps, prefix + "gate_up", act, hidden, inter, true, s);
        mark.mark("gemm gate_up+norm+silu");
        lin.residualLinear(act, prefix + "down", residual, inter, hidden, s);
        mark.mark("gemm down+residual");
    }
}
