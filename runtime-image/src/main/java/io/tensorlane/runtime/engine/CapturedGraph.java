package io.tensorlane.runtime.engine;

import static jcuda.driver.JCudaDriver.cuGraphDestroy;
import static jcuda.driver.JCudaDriver.cuGraphExecDestroy;
import static jcuda.driver.JCudaDriver.cuGraphInstantiate;
import static jcuda.driver.JCudaDriver.cuGraphLaunch;
import static jcuda.driver.JCudaDriver.cuGraphUpload;
import static jcuda.driver.JCudaDriver.cuStreamBeginCapture;
import static jcuda.driver.JCudaDriver.cuStreamEndCapture;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import jcuda.driver.CUgraph;
import jcuda.driver.CUgraphExec;
import jcuda.driver.CUstream;
import jcuda.driver.CUstreamCaptureMode;

/**
 * A CUDA graph captured from a stream and instantiated. The allreduce kernels keep their epoch on the device, so
 * replaying a captured call is a new call. Capture uses relaxed mode: each rank captures on its own thread.
 *
 * <p>Capture instantiates the graph and uploads it to the device before it returns, so that no launch is the first
 * one. The driver may wait for the whole context to go idle while it instantiates or uploads a graph; on virtual ranks
 * (one context) a peer's replay spinning in an allreduce for this rank then holds that call up until the watchdog
 * stops the peer. So ranks capture only while no allreduce of any rank is in flight (StepRunner captures after the
 * eager run of the same step, on every rank), and a replay makes no such call. Seen on an H200 before that rule: rank
 * 1 stopped at the start barrier and rank 0 at the end barrier of the same call, the first allreduce of the first
 * replay of a graph that rank 1 had captured while rank 0 was still capturing its own
 * (results/h200-2026-12-01-graph-capture/).
 */
public final class CapturedGraph implements AutoCloseable {
    private final CUgraph graph;
    private final CUgraphExec exec;

    private CapturedGraph(CUgraph graph, CUgraphExec exec) {
        this.graph = graph;
        this.exec = exec;
    }

    /** Captures what {@code body} enqueues on {@code stream} (current context). */
    public static CapturedGraph capture(CUstream stream, Runnable body) {
        return capture(stream, body, null);
    }

    /**
     * Captures what {@code body} enqueues on {@code stream} (current context); {@code edit} (null: none) changes the
     * captured graph before it is instantiated ({@link ProgrammaticEdges}).
     */
    public static CapturedGraph capture(CUstream stream, Runnable body, java.util.function.Consumer<CUgraph> edit) {
        Cuda.check(
                cuStreamBeginCapture(stream, CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED),
                "cuStreamBeginCapture");
        CUgraph g = new CUgraph();
        try {
            body.run();
        } catch (RuntimeException e) {
            cuStreamEndCapture(stream, g);
            cuGraphDestroy(g);
            throw e;
        }
        Cuda.check(cuStreamEndCapture(stream, g), "cuStreamEndCapture");
        if (edit != null) {
            try {
                edit.accept(g);
            } catch (RuntimeException e) {
                cuGraphDestroy(g);
                throw e;
            }
        }
        CUgraphExec exec = new CUgraphExec();
        int rc = cuGraphInstantiate(exec, g, 0);
        if (rc != 0) {
            cuGraphDestroy(g);
            Cuda.check(rc, "cuGraphInstantiate");
        }
        CapturedGraph captured = new CapturedGraph(g, exec);
        try {
            Cuda.check(cuGraphUpload(exec, stream), "cuGraphUpload");
            Cuda.check(cuStreamSynchronize(stream), "cuStreamSynchronize(after cuGraphUpload)");
        } catch (RuntimeException e) {
            captured.close();
            throw e;
        }
        return captured;
    }

    public void launch(CUstream stream) {
        Cuda.check(cuGraphLaunch(exec, stream), "cuGraphLaunch");
    }

    @Override
    public void close() {
        cuGraphExecDestroy(exec);
        cuGraphDestroy(graph);
    }
}
