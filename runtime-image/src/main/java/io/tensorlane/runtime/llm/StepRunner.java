package io.tensorlane.runtime.llm;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.CapturedGraph;
import io.tensorlane.runtime.engine.Communicator;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.engine.Rank;
import io.tensorlane.runtime.llm.LlmEngine.TimedStep;
import io.tensorlane.runtime.model.ModelConfig;
import io.tensorlane.runtime.model.TpLayout;
import io.tensorlane.runtime.sched.StepBatch;
import io.tensorlane.runtime.sched.StepResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jcuda.Pointer;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;

/**
 * Runs {@link LlmEngine}'s forward passes on every rank: decode steps through the CUDA graph captured per batch-size
 * bucket, the step timing and per-operation profile on rank 0's stream, and the count of the allreduces the passes run.
 */
final class StepRunner {
    private final EngineOptions options;
    private final ModelConfig config;
    private final TpLayout layout;
    private final DType dtype;
    private final Communicator comm;
    private final List<RankModel> ranks;
    private final AllreduceCounts allreduces;
    private final Map<Integer, List<CapturedGraph>> graphs = new HashMap<>();
    /** Start/end events on rank 0's stream for {@link LlmEngine#timedStep} (created by rank 0's thread on first use). */
    private CUevent[] timing;

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
        this.options = options;
        this.config = config;
        this.layout = layout;
        this.dtype = dtype;
        this.comm = comm;
        this.ranks = ranks;
        this.allreduces = allreduces;
    }

    /** One forward pass of {@code batch} on every rank ({@link LlmEngine#step}, {@link LlmEngine#timedStep}). */
    TimedStep run(StepBatch batch, boolean wantLogits, boolean timed) {
        int m = batch.logitTokens().length;
        boolean decode = options.graphs()
                && batch.tokens() == batch.rows()
                && m == batch.tokens()
                && batch.tokens() <= options.maxSeqs();
        StepBatch run = batch;
        int bucket = 0;
        if (decode) {
            bucket = bucket(batch.tokens());
            run = batch.padTo(bucket);
        }
        StepBatch b = run;
        int key = bucket;
        List<CapturedGraph> g = decode ? graphs.get(key) : null;
        boolean capture = decode && g == null;
        List<CapturedGraph> captured = new ArrayList<>(ranks.size());
        for (int i = 0; i < ranks.size(); i++) {
            captured.add(null);
        }
        comm.onEachRank(r -> {
            RankModel model = ranks.get(r.index());
            model.uploadInputs(b);
            boolean time = timed && r.index() == 0;
            if (time) {
                if (timing == null) {
                    CUevent[] ev = {new CUevent(), new CUevent()};
                    for (CUevent e : ev) {
                        Cuda.check(cuEventCreate(e, CUevent_flags.CU_EVENT_DEFAULT), "cuEventCreate(step timing)");
                    }
                    timing = ev;
                }
                Cuda.check(cuEventRecord(timing[0], r.stream()), "cuEventRecord(step start)");
            }
            if (g != null) {
                g.get(r.index()).launch(r.stream());
            } else {
                model.forward(b.tokens(), b.logitTokens().length);
            }
            if (time) {
                Cuda.check(cuEventRecord(timing[1], r.stream()), "cuEventRecord(step end)");
            }
            r.synchronize();
            if (capture) {
                // The eager run above loaded every kernel; capture the same step for the next time (capture runs
                // nothing).
                captured.set(
                        r.index(),
                        CapturedGraph.capture(r.stream(), () -> model.forward(b.tokens(), b.logitTokens().length)));
            }
            return null;
        });
        if (capture) {
            graphs.put(key, captured);
        }
        countAllreduces(b.tokens(), m);
        boolean replayed = g != null;
        return comm.rank(0).call(() -> {
            RankModel r0 = ranks.get(0);
            int[] ids = new int[m];
            if (m > 0) {
                Cuda.check(cuMemcpyDtoH(Pointer.to(ids), RankModel.ptr(r0.outIds), 4L * m), "read sampled ids");
            }
            float[] ms = {Float.NaN};
            if (timed) {
                Cuda.check(cuEventElapsedTime(ms, timing[0], timing[1]), "cuEventElapsedTime(step)");
            }
            return new TimedStep(new StepResult(ids, wantLogits && m > 0 ? r0.readLogits(m) : null), ms[0], replayed);
        });
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

    /** The decode-graph bucket for {@code n} sequences: the next power of two, at most maxSeqs. */
    int bucket(int n) {
        return bucketFor(n, options.maxSeqs());
    }

    static int bucketFor(int n, int maxSeqs) {
        int b = Integer.highestOneBit(Math.max(1, n));
        if (b < n) {
            b <<= 1;
        }
        return Math.min(b, maxSeqs);
    }

    /** Frees what this runner made on rank {@code r} (on the rank's thread): its decode graphs, rank 0's events. */
    void close(Rank r) {
        for (List<CapturedGraph> gs : graphs.values()) {
            CapturedGraph cg = gs.get(r.index());
            if (cg != null) {
                cg.close();
            }
        }
        if (r.index() == 0 && timing != null) {
            for (CUevent e : timing) {
                cuEventDestroy(e);
            }
        }
        if (r.index() == 0 && opTimer != null) {
            opTimer.close();
        }
    }
}
