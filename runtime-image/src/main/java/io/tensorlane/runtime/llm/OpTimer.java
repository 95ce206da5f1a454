package io.tensorlane.runtime.llm;

import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;

import io.tensorlane.runtime.engine.Cuda;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jcuda.driver.CUstream;

/**
 * GPU time per operation of one eager forward pass (bench-model --op-breakdown): a CUDA event after every operation on
 * the rank's stream, the time between consecutive events summed per label. {@link #OFF} records nothing (every normal
 * step and every graph capture). Events are created on first use and reused; one rank's thread uses an instance.
 */
final class OpTimer implements AutoCloseable {
    static final OpTimer OFF = new OpTimer(false);

    private final boolean on;
    private final EventPool events = new EventPool("op timer");
    private final List<String> labels = new ArrayList<>();

    private OpTimer(boolean on) {
        this.on = on;
    }

    static OpTimer create() {
        return new OpTimer(true);
    }

    /** Starts a new pass: the first event, recorded now. */
    void begin(CUstream s) {
        if (!on) {
            return;
        }
        labels.clear();
        record(s);
        labels.add(null);
    }

    /** The operation just enqueued on {@code s} ends here. */
    void mark(String label, CUstream s) {
        if (!on) {
            return;
        }
        record(s);
        labels.add(label);
    }

    /** After the stream finished: milliseconds per label, in the order labels first appeared. */
    Map<String, Double> millis() {
        Map<String, Double> out = new LinkedHashMap<>();
        float[] ms = {0};
        for (int i = 1; i < labels.size(); i++) {
            Cuda.check(cuEventElapsedTime(ms, events.get(i - 1), events.get(i)), "cuEventElapsedTime(op)");
            out.merge(labels.get(i), (double) ms[0], Double::sum);
        }
        return out;
    }

    private void record(CUstream s) {
        Cuda.check(cuEventRecord(events.get(labels.size()), s), "cuEventRecord(op)");
    }

    @Override
    public void close() {
        events.close();
    }
}
