package io.tensorlane.runtime.llm;

import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventRecordWithFlags;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.runtime.engine.Cuda;
import java.util.ArrayList;
import java.util.List;
import jcuda.driver.CUstream;

/**
 * GPU time of each allreduce of a forward pass on rank 0's stream: a CUDA event before and after every call, for the
 * sampled steps that serve's {@code tensorlane_allreduce_latency_seconds} reports. The time runs from the moment rank
 * 0's stream reaches the call to the end of the call on it, so a rank that arrives late at the allreduce shows in it,
 * as it does in the step. Eagerly run passes record the events directly; a pass being captured into a CUDA graph
 * records them as event-record nodes ({@code CU_EVENT_RECORD_EXTERNAL}), so every replay of that graph records them
 * again. Events are created on first use and shared by every timed pass (one timed pass runs at a time: the engine
 * synchronizes after each step). One rank's thread uses an instance.
 */
final class AllreduceTimer implements AutoCloseable {
    /** What {@link #before}/{@link #after} do. */
    enum Mode {
        OFF,
        EAGER,
        CAPTURE
    }

    /** The algorithms of one timed pass's calls, in order (call i used events 2i and 2i+1). */
    record Pass(List<Algorithm> calls) {}

    private static final int CU_EVENT_RECORD_EXTERNAL = 1;

    private final EventPool events = new EventPool("allreduce timer");
    private Mode mode = Mode.OFF;
    private List<Algorithm> calls = new ArrayList<>();

    /** Starts a new timed pass in {@code m} (or stops timing with {@link Mode#OFF}). */
    void begin(Mode m) {
        mode = m;
        calls = new ArrayList<>();
    }

    /** The calls timed since {@link #begin}; timing stops. */
    Pass end() {
        mode = Mode.OFF;
        return new Pass(List.copyOf(calls));
    }

    boolean on() {
        return mode != Mode.OFF;
    }

    /** Before an allreduce is enqueued on {@code s}. */
    void before(CUstream s) {
        if (mode != Mode.OFF) {
            record(2 * calls.size(), s);
        }
    }

    /** After the allreduce ({@code a}) was enqueued on {@code s}. */
    void after(Algorithm a, CUstream s) {
        if (mode != Mode.OFF) {
            record(2 * calls.size() + 1, s);
            calls.add(a);
        }
    }

    /**
     * After the stream that ran {@code pass} finished: each call's time in nanoseconds, in order. Throws when the
     * driver cannot time the events (the caller then stops sampling).
     */
    long[] nanos(Pass pass) {
        long[] out = new long[pass.calls().size()];
        float[] ms = {0};
        for (int i = 0; i < out.length; i++) {
            Cuda.check(
                    cuEventElapsedTime(ms, events.get(2 * i), events.get(2 * i + 1)), "cuEventElapsedTime(allreduce)");
            out[i] = Math.round(ms[0] * 1e6);
        }
        return out;
    }

    private void record(int i, CUstream s) {
        if (mode == Mode.CAPTURE) {
            Cuda.check(
                    cuEventRecordWithFlags(events.get(i), s, CU_EVENT_RECORD_EXTERNAL),
                    "cuEventRecordWithFlags(allreduce, external)");
        } else {
            Cuda.check(cuEventRecord(events.get(i), s), "cuEventRecord(allreduce)");
        }
    }

    @Override
    public void close() {
        events.close();
    }
}
