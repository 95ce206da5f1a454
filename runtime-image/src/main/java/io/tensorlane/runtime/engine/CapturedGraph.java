package io.tensorlane.runtime.engine;

import static jcuda.driver.JCudaDriver.cuGraphDestroy;
import static jcuda.driver.JCudaDriver.cuGraphExecDestroy;
import static jcuda.driver.JCudaDriver.cuGraphInstantiate;
import static jcuda.driver.JCudaDriver.cuGraphLaunch;
import static jcuda.driver.JCudaDriver.cuStreamBeginCapture;
import static jcuda.driver.JCudaDriver.cuStreamEndCapture;

import jcuda.driver.CUgraph;
import jcuda.driver.CUgraphExec;
import jcuda.driver.CUstream;
import jcuda.driver.CUstreamCaptureMode;

/**
 * A CUDA graph captured from a stream and instantiated. The allreduce kernels keep their epoch on the device, so
 * replaying a captured call is a new call. Capture uses relaxed mode: each rank captures on its own thread.
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
        CUgraphExec exec = new CUgraphExec();
        int rc = cuGraphInstantiate(exec, g, 0);
        if (rc != 0) {
            cuGraphDestroy(g);
            Cuda.check(rc, "cuGraphInstantiate");
        }
        return new CapturedGraph(g, exec);
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
