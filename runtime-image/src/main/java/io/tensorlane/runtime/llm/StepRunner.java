package io.tensorlane.runtime.llm;

import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.CapturedGraph;
import io.tensorlane.runtime.engine.Communicator;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.engine.ProgrammaticEdges;
import io.tensorlane.runtime.engine.Rank;
import io.tensorlane.runtime.llm.LlmEngine.TimedStep;
import io.tensorlane.runtime.model.ModelConfig;
import io.tensorlane.runtime.model.TpLayout;
import io.tensorlane.runtime.sched.StepBatch;
import io.tensorlane.runtime.sched.StepResult;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs {@link LlmEngine}'s forward passes on every rank: decode and speculative verify steps through the CUDA graph
 * captured per bucket of tokens ({@link GraphBuckets}), the step timing and per-operation profile on rank 0's stream, and the count of the allreduces the passes run.
 */
final class StepRunner {
    private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger(StepRunner.class.getName());
    private final EngineOptions options;
    private final ModelConfig config;
    private final TpLayout layout;
    private final DType dtype;
    private final Communicator comm;
    private final List<RankModel> ranks;
    private final AllreduceCounts allreduces;
    /** Steps between two steps whose allreduces are timed (serve's tensorlane_allreduce_latency_seconds). */
    static final int ALLREDUCE_SAMPLE_EVERY = 64;

    /** Which graph a step replays; null until the ranks exist (its token limit reads their buffers' sizes). */
    private GraphBuckets buckets;
    /** Whether verify steps replay graphs ({@link KernelChoices#SPEC_GRAPHS_ENV}). */
    private final boolean specGraphs;
    /** Whether captured graphs launch programmatically ({@link KernelChoices#PDL_ENV}). */
    private final boolean programmatic;

    private volatile boolean programmaticLogged;
    /** Whether greedy chains of one sequence run on the GPU ({@link KernelChoices#DRAFT_CHAIN_ENV}). */
    private final boolean chained;
    /** Steps replayed from a graph: all, and those with several tokens in a sequence (verify steps). */
    private long replays;

    private long verifyReplays;

    /** Per bucket (the graph's tokens): its graphs, captured together ({@link GraphPlan}). */
    private final Map<Integer, BucketGraphs> graphs = new HashMap<>();

    /**
     * A bucket's graphs, one per rank: the plain one, and (null with one rank or no timing) the one of sampled steps
     * (rank 0's with its allreduces timed) with the calls rank 0's times.
     */
    private record BucketGraphs(List<CapturedGraph> plain, List<CapturedGraph> timed, AllreduceTimer.Pass pass) {}

    private long stepCount;
    /** False once the driver could not time the events (sampling stops; the steps go on). */
    private boolean allreduceTiming = true;
    /** Rank 0's; its events are shared by the timed graphs and the timed eager passes. */
    private AllreduceTimer allreduceTimer;
    /** Start/end events on rank 0's stream for {@link LlmEngine#timedStep} (created by rank 0's thread on first use). */
    private final EventPool timing = new EventPool("step timing");
    /** The routing of every step, when {@link RoutingDump#ENV} asks for it (MoE models). */
    private final RoutingDump routing;

    private OpTimer opTimer; // rank 0's, for profileStep

    /** Steps of the models in {@code ranks} (one per rank of {@code comm}, filled in by the engine as they are built). */
    StepRunner(
            EngineOptions options,
            ModelConfig config,
            TpLayout layout,
            DType dtype,
            Communicator comm,
            List<RankModel> ranks,
            AllreduceCounts allreduces) {
        this.routing = config.moe() != null ? RoutingDump.fromEnv(System.getenv()) : null;
        this.options = options;
        this.config = config;
        this.layout = layout;
        this.dtype = dtype;
        this.comm = comm;
        this.ranks = ranks;
        this.allreduces = allreduces;
        this.specGraphs = KernelChoices.specGraphs(System.getenv(KernelChoices.SPEC_GRAPHS_ENV));
        this.programmatic = KernelChoices.programmaticLaunch(System.getenv(KernelChoices.PDL_ENV));
        this.chained = KernelChoices.draftChain(System.getenv(KernelChoices.DRAFT_CHAIN_ENV));
    }

    /**
     * The edit of a rank's captured graphs: its kernel-to-kernel edges into model kernels made programmatic
     * ({@link KernelChoices#PDL_ENV}, sm_90 and later); null when off. Rank 0 logs the first graph's count.
     */
    private java.util.function.Consumer<jcuda.driver.CUgraph> graphEdit(RankModel model, boolean zero) {
        if (!programmatic || !ProgrammaticEdges.supportedHere()) {
            return null;
        }
        return g -> {
            int n = ProgrammaticEdges.apply(g, java.util.Set.of(model.kernels.moduleAddress()));
            if (zero && !programmaticLogged) {
                programmaticLogged = true;
                LOG.info(() -> "captured steps launch each model kernel while the one before it runs (programmatic "
                        + "dependent launch, " + KernelChoices.PDL_ENV + "=off: full serialization): " + n
                        + " edges of the first graph");
            }
        };
    }

    /** One forward pass of {@code batch} on every rank ({@link LlmEngine#step}, {@link LlmEngine#timedStep}). */
    TimedStep run(StepBatch batch, boolean wantLogits, boolean timed) {
        int m = batch.logitTokens().length;
        int key = options.graphs() ? buckets().tokens(batch) : GraphBuckets.EAGER;
        boolean graph = key != GraphBuckets.EAGER;
        StepBatch b = graph ? batch.padTo(key) : batch;
        boolean sample = sampleAllreduces();
        BucketGraphs g = graph ? graphs.get(key) : null;
        GraphPlan plan = GraphPlan.of(graph, g != null, g != null && g.timed() != null, sample, timingPossible());
        List<CapturedGraph> replay = switch (plan.run()) {
            case EAGER -> null;
            case REPLAY_PLAIN -> g.plain();
            case REPLAY_TIMED -> g.timed();
        };
        AllreduceTimer.Pass replayPass = plan.run() == GraphPlan.Run.REPLAY_TIMED ? g.pass() : null;
        List<CapturedGraph> captured = nulls(ranks.size());
        List<CapturedGraph> capturedTimed = nulls(ranks.size());
        AllreduceTimer.Pass[] capturedPass = {null};
        HostPhases.Marks host = timed ? HostPhases.Marks.start() : null;
        List<TimedStep> results = comm.onEachRank(r -> {
            RankModel model = ranks.get(r.index());
            Runnable forward = () -> model.forward(b.tokens(), b.logitTokens().length);
            boolean zero = r.index() == 0;
            HostPhases.Marks marks = zero ? host : null;
            mark(marks, 0);
            model.uploadInputs(b);
            mark(marks, 1);
            AllreduceTimer.Pass pass = null;
            boolean time = timed && zero;
            if (time) {
                Cuda.check(cuEventRecord(timing.get(0), r.stream()), "cuEventRecord(step start)");
            }
            if (replay != null) {
                replay.get(r.index()).launch(r.stream());
                r.noteGraph(
                        replayPass != null ? "replay of the timed graph of bucket" : "replay of the graph of bucket",
                        key);
                pass = zero ? replayPass : null;
            } else {
                pass = timedPass( // no graph, so no timed graph's pass either
                        plan.timeEager() && zero ? allreduceTimer(model) : null, AllreduceTimer.Mode.EAGER, forward);
            }
            if (time) {
                Cuda.check(cuEventRecord(timing.get(1), r.stream()), "cuEventRecord(step end)");
            }
            mark(marks, 2);
            if (zero) {
                model.fetchSampledIds(m);
            }
            mark(marks, 3);
            Rank.StreamWait wait = r.awaitStream();
            mark(marks, 4);
            r.checkWatchdog(wait);
            mark(marks, 5);
            if (zero && routing != null) {
                routing.write(b, config.moe().moeLayers().size(), config.moe().topK(), model.routing(b.tokens()));
            }
            if (pass != null) {
                recordAllreduceTimes(pass); // before a capture re-enqueues the same events as graph nodes
            }
            if (plan.capturePlain()) {
                // The eager run above loaded every kernel; capture the same step for the next time (capture runs
                // nothing), and its timed twin: every rank captures one (virtual ranks meet at the launch fence
                // during capture), only rank 0's differs from the plain graph.
                java.util.function.Consumer<jcuda.driver.CUgraph> edit = graphEdit(model, zero);
                captured.set(r.index(), CapturedGraph.capture(r.stream(), forward, edit));
                r.noteGraph("capture of the graph of bucket", key);
                if (plan.captureTimed()) {
                    AllreduceTimer.Pass p = timedPass(
                            zero ? allreduceTimer(model) : null,
                            AllreduceTimer.Mode.CAPTURE,
                            () -> capturedTimed.set(r.index(), CapturedGraph.capture(r.stream(), forward, edit)));
                    r.noteGraph("capture of the timed graph of bucket", key);
                    if (zero) {
                        capturedPass[0] = p;
                    }
                }
            }
            if (!zero) {
                return null;
            }
            float[] ms = {Float.NaN};
            if (time) {
                Cuda.check(cuEventElapsedTime(ms, timing.get(0), timing.get(1)), "cuEventElapsedTime(step)");
            }
            int[] ids = model.sampledIds(m);
            StepResult result = new StepResult(ids, wantLogits && m > 0 ? model.readLogits(m) : null);
            mark(marks, 6);
            return new TimedStep(result, ms[0], plan.replays(), host);
        });
        mark(host, 7);
        if (plan.replays()) {
            replays++;
            verifyReplays += batch.tokens() > batch.rows() ? 1 : 0;
        }
        if (plan.capturePlain()) {
            graphs.put(key, new BucketGraphs(captured, plan.captureTimed() ? capturedTimed : null, capturedPass[0]));
        }
        countAllreduces(b.tokens(), m);
        return results.get(0);
    }

    private static void mark(HostPhases.Marks marks, int phase) {
        if (marks != null) {
            marks.mark(phase);
        }
    }

    /** Whether this step's allreduces are timed: one step in {@value #ALLREDUCE_SAMPLE_EVERY}, with several ranks. */
    private boolean sampleAllreduces() {
        return timingPossible() && stepCount++ % ALLREDUCE_SAMPLE_EVERY == 0;
    }

    /** Several ranks, and the driver has timed every sampled step so far. */
    private boolean timingPossible() {
        return options.tp() > 1 && allreduceTiming;
    }

    /** Rank 0's allreduce timer (created by rank 0's thread on first use). */
    private AllreduceTimer allreduceTimer(RankModel model) {
        if (allreduceTimer == null) {
            allreduceTimer = new AllreduceTimer();
            model.timeAllreducesWith(allreduceTimer);
        }
        return allreduceTimer;
    }

    /** Rank 0, after the stream finished: the timed pass's calls into the counts (sampling stops if it cannot time). */
    private void recordAllreduceTimes(AllreduceTimer.Pass pass) {
        long[] ns;
        try {
            ns = allreduceTimer.nanos(pass);
        } catch (RuntimeException e) {
            allreduceTiming = false;
            System.err.println("engine: allreduce timing stopped: " + e.getMessage());
            return;
        }
        for (int i = 0; i < ns.length; i++) {
            allreduces.addSampled(pass.calls().get(i), ns[i]);
        }
    }

    /**
     * Runs {@code work} with {@code t} timing rank 0's allreduces in {@code mode}; returns the calls it timed (null, and
     * {@code work} untimed, when {@code t} is null).
     */
    private static AllreduceTimer.Pass timedPass(AllreduceTimer t, AllreduceTimer.Mode mode, Runnable work) {
        if (t == null) {
            work.run();
            return null;
        }
        t.begin(mode);
        AllreduceTimer.Pass p;
        try {
            work.run();
        } finally {
            p = t.end();
        }
        return p;
    }

    private static List<CapturedGraph> nulls(int n) {
        List<CapturedGraph> l = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            l.add(null);
        }
        return l;
    }

    /** {@link LlmEngine#profileStep}: one eager pass with an event after every operation on rank 0. */
    Map<String, Double> profileStep(StepBatch batch) {
        comm.onEachRank(r -> {
            RankModel model = ranks.get(r.index());
            model.uploadInputs(batch);
            OpTimer t = OpTimer.OFF;
            if (r.index() == 0) {
                if (opTimer == null) {
                    opTimer = OpTimer.create();
                }
                t = opTimer;
            }
            model.profileWith(t);
            try {
                t.begin(r.stream());
                model.forward(batch.tokens(), batch.logitTokens().length);
            } finally {
                model.profileWith(OpTimer.OFF);
            }
            r.synchronize();
            return null;
        });
        return comm.rank(0).call(() -> opTimer.millis());
    }

    /**
     * Counts the allreduces of a forward pass of {@code n} tokens and {@code m} logits rows per algorithm (the same on
     * every rank; a graph replay runs them too, unseen by the host): the embedding's and two per layer of n x hidden
     * elements, and the vocabulary-parallel logits gather of m x padded vocabulary fp32.
     */
    private void countAllreduces(int n, int m) {
        if (options.tp() == 1) {
            return;
        }
        long hiddenBytes = (long) n * config.hiddenSize() * dtype.bytes();
        allreduces.add(comm.route(hiddenBytes), 1 + 2L * config.numLayers(), hiddenBytes);
        if (m > 0) {
            long logitsBytes = 4L * m * layout.vocabPadded();
            allreduces.add(comm.route(logitsBytes), 1, logitsBytes);
        }
    }

    /**
     * The buckets of this engine: graphs of at most the step buffers' tokens and logits rows, and for MoE models at most
     * the tokens of a decode or verify step ({@link RankModel.Dims#maxDecodeTokens}: the longest step its MoE layers keep
     * on the device).
     */
    private GraphBuckets buckets() {
        if (buckets == null) {
            RankModel.Dims d = ranks.get(0).dims;
            int max = Math.min(d.maxTokens(), d.maxLogitRows());
            if (config.moe() != null) {
                max = Math.min(max, d.maxDecodeTokens());
            }
            buckets = new GraphBuckets(options.maxSeqs(), Math.max(max, options.maxSeqs()), specGraphs);
        }
        return buckets;
    }

    /**
     * {@code first} and {@code more} one-token steps, each fed the greedy id of the step before, chained on the GPU
     * ({@link ChainedSteps}: one read-back for all); null when they cannot be chained here (not switched on, several
     * ranks, no graphs yet for their buckets, a routing dump, or a batch {@link ChainedSteps#fits} refuses), and then
     * nothing ran.
     */
    int[] chain(StepBatch first, int more) {
        if (!chained || ranks.size() != 1 || routing != null || !options.graphs()) {
            return null;
        }
        RankModel model = ranks.get(0);
        int key = buckets().tokens(first);
        BucketGraphs g = graphs.get(key);
        BucketGraphs one = graphs.get(buckets().tokens(1, 1, 1, 1));
        if (g == null || one == null || !ChainedSteps.fits(first, more, model.dims.maxLogitRows())) {
            return null;
        }
        StepBatch padded = first.padTo(key);
        int[] ids = comm.onEachRank(r -> ChainedSteps.run(
                        model,
                        r,
                        first,
                        padded,
                        more,
                        g.plain().get(0),
                        one.plain().get(0),
                        options.blockSize()))
                .get(0);
        replays += more + 1; // one rank: no allreduces to count
        verifyReplays += first.tokens() > first.rows() ? 1 : 0;
        return ids;
    }

    /** Steps replayed from a graph so far: all of them, and the verify steps among them (several tokens a sequence). */
    long[] graphReplays() {
        return new long[] {replays, verifyReplays};
    }

    /** Frees what this runner made on rank {@code r} (on the rank's thread): its graphs, rank 0's events. */
    void close(Rank r) {
        for (BucketGraphs bg : graphs.values()) {
            for (List<CapturedGraph> gs : Arrays.asList(bg.plain(), bg.timed())) {
                CapturedGraph cg = gs == null ? null : gs.get(r.index());
                if (cg != null) {
                    cg.close();
                }
            }
        }
        if (r.index() == 0 && allreduceTimer != null) {
            allreduceTimer.close();
        }
        if (r.index() == 0) {
            timing.close();
        }
        if (r.index() == 0 && opTimer != null) {
            opTimer.close();
        }
    }
}
