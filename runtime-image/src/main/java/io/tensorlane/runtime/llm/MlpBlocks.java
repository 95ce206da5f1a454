package io.tensorlane.runtime.llm;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.model.ModelConfig;
import io.tensorlane.runtime.model.ShardPlan;
import io.tensorlane.runtime.model.TpLayout;
import jcuda.Pointer;

/**
 * One rank's MLP half of every decoder layer: the scratch the blocks share (dense gate/up and act when some layer is
 * dense, {@link MoeMlp.Buffers} when some layer is MoE) and, once the weights are on the GPU, one {@link MlpBlock} per
 * layer as the config says ({@link ModelConfig#isMoe}).
 */
final class MlpBlocks {
    private final ModelConfig cfg;
    private final TpLayout tpl;
    private final DType dt;
    private final long gateUp;
    private final long act;
    private final MoeMlp.Buffers moe;
    private final MlpBlock[] blocks;
    private final KernelChoices choices;

    /**
     * Scratch for steps of up to {@code tokens} tokens; {@code decodeRows} and {@code decodeTokens}: the longest steps MoE keeps on the GPU (of any shape, of short chunks);
     * {@code choices}: MoE's long steps through cuBLAS's grouped GEMM ({@link KernelChoices#moeGroupedGemm}), FP8
     * experts' on FP8 tensor cores ({@link KernelChoices#fp8TensorMinTokens} not 0, {@link KernelChoices#moeFp8Gemm},
     * {@link Fp8ExpertGemm#serves}), which MoE steps take the fused decode kernels ({@link
     * KernelChoices#moeFusedDecode}).
     */
    MlpBlocks(
            DeviceMemory mem,
            String phase,
            ModelConfig cfg,
            TpLayout tpl,
            DType dt,
            int tokens,
            int decodeRows,
            int decodeTokens,
            KernelChoices choices) {
        this.choices = choices;
        this.cfg = cfg;
        this.tpl = tpl;
        this.dt = dt;
        long e = dt.bytes();
        int inter = tpl.intermediatePerRank();
        boolean dense = cfg.denseLayers() > 0;
        gateUp = dense ? Cuda.address(mem.alloc(phase, "gate/up", e * tokens * 2L * inter, true)) : 0;
        act = dense ? Cuda.address(mem.alloc(phase, "mlp act", e * tokens * inter, true)) : 0;
        moe = cfg.moe() != null
                ? MoeMlp.Buffers.allocate(
                        mem,
                        phase,
                        dt,
                        tokens,
                        decodeRows,
                        decodeTokens,
                        cfg.moe(),
                        cfg.hiddenSize(),
                        tpl.expertIntermediatePerRank(),
                        ShardPlan.fp8Experts(cfg),
                        ShardPlan.fp8Experts(cfg)
                                && choices.fp8TensorMinTokens() > 0
                                && choices.moeFp8Gemm()
                                && Fp8ExpertGemm.serves(cfg.hiddenSize(), tpl.expertIntermediatePerRank()))
                : null;
        blocks = new MlpBlock[cfg.numLayers()];
    }

    /** Composes each layer's block over the uploaded weights. */
    void build(RankWeights weights, Linears lin, ModelKernels kernels, Cublas blas) {
        int hidden = cfg.hiddenSize();
        for (int l = 0; l < cfg.numLayers(); l++) {
            String p = "layers." + l + ".";
            blocks[l] = cfg.isMoe(l)
                    ? new MoeMlp(
                            kernels,
                            blas,
                            dt,
                            cfg.moe(),
                            hidden,
                            tpl.expertIntermediatePerRank(),
                            weights.get(p + "router"),
                            weights.weight(p + "experts_gate_up"),
                            weights.weight(p + "experts_down"),
                            moe,
                            cfg.moe().moeLayers().indexOf(l),
                            choices.moeGroupedGemm(),
                            choices.moeFusedDecode())
                    : new DenseMlp(lin, kernels, dt, p, hidden, tpl.intermediatePerRank(), gateUp, act);
        }
    }

    /** Whether every layer's block takes the fused one-token path ({@link MlpBlock#fusable}). */
    boolean allFusable() {
        for (MlpBlock b : blocks) {
            if (!b.fusable()) {
                return false;
            }
        }
        return true;
    }

    MlpBlock layer(int l) {
        return blocks[l];
    }

    /** The last step's experts of its {@code n} tokens ([MoE layers][n][top-k]; after the stream finished). */
    int[] routing(int n) {
        int layers = cfg.moe().moeLayers().size();
        int k = cfg.moe().topK();
        int[] all = new int[layers * n * k];
        int[] part = new int[n * k];
        for (int l = 0; l < layers; l++) {
            Cuda.check(cuMemcpyDtoH(Pointer.to(part), moe.ids(l), 4L * n * k), "cuMemcpyDtoH(expert ids)");
            System.arraycopy(part, 0, all, l * n * k, n * k);
        }
        return all;
    }
}
