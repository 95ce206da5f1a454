package io.tensorlane.runtime.engine;

import static io.tensorlane.runtime.engine.KernelArgs.f;
import static io.tensorlane.runtime.engine.KernelArgs.i;
import static io.tensorlane.runtime.engine.KernelArgs.l;
import static io.tensorlane.runtime.engine.KernelArgs.p;

import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.DType;
import jcuda.Pointer;

/**
 * OneStage's push variant ({@code tl_push.cuh}): every rank stores its input into a region of each peer's push buffer
 * and sums what its peers stored into its own, with no flag and no barrier; a pack's 16-bit "not arrived" pattern is
 * its signal. One one-way trip over the link per call instead of OneStage's two barrier round trips, and the same sum
 * (fp32 in rank order), so the same bits. {@link Communicator#setPush} turns it on for the OneStage calls it fits.
 */
final class PushVariant {
    private PushVariant() {}

    /**
     * Whether the push variant takes a message of {@code count} {@code dtype} elements: two or more ranks, bf16 or fp16
     * (the "not arrived" pattern is -0.0 of a 16-bit type), whole 16-byte packs, within one push region.
     */
    static boolean fits(BufferLayout layout, DType dtype, long count) {
        return layout.worldSize() > 1
                && dtype != DType.fp32
                && count % dtype.elementsPerVector() == 0
                && Math.multiplyExact(count, (long) dtype.bytes()) <= layout.pushSlotBytes();
    }

    /** The plain allreduce's parameters, in the order of {@code TL_PUSH_ENTRY} in tl_allreduce.cu. */
    static Pointer params(
            long input, long output, KernelTables t, long count, int rank, int world, long timeoutNanos, long slot) {
        return Pointer.to(
                p(input),
                p(output),
                p(t.rankData()),
                p(t.pushState()),
                p(t.errorRecord()),
                l(count),
                i(rank),
                i(world),
                l(timeoutNanos),
                l(slot));
    }

    /** The fused allreduce + RMSNorm's parameters, in the order of {@code TL_PUSH_NORM_ENTRY} in tl_allreduce.cu. */
    static Pointer normParams(
            long input, FusedNorm n, KernelTables t, int rank, int world, long timeoutNanos, long slot) {
        return Pointer.to(
                p(input),
                p(t.rankData()),
                p(t.pushState()),
                p(t.errorRecord()),
                i(rank),
                i(world),
                l(timeoutNanos),
                l(slot),
                p(n.residual()),
                p(n.weight()),
                p(n.out()),
                i(n.rows()),
                i(n.hidden()),
                f(n.eps()),
                i(n.mode()));
    }
}
