package io.tensorlane.contract;

/**
 * Custom-allreduce algorithms. Names match {@code io.tensorlane.api.v1alpha1.AllreduceSpec.AllreduceAlgorithm}
 * (without its {@code Auto}, which means "look it up in an {@link AlgorithmTable}"), plus {@link #NCCL}, the
 * fallback a table may route a size range to.
 */
public enum Algorithm {
    /** Every rank reads all peers' inputs and reduces in fp32 in rank order. Latency-optimal, reads N× the data. */
    OneStage(0),
    /** Reduce-scatter into a peer-visible buffer, barrier, all-gather. Bandwidth-optimal over full-mesh links. */
    TwoStage(1),
    /** Reduce-scatter + all-gather around a ring; each GPU pushes only to its right neighbour (PCIe-friendly). */
    Ring(2),
    /** Not a custom kernel: hand the call to NCCL. */
    NCCL(-1);

    private final int kernelCode;

    Algorithm(int kernelCode) {
        this.kernelCode = kernelCode;
    }

    /** The code the CUDA entry point takes (mirrors TL_ALGO_*), or -1 when this is not a custom kernel. */
    public int kernelCode() {
        return kernelCode;
    }

    public boolean isCustom() {
        return kernelCode >= 0;
    }

    /** Parses a name case-insensitively with a clear message on failure. */
    public static Algorithm parse(String name) {
        for (Algorithm a : values()) {
            if (a.name().equalsIgnoreCase(name)) {
                return a;
            }
        }
        throw new IllegalArgumentException(
                "unknown allreduce algorithm '" + name + "', expected one of OneStage, TwoStage, Ring, NCCL");
    }
}
