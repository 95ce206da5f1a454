package io.tensorlane.runtime.engine;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.DType;
import java.util.List;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;

/**
 * One rank's allreduce kernel launches: each entry's parameters from the rank's buffer addresses, the launch, and the
 * journal of launches the watchdog's message shows ({@link LaunchJournal}). {@link Rank} decides which kernel runs
 * (route, push, fusion, input slot, launch fence); this class only launches it. Rank's worker thread only.
 */
final class RankLaunches {
    private final KernelModule module;
    private final BufferLayout layout;
    private final long rankData;
    private final long state;
    private final int rank;
    private final long timeoutNanos;
    private final LaunchJournal journal = new LaunchJournal(24);

    RankLaunches(KernelModule module, BufferLayout layout, long rankData, long state, int rank, long timeoutNanos) {
        this.module = module;
        this.layout = layout;
        this.rankData = rankData;
        this.state = state;
        this.rank = rank;
        this.timeoutNanos = timeoutNanos;
    }

    /** OneStage, TwoStage or Ring on the inputs of pointer-table {@code slot}. */
    void pull(Algorithm a, DType dtype, int slot, long output, long count, int blocks, CUstream s) {
        Pointer params = tables(slot).params(output, count, rank, layout.worldSize(), timeoutNanos);
        launch(module.allreduce(a, dtype), blocks, 0, s, params, a.name(), dtype, count, slot);
    }

    /** The fused allreduce + RMSNorm on the inputs of pointer-table {@code slot}. */
    void pullNorm(FusedNorm n, int slot, int blocks, CUstream s) {
        Pointer params = n.params(tables(slot), rank, layout.worldSize(), timeoutNanos);
        launch(
                module.allreduceNorm(n.dtype()),
                blocks,
                n.sharedBytes(),
                s,
                params,
                "allreduce + RMSNorm",
                n.dtype(),
                n.count(),
                slot);
    }

    /** OneStage's push variant: this rank's {@code input} itself, no pointer table. */
    void push(DType dtype, long input, long output, long count, int blocks, CUstream s) {
        Pointer params = PushVariant.params(
                input, output, tables(0), count, rank, layout.worldSize(), timeoutNanos, layout.pushSlotBytes());
        launch(module.push(dtype), blocks, 0, s, params, "push", dtype, count, -1);
    }

    /** The fused allreduce + RMSNorm on the push variant. */
    void pushNorm(long input, FusedNorm n, int blocks, CUstream s) {
        Pointer params = PushVariant.normParams(
                input, n, tables(0), rank, layout.worldSize(), timeoutNanos, layout.pushSlotBytes());
        launch(
                module.pushNorm(n.dtype()),
                blocks,
                n.sharedBytes(),
                s,
                params,
                "push + RMSNorm",
                n.dtype(),
                n.count(),
                -1);
    }

    /** Notes a CUDA graph's capture or replay (see {@link Rank#noteGraph}). */
    void noteGraph(String kind, int bucket) {
        journal.graph(kind, bucket);
    }

    /** The journal's entries, oldest first. */
    List<String> recent() {
        return journal.lines();
    }

    /** Notes the launch in the journal, then launches; the error text is built only when the launch fails. */
    private void launch(
            CUfunction f,
            int blocks,
            int sharedBytes,
            CUstream s,
            Pointer params,
            String kind,
            DType dtype,
            long count,
            int slot) {
        journal.launch(kind, dtype, count, slot, blocks);
        int rc = KernelModule.launch(f, blocks, sharedBytes, s, params);
        if (rc != CUresult.CUDA_SUCCESS) {
            Cuda.check(rc, "cuLaunchKernel(" + journal.last() + ")");
        }
    }

    /** This rank's buffer addresses for a call whose input pointer table is {@code slot}. */
    private KernelTables tables(int slot) {
        return new KernelTables(
                rankData + (long) slot * BufferLayout.pointerSlotBytes(),
                rankData,
                state,
                state + layout.errorRecordOffset(),
                state + layout.pushStateOffset());
    }
}
