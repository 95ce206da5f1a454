package io.tensorlane.operator.preflight;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.api.v1alpha1.Measurement;
import io.tensorlane.contract.TerminationMessage;

/**
 * The preflight pod's termination message: the JSON of {@link Measurement} (the same type the operator writes to
 * {@code GpuTopology.status.measurement}, so there is one definition of the format), at most {@value #MAX_BYTES}
 * bytes (the kubelet truncates longer messages). On success:
 *
 * <pre>{"worldSize":8,"p2pVerified":true,"selftestPassed":true,
 *  "algorithmTable":[{"upToBytes":524288,"algorithm":"OneStage"},{"upToBytes":8388608,"algorithm":"TwoStage"}],
 *  "latencies":[{"bytes":43008,"customMicros":21.4,"ncclMicros":198.0,"algorithm":"OneStage"}]}</pre>
 *
 * On failure the same object with {@code failure} set (and whatever was verified before it), e.g.
 * {@code {"worldSize":8,"p2pVerified":false,"selftestPassed":false,"failure":"P2P read-back wrong between GPU 2 and 5"}}.
 * The runtime's CUDA-OOM message ({@code {"reason":"CudaOutOfMemory","phase":…,"requestedBytes":…,"freeBytes":…}}) is
 * recognised too. {@code time} is set by the operator (the Job's completion time), not by the pod.
 */
public final class PreflightMessage {
    /** The kubelet keeps at most 4096 bytes of a termination message. */
    public static final int MAX_BYTES = 4096;

    private static final ObjectMapper JSON =
            new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private PreflightMessage() {}

    /** The measurement in {@code message}; a clear {@link IllegalArgumentException} when it is not one. */
    public static Measurement parse(String message) {
        if (message == null || message.isBlank()) {
            throw new IllegalArgumentException("the preflight pod left no termination message");
        }
        JsonNode tree;
        try {
            tree = JSON.readTree(message.trim());
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("the preflight termination message is not JSON ("
                    + e.getOriginalMessage() + "): " + abbreviate(message));
        }
        if (tree == null || !tree.isObject()) {
            throw new IllegalArgumentException(
                    "the preflight termination message is not a JSON object: " + abbreviate(message));
        }
        if (TerminationMessage.CUDA_OUT_OF_MEMORY.equals(tree.path("reason").asText(null))) {
            TerminationMessage oom = TerminationMessage.parse(message.trim());
            Measurement m = new Measurement();
            m.failure = "CUDA out of memory while allocating " + oom.phase() + " (" + oom.requestedBytes()
                    + " bytes requested, " + oom.freeBytes() + " free)";
            return m;
        }
        try {
            return JSON.treeToValue(tree, Measurement.class);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("the preflight termination message is not a measurement ("
                    + e.getOriginalMessage() + "): " + abbreviate(message));
        }
    }

    /**
     * Why {@code m} does not prove the custom allreduce works for {@code worldSize} GPUs, or null when it does: a
     * failure it reports, P2P not verified, selftest not passed, another world size, or no algorithm table.
     */
    public static String problem(Measurement m, int worldSize) {
        if (m.failure != null && !m.failure.isBlank()) {
            return m.failure;
        }
        if (!Boolean.TRUE.equals(m.p2pVerified)) {
            return "P2P was not verified";
        }
        if (!Boolean.TRUE.equals(m.selftestPassed)) {
            return "the custom-allreduce selftest did not pass";
        }
        if (m.worldSize == null || m.worldSize != worldSize) {
            return "the preflight measured " + m.worldSize + " GPUs, " + worldSize + " were asked for";
        }
        if (m.algorithmTable == null || m.algorithmTable.isEmpty()) {
            return "the preflight reported no algorithm table";
        }
        return null;
    }

    /** The JSON form (what the runtime writes); {@link #parse} reads it back. */
    public static String toJson(Measurement m) {
        try {
            return JSON.writeValueAsString(m);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize a measurement", e);
        }
    }

    static String abbreviate(String s) {
        String one = s.replaceAll("\\s+", " ").trim();
        return one.length() > 200 ? one.substring(0, 197) + "..." : one;
    }
}
