package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.tensorlane.contract.Allreduce;
import java.util.ArrayList;
import java.util.List;

/** Which allreduce the pods use, and why. */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public class AllreduceDecision {
    @JsonPropertyDescription("Chosen implementation: Custom, NCCL or None (tensor parallelism 1).")
    public Allreduce mode;

    @JsonPropertyDescription("Message size to algorithm table for the custom allreduce, ascending by upToBytes.")
    public List<AlgorithmRange> table = new ArrayList<>();

    @JsonPropertyDescription("Largest message handled by the custom allreduce; larger ones go to NCCL.")
    public Long maxMessageBytes;

    @JsonPropertyDescription("Why this was chosen.")
    public String reason;

    /** One row of the size table: messages up to upToBytes (inclusive) use algorithm. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class AlgorithmRange {
        @JsonPropertyDescription("Upper bound (inclusive) of the message size in bytes.")
        public Long upToBytes;

        @JsonPropertyDescription("Algorithm: OneStage, TwoStage or Ring.")
        public String algorithm;

        public AlgorithmRange() {}

        public AlgorithmRange(long upToBytes, String algorithm) {
            this.upToBytes = upToBytes;
            this.algorithm = algorithm;
        }
    }
}
