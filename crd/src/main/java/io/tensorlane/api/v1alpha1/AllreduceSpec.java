package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/** Allreduce choice between the GPUs of one pod. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class AllreduceSpec {
    @Default("Auto")
    @JsonPropertyDescription(
            "Auto: custom P2P allreduce where the topology allows it, NCCL otherwise. Custom: force the custom kernels "
                    + "(InvalidSpec where P2P is absent). NCCL: always NCCL. Default Auto.")
    public AllreduceMode mode = AllreduceMode.Auto;

    @Default("Auto")
    @JsonPropertyDescription(
            "Custom-kernel algorithm: Auto (by message size from the tuned table), OneStage, TwoStage or Ring "
                    + "(the PCIe-aware variant). Default Auto.")
    public AllreduceAlgorithm algorithm = AllreduceAlgorithm.Auto;

    @Min(4096)
    @Max(1073741824)
    @Default("8388608")
    @JsonPropertyDescription(
            "Largest message (bytes per rank) the custom allreduce handles; sizes its IPC buffers. Larger "
                    + "messages go to NCCL. Default 8 MiB.")
    public Long maxMessageBytes = 8L * 1024 * 1024;

    /** Requested allreduce implementation. */
    public enum AllreduceMode {
        Auto,
        Custom,
        NCCL
    }

    /** Custom-kernel algorithms. */
    public enum AllreduceAlgorithm {
        Auto,
        OneStage,
        TwoStage,
        Ring
    }
}
