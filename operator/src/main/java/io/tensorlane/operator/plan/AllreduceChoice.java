package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.AllreduceDecision;
import io.tensorlane.api.v1alpha1.AllreduceDecision.AlgorithmRange;
import io.tensorlane.contract.Allreduce;
import java.util.ArrayList;
import java.util.List;

/**
 * The allreduce the pods use.
 *
 * @param mode Custom (our P2P kernels up to {@code maxMessageBytes}, NCCL above), NCCL, or None (tensor 1)
 * @param table message size to algorithm, ascending; the last row's {@code upToBytes} is {@code maxMessageBytes};
 *     empty unless Custom
 * @param maxMessageBytes largest message the custom allreduce handles (sizes its IPC buffers); 0 unless Custom
 * @param reason one line a person can read, e.g. "PCIe, full P2P, 8 GPUs in 2 NUMA islands → custom: OneStage ≤
 *     64 KiB, Ring above"
 * @param ncclEnv NCCL environment for the topology, each with its reason (empty for NVLink and tensor 1)
 * @param measured the table came from the node's preflight measurement
 */
public record AllreduceChoice(
        Allreduce mode,
        List<AlgorithmRange> table,
        long maxMessageBytes,
        String reason,
        List<NcclEnv> ncclEnv,
        boolean measured) {

    /** One NCCL environment variable and why it is set. */
    public record NcclEnv(String name, String value, String reason) {}

    public AllreduceChoice {
        table = List.copyOf(table);
        ncclEnv = List.copyOf(ncclEnv);
    }

    public boolean custom() {
        return mode == Allreduce.Custom;
    }

    /** The allreduce the pods run by {@code status.allreduce} (written by {@link #toStatus}); None when absent. */
    public static Allreduce of(AllreduceDecision status) {
        return status == null || status.mode == null ? Allreduce.None : status.mode;
    }

    /** The status form ({@code status.allreduce}). */
    public AllreduceDecision toStatus() {
        AllreduceDecision d = new AllreduceDecision();
        d.mode = mode;
        d.table = new ArrayList<>();
        for (AlgorithmRange r : table) {
            d.table.add(new AlgorithmRange(r.upToBytes, r.algorithm));
        }
        d.maxMessageBytes = custom() ? maxMessageBytes : null;
        d.reason = reason;
        return d;
    }
}
