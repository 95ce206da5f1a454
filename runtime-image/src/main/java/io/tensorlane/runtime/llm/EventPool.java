package io.tensorlane.runtime.llm;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;

import io.tensorlane.runtime.engine.Cuda;
import java.util.ArrayList;
import java.util.List;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;

/**
 * Timing events of one rank's thread, created on first use and reused by every later pass (the step's start/end, the
 * per-operation profile, the allreduce timer); {@link #close} destroys them.
 */
final class EventPool implements AutoCloseable {
    private final String what;
    private final List<CUevent> events = new ArrayList<>();

    /** {@code what} names the events in driver errors. */
    EventPool(String what) {
        this.what = what;
    }

    /** Event {@code i}, created (with the ones before it) when first asked for. */
    CUevent get(int i) {
        while (events.size() <= i) {
            CUevent e = new CUevent();
            Cuda.check(cuEventCreate(e, CUevent_flags.CU_EVENT_DEFAULT), "cuEventCreate(" + what + ")");
            events.add(e);
        }
        return events.get(i);
    }

    @Override
    public void close() {
        for (CUevent e : events) {
            cuEventDestroy(e);
        }
        events.clear();
    }
}
