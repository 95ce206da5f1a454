package io.tensorlane.runtime.engine;

import static io.tensorlane.runtime.engine.KernelArgs.i;
import static io.tensorlane.runtime.engine.KernelArgs.l;
import static io.tensorlane.runtime.engine.KernelArgs.p;

import jcuda.Pointer;

/**
 * The device addresses every allreduce entry takes (each pointer as its 64-bit address, no reliance on JCuda's pointer
 * offsets): the input pointer table of the call's slot, the rank-data buffer, the epoch counters, the watchdog record
 * and the push variant's call counter.
 */
record KernelTables(long inputs, long rankData, long state, long errorRecord, long pushState) {
    /** The parameters of {@code TL_ENTRY} in tl_allreduce.cu (OneStage, TwoStage, Ring). */
    Pointer params(long output, long count, int rank, int world, long timeoutNanos) {
        return Pointer.to(
                p(inputs),
                p(rankData),
                p(output),
                p(state),
                p(errorRecord),
                l(count),
                i(rank),
                i(world),
                l(timeoutNanos));
    }
}
