package io.tensorlane.runtime.llm;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.engine.Rank;
import io.tensorlane.runtime.model.Checkpoint;
import io.tensorlane.runtime.model.DeviceTensor;
import io.tensorlane.runtime.model.KvScales;
import io.tensorlane.runtime.model.ModelConfig;
import io.tensorlane.runtime.model.TpLayout;
import io.tensorlane.runtime.sched.SamplingRows;
import io.tensorlane.runtime.sched.StepBatch;
import java.util.List;
import java.util.function.LongConsumer;
import jcuda.driver.CUdeviceptr;

/**
 * One rank's share of the model on its GPU: its weight shards, KV cache, activations, cuBLAS handle and kernels, and
 * the forward pass enqueued on the rank's stream. Everything here runs on the rank's worker thread.
 */
final class RankModel implements AutoCloseable {
    static final String WEIGHTS = "weights";
    /** The KV cache's allocation phase: the contract's, which the node simulator names when the caches do not fit. */
    static final String KV = io.tensorlane.contract.MemoryBudget.PHASE_KV_CACHE;

    static final String ACTIVATIONS = "activations";
    private static final long CUBLAS_WORKSPACE = 32L << 20;

    /**
     * Sizes every buffer is allocated for; {@code fp8Scratch}: elements of the largest FP8 weight, dequantized into a
     * scratch buffer of the model's dtype for the steps the FP8 GEMV does not take (0: no FP8 weights); {@code kvDtype}:
     * the KV cache's elements ({@link KvCache}); {@code maxDecodeTokens}: the longest step that carries no prompt chunk
     * (decode and verify steps, {@link EngineOptions#decodeTokens}), which MoE layers keep on the device.
     */
    record Dims(
            int maxTokens,
            int maxLogitRows,
            int maxRows,
            int maxDecodeTokens,
            int maxBlocksPerSeq,
            int blockSize,
            int maxPositions,
            long fp8Scratch,
            KvCacheDtype kvDtype) {}

    /**
     * How cuBLAS shares a GPU with virtual ranks. Their allreduce kernels spin on the same GPU, so a GEMM whose thread
     * blocks wait for each other (split-K/stream-K fix-ups, which need workspace) could wait for blocks that cannot be
     * scheduled: virtual ranks get no workspace and a multiprocessor target that excludes the peers' allreduce blocks.
     */
    record GemmShare(long workspaceBytes, int smCountTarget) {
        static final GemmShare OWN_GPU = new GemmShare(CUBLAS_WORKSPACE, 0);
    }

    final Rank rank;
    private OpTimer timer = OpTimer.OFF;

    final ModelConfig cfg;
    final TpLayout tpl;
    final DType dt;
    final Dims dims;
    final DeviceMemory mem;
    final ModelKernels kernels;
    final Cublas blas;
    private final int hq;
    private final int hk;
    private final int hd;
    private final int hidden;
    private final int vr;
    /** The step's int32 inputs (ids, positions, slots, ...) and the sampled ids, with their pinned host copy. */
    private final StepInputs inputs;
    /** This rank's weight shards and RoPE tables. */
    private final RankWeights weights;

    private final int samplingCapacity;
    /** Which linears of one-token steps take the GEMV kernel instead of cuBLAS. */
    private final GemvPolicy gemv;

    private final GemvMma gemvMma;
    /** The tensor-core prefill kernel (false: the split-key attention kernel for every token). */
    private final boolean tiledPrefill;
    /** The layer's allreduces and the norms after them. */
    private final RankReduce reduce;
    /** The one-token kernels with the residual stream folded in may be used ({@link KernelChoices#fusedGemv}). */
    private final boolean fusedGemv;
    /** One-token steps fold the residual stream into the linears (set once the weights are in: {@link Linears}). */
    private boolean fuseOneToken;

    private int numTiles;
    private int numRest;
    /** The uploaded step's: no sequence has {@link AttentionPlan#MIN_RUN} or more of its tokens ({@link MlpBlock}). */
    private boolean shortChunks;
    // activations
    final CUdeviceptr part;
    final CUdeviceptr red;
    private final long residual;
    private final long xn;
    private final long qkv;
    private final long attn;
    private final long xl;
    /** The linears of FP8 weights (null: the model has none). */
    private final Fp8Linear fp8;
    /** Every linear of the decoder, by weight key. */
    private Linears lin;
    /** Each layer's attention between its qkv and o projections. */
    private final AttentionBlock attention;
    /** Each layer's MLP block (dense or MoE) and their scratch; the blocks built once the weights are on the GPU. */
    private final MlpBlocks mlp;
    /**
     * What short steps captured into graphs prefetch toward L2 before each layer's attention ({@value
     * L2Prefetch#ENV}).
     */
    private final L2Prefetch l2 = L2Prefetch.fromEnv();
    /** {@link #l2}'s spans, a list a layer (none when off; set by {@link #loadWeights}). */
    private List<List<L2Prefetch.Span>> l2Spans = List.of();

    final RankLogits logits;
    /** The paged KV cache (its blocks allocated once the weights are in: {@link KvCache#allocate}). */
    final KvCache kv;

    RankModel(Rank rank, ModelConfig cfg, TpLayout tpl, DType dt, Dims dims, GemmShare share, KernelChoices choices) {
        this.rank = rank;
        this.gemv = choices.gemv();
        this.gemvMma = choices.gemvMma();
        this.tiledPrefill = choices.tiledPrefill();
        this.fusedGemv = choices.fusedGemv();
        this.cfg = cfg;
        this.tpl = tpl;
        this.dt = dt;
        this.dims = dims;
        this.hq = tpl.headsPerRank();
        this.hk = tpl.kvHeadsPerRank();
        this.hd = cfg.headDim();
        this.hidden = cfg.hiddenSize();
        this.vr = tpl.vocabPerRank();
        this.mem = new DeviceMemory(rank.device(), rank.index());
        try {
            this.kv = new KvCache(mem, cfg.numLayers(), dims.blockSize(), hk, hd, dims.kvDtype(), dt);
            this.kernels = new ModelKernels();
            this.weights = new RankWeights(mem, cfg);
            long e = dt.bytes();
            int t = dims.maxTokens();
            int m = dims.maxLogitRows();
            samplingCapacity = SamplingRows.capacity(m);
            inputs = StepInputs.forModel(mem, ACTIVATIONS, dims, samplingCapacity, cfg.vocabSize(), rank.index() == 0);
            part = mem.alloc(ACTIVATIONS, "partial sums", e * t * hidden, true);
            red = tpl.tp() > 1 ? mem.alloc(ACTIVATIONS, "reduced sums", e * t * hidden, true) : part;
            residual = addr(mem.alloc(ACTIVATIONS, "residual", 4L * t * hidden, true));
            xn = addr(mem.alloc(ACTIVATIONS, "normed", e * t * hidden, true));
            reduce = new RankReduce(rank, tpl.tp(), choices.fusedNorm(), kernels, dt, hidden, part, red, residual, xn);
            qkv = addr(mem.alloc(ACTIVATIONS, "qkv", e * t * (hq + 2L * hk) * hd, true));
            attn = addr(mem.alloc(ACTIVATIONS, "attention out", e * t * hq * hd, true));
            attention =
                    new AttentionBlock(mem, ACTIVATIONS, kernels, weights, inputs, kv, dims, dt, hq, hk, hd, qkv, attn);
            mlp = new MlpBlocks(mem, ACTIVATIONS, cfg, tpl, dt, t, dims.maxRows(), dims.maxDecodeTokens(), choices);
            xl = addr(mem.alloc(ACTIVATIONS, "logit rows", e * m * hidden, true));
            logits = new RankLogits(mem, ACTIVATIONS, tpl, rank.index(), m);
            long ws = share.workspaceBytes() > 0
                    ? addr(mem.alloc(ACTIVATIONS, "cuBLAS workspace", share.workspaceBytes(), false))
                    : 0;
            this.blas = Cublas.create(rank.stream(), ws, share.workspaceBytes(), share.smCountTarget());
            int maxIn = Math.max(
                    hidden, Math.max(hq * hd, Math.max(tpl.intermediatePerRank(), tpl.expertIntermediatePerRank())));
            this.fp8 = dims.fp8Scratch() > 0
                    ? new Fp8Linear(
                            mem, kernels, blas, dt, choices, dims.fp8Scratch(), t, maxIn, rank.stream(), ws, share)
                    : null;
        } catch (RuntimeException ex) {
            mem.close();
            throw ex;
        }
    }

    private static long addr(CUdeviceptr p) {
        return Cuda.address(p);
    }

    /**
     * Uploads this rank's shards ({@code plan}) from the checkpoint, then composes each layer's MLP block over them;
     * {@code progress} gets bytes as they land.
     */
    long loadWeights(Checkpoint ck, List<DeviceTensor> plan, LongConsumer progress) {
        long bytes = weights.load(ck, plan, dims.maxPositions(), progress);
        lin = new Linears(weights, kernels, blas, fp8, gemv, gemvMma, fusedGemv, dt);
        mlp.build(weights, lin, kernels, blas);
        l2Spans = l2.plan(weights, mlp, cfg.numLayers());
        fuseOneToken = tpl.tp() == 1 && mlp.allFusable() && lin.fusesAttention(cfg.numLayers(), hidden, hq * hd);
        if (kv.fp8()) {
            kv.setScales(weights.upload(KvScales.read(ck, cfg.numLayers()), "KV cache scales"));
        }
        return bytes;
    }

    /** Whether one-token steps take the fused linears ({@link KernelChoices#fusedGemv}; set by {@link #loadWeights}). */
    boolean fusesOneToken() {
        return fuseOneToken;
    }

    /** Enqueues the copies of the step's inputs on the rank's stream ({@link StepInputs#upload}). */
    void uploadInputs(StepBatch b) {
        int n = b.tokens();
        if (n > dims.maxTokens() || b.logitTokens().length > dims.maxLogitRows() || b.rows() > dims.maxRows()) {
            throw new IllegalArgumentException("step of " + n + " tokens / " + b.logitTokens().length + " logit rows / "
                    + b.rows() + " rows exceeds the engine's buffers (" + dims + ")");
        }
        AttentionPlan plan = tiledPrefill ? AttentionPlan.of(b.tokenRow(), b.positions(), n, hd) : AttentionPlan.NONE;
        inputs.upload(b, plan, rank.index() == 0, rank.stream());
        numTiles = plan.numTiles();
        numRest = plan.rest().length;
        shortChunks = GraphBuckets.shortChunks(b);
    }

    /** Rank 0: enqueues the copy of the {@code m} sampled ids to the host; {@link #sampledIds} after a synchronize. */
    void fetchSampledIds(int m) {
        inputs.fetch(StepInputs.Buf.OUT_IDS, m, rank.stream());
    }

    int[] sampledIds(int m) {
        return inputs.read(StepInputs.Buf.OUT_IDS, m);
    }

    /** The step inputs (their device addresses, for {@link ChainedSteps}). */
    StepInputs inputs() {
        return inputs;
    }

    private long w(String key) {
        return weights.get(key);
    }

    /** Rank 0: the timer its allreduces report to (see {@link AllreduceTimer}). */
    void timeAllreducesWith(AllreduceTimer t) {
        reduce.timeWith(t);
    }

    private void reduceAndNorm(int n, String norm, int mode, float eps) {
        reduce.andNorm(n, w(norm), mode, eps, this::mark);
    }

    /** Enqueues one forward step of {@code n} tokens producing {@code m} logits rows (inputs already uploaded). */
    void forward(int n, int m) {
        var s = rank.stream();
        long ids = inputs.device(StepInputs.Buf.IDS);
        float eps = (float) cfg.rmsNormEps();
        kernels.embed(
                dt,
                ids,
                n,
                w("embed"),
                tpl.vocabStart(rank.index()),
                tpl.vocabRows(rank.index()),
                hidden,
                addr(part),
                s);
        mark("embed");
        reduceAndNorm(n, "layers.0.input_norm", 0, eps);
        boolean fuse = fuseOneToken && n == 1;
        // captured steps only: an eager step would pay a launch a layer for it, and replays are what it is for
        boolean prefetch = shortChunks && l2.on() && Cuda.isCapturing(s);
        int qkvCols = (hq + 2 * hk) * hd;
        for (int l = 0; l < cfg.numLayers(); l++) {
            String p = "layers." + l + ".";
            if (fuse && l > 0) {
                lin.normLinear(residual, w(p + "input_norm"), eps, p + "qkv", qkv, hidden, qkvCols, false, s);
            } else {
                lin.linear(GemvPolicy.Linear.QKV, xn, p + "qkv", qkv, n, hidden, qkvCols, s);
            }
            mark("gemm qkv");
            if (prefetch) {
                kernels.prefetch().launch(l2Spans.get(l), s);
                mark("l2 prefetch");
            }
            attention.forward(l, n, numTiles, numRest, eps, s, this::mark);
            if (fuse) { // residual += o(attn); gate_up reads RMSNorm(residual); down adds to the residual
                lin.residualLinear(attn, p + "o", residual, hq * hd, hidden, s);
                mark("gemm o+residual");
                mlp.layer(l).forwardFused(residual, w(p + "post_norm"), eps, s, this::mark);
                continue;
            }
            lin.linear(GemvPolicy.Linear.O, attn, p + "o", addr(part), n, hq * hd, hidden, s);
            mark("gemm o");
            reduceAndNorm(n, p + "post_norm", 1, eps);
            mlp.layer(l).forward(n, shortChunks, xn, addr(part), s, this::mark);
            // the next layer's input norm, or the final norm
            reduceAndNorm(n, l + 1 < cfg.numLayers() ? "layers." + (l + 1) + ".input_norm" : "final_norm", 1, eps);
        }
        if (fuse) {
            kernels.addRmsNorm(dt, residual, 0, w("final_norm"), xn, n, hidden, eps, 2, s);
            mark("norm");
        }
        kernels.gatherRows(dt, xn, inputs.device(StepInputs.Buf.LOGIT_TOKENS), xl, m, hidden, s);
        mark("gather");
        blas.linear(dt, xl, w("lm_head"), addr(logits.local), DType.fp32, m, hidden, vr, vr);
        mark("gemm lm_head");
        if (logits.gathered()) {
            logits.placeShard(m, s);
            reduce.allReduce(logits.full, logits.out, logits.fullCount(m), DType.fp32);
            mark("logits gather");
        }
        if (rank.index() == 0) {
            kernels.sampler()
                    .sample(
                            addr(logits.out),
                            m,
                            cfg.vocabSize(),
                            logits.stride(),
                            inputs.device(StepInputs.Buf.SAMPLING),
                            samplingCapacity,
                            inputs.device(StepInputs.Buf.PENALTIES),
                            inputs.device(StepInputs.Buf.OUT_IDS),
                            s);
            mark("sample");
        }
    }

    /** Times every operation of the following eager passes with {@code t} ({@link OpTimer#OFF}: none). */
    void profileWith(OpTimer t) {
        timer = t;
    }

    private void mark(String label) {
        timer.mark(label, rank.stream());
    }

    /** The last step's experts of its {@code n} tokens ([MoE layers][n][top-k]; after the stream finished). */
    int[] routing(int n) {
        return mlp.routing(n);
    }

    /** Copies {@code m} rows of final logits ({@code vocab} floats each) to the host (after the stream finished). */
    float[] readLogits(int m) {
        return logits.read(m, cfg.vocabSize());
    }

    long bytes(String phase) {
        return mem.bytes(phase);
    }

    @Override
    public void close() {
        try {
            if (fp8 != null) {
                fp8.close();
            }
            blas.close();
        } finally {
            inputs.close();
            kernels.close();
            mem.close();
        }
    }
}
