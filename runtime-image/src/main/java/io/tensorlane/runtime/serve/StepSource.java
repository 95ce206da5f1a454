package io.tensorlane.runtime.serve;

import java.util.List;

/**
 * Where the synthetic tensor-parallel steps come from: {@link GpuSteps} on real GPUs (cuBLAS GEMMs + our allreduce),
 * or a fake in tests. {@link #start} brings the engine up (static pool, communicator, buffers); only after it returns
 * does {@code serve} report ready.
 */
public interface StepSource extends AutoCloseable {
    /** One allreduce of a step: its message size, the algorithm that ran it and its latency. */
    record AllreduceSample(long bytes, String algorithm, long nanos) {}

    /** Allocates everything and starts the communicator; CUDA OOM propagates as CudaOutOfMemoryException. */
    void start();

    /** Device bytes held by the allreduce buffers of all ranks, split by peer visibility (IPC) and local. */
    long ipcBufferBytes();

    long localBufferBytes();

    /** Device bytes held by the static memory pool (all devices). */
    long staticPoolBytes();

    /** Runs one step (every layer, every configured message size) and reports its allreduces. */
    List<AllreduceSample> step();

    @Override
    void close();
}
