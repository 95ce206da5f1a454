package io.tensorlane.runtime.llm;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Communicator;
import io.tensorlane.runtime.engine.CommunicatorConfig;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.engine.Rank;
import io.tensorlane.runtime.model.Checkpoint;
import io.tensorlane.runtime.model.DeviceTensor;
import io.tensorlane.runtime.model.KvScales;
import io.tensorlane.runtime.model.ModelConfig;
import io.tensorlane.runtime.model.ShardPlan;
import io.tensorlane.runtime.model.TpLayout;
import io.tensorlane.runtime.model.WeightDType;
import io.tensorlane.runtime.nccl.Nccl;
import io.tensorlane.runtime.nccl.NcclComm;
import io.tensorlane.runtime.sched.BlockAllocator;
import io.tensorlane.runtime.sched.StepBatch;
import io.tensorlane.runtime.sched.StepExecutor;
import io.tensorlane.runtime.sched.StepResult;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A Hugging Face decoder model sharded over the pod's GPUs, one {@link RankModel} per rank of a {@link Communicator}
 * (one worker thread per GPU). {@link #step} runs one forward pass of a mixed batch on every rank and returns the
 * greedy token of each logits row (and the logits when asked). Decode steps replay a CUDA graph per batch-size bucket.
 * One caller at a time (the scheduler thread).
 */
public final class LlmEngine implements AutoCloseable, StepExecutor {
    private final EngineOptions options;
    private final ModelConfig config;
    private final TpLayout layout;
    private final DType dtype;
    private final int maxModelLen;
    private final LoadPlan loadPlan;
    private final List<Integer> devices;
    private Communicator comm;
    private NcclComm nccl;
    private final List<RankModel> ranks = new ArrayList<>();
    private StepRunner steps;
    private BlockAllocator blocks;
    private MemoryReport memory;
    private double loadSeconds;
    private long weightBytes;
    /** One step in this many has its allreduces timed (with several ranks; serve's allreduce latency histogram). */
    public static final int ALLREDUCE_SAMPLE_EVERY = StepRunner.ALLREDUCE_SAMPLE_EVERY;

    private final AllreduceCounts allreduces = new AllreduceCounts();

    /** The variable naming the file MoE models dump every step's experts to (a diagnostic; {@code RoutingDump}). */
    public static final String ROUTING_DUMP_ENV = RoutingDump.ENV;

    private LlmEngine(
            EngineOptions options, ModelConfig config, TpLayout layout, List<Integer> devices, LoadPlan plan) {
        this.options = options;
        this.config = config;
        this.layout = layout;
        this.dtype = activationDtype(config);
        this.loadPlan = plan;
        this.maxModelLen = plan.maxModelLen();
        this.devices = devices;
    }

    private static DType activationDtype(ModelConfig config) {
        return config.dtype() == WeightDType.FP16 ? DType.fp16 : DType.bf16;
    }

    /** What the engine took on each GPU, per rank; {@code kvBytesPerBlock} of {@code kvDtype} elements. */
    public record MemoryReport(
            long weightBytesPerRank,
            long kvBytesPerRank,
            long activationBytesPerRank,
            long allreduceBytesPerRank,
            int kvBlocks,
            int blockSize,
            long kvTokens,
            KvCacheDtype kvDtype,
            long kvBytesPerBlock) {}

    /**
     * Reads and checks the model (every problem is reported before any GPU memory is taken: {@link LoadPlan}, the
     * checkpoint's tensors, every rank's shard plan), then builds the ranks and loads the weights; progress goes to
     * {@code log}.
     */
    public static LlmEngine load(EngineOptions options, PrintWriter log) {
        return load(options, log, KvSizing.OWN);
    }

    /** {@link #load} with the KV cache sized as {@code kv} says (a draft model's beside it, or later). */
    public static LlmEngine load(EngineOptions options, PrintWriter log, KvSizing kv) {
        ModelConfig config = ModelConfig.read(options.modelDir());
        TpLayout layout = TpLayout.of(config, options.tp());
        List<Integer> devices = devices(options);
        LoadPlan plan =
                LoadPlan.of(options, config, layout, activationDtype(config), CommunicatorConfig.sharesAGpu(devices));
        // a bad value ends here, before any GPU memory is taken
        KernelChoices choices = options.baselineKernels() ? KernelChoices.BASELINE : KernelChoices.fromEnv();
        LlmEngine e = new LlmEngine(options, config, layout, List.copyOf(devices), plan);
        try (Checkpoint ck = Checkpoint.open(options.modelDir())) {
            ShardPlan.validate(ck, config);
            // every rank's shard plan: a TP split an FP8 checkpoint's scale blocks refuse ends here too
            List<List<DeviceTensor>> plans = new ArrayList<>();
            for (int r = 0; r < layout.tp(); r++) {
                plans.add(ShardPlan.forRank(layout, r));
            }
            e.start(ck, plans, log, choices, kv);
            return e;
        } catch (RuntimeException ex) {
            e.close();
            throw ex;
        }
    }

    /** The GPU of each rank: rank r on GPU r, or every rank on GPU 0 with virtual ranks. */
    public static List<Integer> devices(EngineOptions options) {
        List<Integer> devices = new ArrayList<>();
        for (int r = 0; r < options.tp(); r++) {
            devices.add(options.virtualRanks() ? 0 : r);
        }
        return devices;
    }

    private void start(
            Checkpoint ck, List<List<DeviceTensor>> plans, PrintWriter log, KernelChoices choices, KvSizing kv) {
        int world = options.tp();
        boolean sharing = CommunicatorConfig.sharesAGpu(devices);
        comm = Communicator.create(new CommunicatorConfig(devices, loadPlan.buffers(), loadPlan.table(), 60_000));
        comm.setPush(choices.push());
        steps = new StepRunner(options, config, layout, dtype, comm, ranks, allreduces);
        boolean virtual = comm.config().virtual();
        if (world > 1 && (options.nccl() || !virtual)) {
            try {
                nccl = new NcclComm(Nccl.load(options.ncclLib()), devices);
                comm.setFallback(nccl);
            } catch (RuntimeException ex) {
                if (options.nccl()) {
                    throw ex;
                }
                log.println("engine: no NCCL fallback (" + ex.getMessage() + ")");
            }
        } else if (options.nccl()) {
            throw new IllegalArgumentException(
                    "--nccl needs one GPU per rank (NCCL cannot run several ranks on one GPU)");
        }
        RankModel.Dims dims = new RankModel.Dims(
                options.maxBatchTokens(),
                options.maxLogitRows(),
                options.maxSeqs() + 1,
                options.decodeTokens(),
                loadPlan.maxBlocksPerSeq(),
                options.blockSize(),
                maxModelLen,
                plans.stream().mapToLong(RankWeights::largestFp8).max().orElse(0),
                options.kvCacheDtype());
        for (int r = 0; r < world; r++) {
            ranks.add(null);
        }
        comm.onEachRank(r -> {
            RankModel.GemmShare share = RankModel.GemmShare.OWN_GPU;
            if (sharing) {
                int peers = comm.config().ranksOn(r.device()) - 1;
                share = new RankModel.GemmShare(
                        0, Math.max(8, multiprocessors(r) - (peers * comm.maxBlocks() + 1) / 2));
            }
            ranks.set(r.index(), new RankModel(r, config, layout, dtype, dims, share, choices));
            return null;
        });
        log.println("engine: one-token steps: GEMV kernel for " + choices.gemv() + " (" + GemvPolicy.ENV
                + "), cuBLAS otherwise"
                + (world > 1
                        ? "; allreduce + RMSNorm " + (choices.fusedNorm() ? "fused where OneStage runs" : "apart")
                                + " (" + KernelChoices.FUSED_NORM_ENV + "); OneStage "
                                + (choices.push() ? "pushes where it fits" : "pulls") + " ("
                                + KernelChoices.PUSH_ENV + ")"
                        : "")
                + (config.moe() != null
                        ? "; MoE decode " + choices.moeFusedDecode().describe() + " ("
                                + KernelChoices.MOE_FUSED_DECODE_ENV + ")"
                        : ""));
        long t0 = System.nanoTime();
        AtomicLong done = new AtomicLong();
        long total = ck.totalBytes();
        long[] nextReport = {0};
        log.println(LoadBanner.of(options.modelDir(), config, dtype, devices, virtual));
        log.flush();
        List<Long> loaded = comm.onEachRank(r -> ranks.get(r.index()).loadWeights(ck, plans.get(r.index()), b -> {
            long now = done.addAndGet(b);
            synchronized (nextReport) {
                if (now >= nextReport[0]) {
                    log.printf("engine: loaded %.2f GB%n", now / 1e9);
                    log.flush();
                    nextReport[0] = now + Math.max(total / 10, 1);
                }
            }
        }));
        loadSeconds = (System.nanoTime() - t0) / 1e9;
        String kvNote = KvCache.describe(options.kvCacheDtype(), dtype, KvScales.present(ck, config.numLayers()));
        if (kvNote != null) {
            log.println("engine: " + kvNote);
        }
        weightBytes = loaded.stream().mapToLong(Long::longValue).sum();
        log.printf(
                "engine: weights on the GPUs: %.3f GB in %.2f s (%.2f GB/s; checkpoint %.3f GB)%n",
                weightBytes / 1e9, loadSeconds, weightBytes / 1e9 / Math.max(loadSeconds, 1e-9), total / 1e9);
        if (ranks.get(0).fusesOneToken()) {
            log.println("engine: one-token steps fold the residual add, RMSNorms and silu into the linears");
        }
        if (!kv.deferred()) {
            allocateKv(options.kvCacheTokens(), kv, log);
        }
        if (world > 1 && !options.nccl()) {
            List<jcuda.driver.CUdeviceptr> parts = new ArrayList<>();
            List<jcuda.driver.CUdeviceptr> logits = new ArrayList<>();
            for (RankModel m : ranks) {
                parts.add(m.part);
                logits.add(m.logits.full);
            }
            comm.registerInputs(parts);
            comm.registerInputs(logits);
        }
        log.flush();
    }

    private static int multiprocessors(Rank r) {
        jcuda.driver.CUdevice dev = new jcuda.driver.CUdevice();
        Cuda.check(jcuda.driver.JCudaDriver.cuDeviceGet(dev, r.device()), "cuDeviceGet");
        int[] n = {0};
        Cuda.check(
                jcuda.driver.JCudaDriver.cuDeviceGetAttribute(
                        n, jcuda.driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
                "cuDeviceGetAttribute(SM count)");
        return n[0];
    }

    private void allocateKv(long tokens, KvSizing sizing, PrintWriter log) {
        KvAllocation.Result r =
                KvAllocation.allocate(comm, ranks, devices, options, loadPlan, dtype, tokens, sizing, log);
        blocks = r.blocks();
        memory = r.memory();
    }

    /**
     * Allocates the KV cache of an engine loaded with {@link KvSizing#LATER}: {@code tokens} tokens (rounded up to whole
     * blocks) on every rank.
     */
    public void allocateKv(long tokens, PrintWriter log) {
        if (blocks != null || tokens < 1) {
            throw new IllegalStateException(
                    blocks != null ? "the KV cache is allocated already" : "KV tokens must be >= 1, got " + tokens);
        }
        allocateKv(tokens, KvSizing.OWN, log);
        log.flush();
    }

    /** Bytes of one KV block on each rank (all layers, K and V; known before the cache is allocated). */
    public long kvBytesPerBlock() {
        return ranks.get(0).kv.bytesPerBlock();
    }

    public ModelConfig config() {
        return config;
    }

    public EngineOptions options() {
        return options;
    }

    @Override
    public int vocabSize() {
        return config.vocabSize();
    }

    public int maxModelLen() {
        return maxModelLen;
    }

    public int maxBlocksPerSeq() {
        return loadPlan.maxBlocksPerSeq();
    }

    public BlockAllocator blocks() {
        return blocks;
    }

    public MemoryReport memory() {
        return memory;
    }

    public double loadSeconds() {
        return loadSeconds;
    }

    public long weightBytes() {
        return weightBytes;
    }

    /** Runs one forward pass of {@code batch} on every rank. */
    @Override
    public StepResult step(StepBatch batch, boolean wantLogits) {
        return steps.run(batch, wantLogits, false).result();
    }

    /**
     * {@link StepExecutor#chain}: on the GPU with one read-back when the step runner can ({@link ChainedSteps}: one
     * rank, the graphs captured, {@link KernelChoices#DRAFT_CHAIN_ENV} on), else one step at a time.
     */
    @Override
    public int[] chain(StepBatch first, int more, ChainStep next) {
        int[] ids = steps.chain(first, more);
        return ids != null ? ids : StepExecutor.super.chain(first, more, next);
    }

    /**
     * A step (without logits) and its GPU time (bench-model): {@code gpuMillis} is the time between two CUDA events recorded
     * on rank 0's stream just before and just after the forward pass is enqueued (a graph replay, or the eager kernels);
     * it leaves out the host's work before (staging the inputs in pinned memory, enqueuing their copies, which the GPU
     * runs before the start event) and the synchronization and read-back of the sampled ids after, which the caller's
     * wall clock around this call includes. With several ranks it includes rank 0's waits for its peers in
     * the allreduces. {@code graphReplayed}: the step replayed a captured graph (false for eager steps and for the
     * first step of a bucket, which runs eagerly and captures the graph afterwards). {@code host}: where the
     * step's wall time went on the host ({@link HostPhases}; timed steps only, null otherwise).
     */
    public record TimedStep(StepResult result, double gpuMillis, boolean graphReplayed, HostPhases.Marks host) {}

    /** {@link #step} timed with CUDA events on rank 0's stream; see {@link TimedStep}. */
    public TimedStep timedStep(StepBatch batch) {
        return steps.run(batch, false, true);
    }

    /**
     * One eager forward pass of {@code batch} (never a graph) with a CUDA event after every operation on rank 0: GPU
     * milliseconds per operation, summed over layers, in the order of the pass (bench-model --op-breakdown). The events
     * add a little time of their own; the sum is close to, not equal to, a step's time.
     */
    public Map<String, Double> profileStep(StepBatch batch) {
        return steps.profileStep(batch);
    }

    /**
     * Steps replayed from a captured CUDA graph since the engine started: all, and the speculative verify steps among
     * them (several tokens of a sequence in one step; {@link KernelChoices#SPEC_GRAPHS_ENV}).
     */
    public record GraphReplays(long steps, long verifySteps) {}

    public GraphReplays graphReplays() {
        long[] r = steps.graphReplays();
        return new GraphReplays(r[0], r[1]);
    }

    /**
     * Rank {@code rank}'s K (or, with {@code value}, V) of layer {@code layer} for KV blocks {@code blocks}: per block its
     * {@code blockSize} slots of [the rank's KV heads, headDim], as floats, after the rank's stream is done (prefixcheck
     * compares cached blocks with fresh ones). 16-bit KV caches only.
     */
    public float[] readKv(int rank, int layer, boolean value, int[] blocks) {
        RankModel m = ranks.get(rank);
        return comm.rank(rank).call(() -> {
            m.rank.synchronize();
            return m.kv.read(layer, value, blocks);
        });
    }

    /** Allreduce calls, bytes and sampled GPU times per algorithm since the engine started (serve's metrics). */
    public AllreduceCounts allreduces() {
        return allreduces;
    }

    @Override
    public void close() {
        if (comm != null) {
            try {
                comm.onEachRank(r -> {
                    steps.close(r);
                    RankModel m = ranks.size() > r.index() ? ranks.get(r.index()) : null;
                    if (m != null) {
                        m.close();
                    }
                    return null;
                });
            } finally {
                if (nccl != null) {
                    nccl.close();
                }
                comm.close();
            }
        }
    }
}
