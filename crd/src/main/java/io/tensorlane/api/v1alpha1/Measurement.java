package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.ArrayList;
import java.util.List;

/** What a preflight (selftest + short bench) measured on the node. */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public class Measurement {
    @JsonPropertyDescription("When it ran (RFC 3339).")
    public String time;

    @JsonPropertyDescription("Number of GPUs the preflight used.")
    public Integer worldSize;

    @JsonPropertyDescription("Whether P2P transfers were verified by a real write/read-back.")
    public Boolean p2pVerified;

    @JsonPropertyDescription("Whether the custom-allreduce selftest passed on every rank.")
    public Boolean selftestPassed;

    @JsonPropertyDescription("Why the preflight failed (absent on success).")
    public String failure;

    @JsonPropertyDescription("Tuned message size to algorithm table.")
    public List<AllreduceDecision.AlgorithmRange> algorithmTable = new ArrayList<>();

    @JsonPropertyDescription("Latencies measured per message size.")
    public List<Latency> latencies = new ArrayList<>();

    /** One latency row. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Latency {
        @JsonPropertyDescription("Message bytes per rank.")
        public Long bytes;

        @JsonPropertyDescription("Best custom algorithm median latency in microseconds.")
        public Double customMicros;

        @JsonPropertyDescription("NCCL median latency in microseconds.")
        public Double ncclMicros;

        @JsonPropertyDescription("Best custom algorithm at this size.")
        public String algorithm;
    }
}
