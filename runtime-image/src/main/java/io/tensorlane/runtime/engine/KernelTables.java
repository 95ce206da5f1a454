package io.tensorlane.runtime.engine;

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
                Pointer.to(new long[] {inputs}),
                Pointer.to(new long[] {rankData}),
                Pointer.to(new long[] {output}),
                Pointer.to(new long[] {state}),
                Pointer.to(new long[] {errorRecord}),
                Pointer.to(new long[] {count}),
                Pointer.to(new int[] {rank}),
                Pointer.to(new int[] {world}),
                Pointer.to(new long[] {timeoutNanos}));
    }
}
