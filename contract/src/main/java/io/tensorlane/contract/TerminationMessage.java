package io.tensorlane.contract;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The JSON a runtime container writes to {@code /dev/termination-log} when it dies of a condition the operator
 * acts on, e.g. {@code {"reason":"CudaOutOfMemory","phase":"ipc-buffers","requestedBytes":…,"freeBytes":…}}.
 * Lives here (no CUDA, no Kubernetes dependencies) so that the runtime writes and the operator parses one type.
 *
 * @param reason         {@link #CUDA_OUT_OF_MEMORY} (more reasons may follow)
 * @param phase          what was being allocated: {@link #PHASE_IPC_BUFFERS}, {@link #PHASE_STATIC_POOL}, …
 * @param requestedBytes bytes the phase needed on one GPU
 * @param freeBytes      free device memory when the allocation failed
 * @param totalBytes     the device's total memory, when known
 * @param device         CUDA device ordinal, when known
 * @param rank           tensor-parallel rank, when known
 * @param buffer         the buffer whose allocation failed, when known
 * @param message        one human sentence
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TerminationMessage(
        String reason,
        String phase,
        long requestedBytes,
        long freeBytes,
        Long totalBytes,
        Integer device,
        Integer rank,
        String buffer,
        String message) {
    public static final String CUDA_OUT_OF_MEMORY = "CudaOutOfMemory";
    /** The custom allreduce's buffers ({@link BufferLayout#buffers()}). */
    public static final String PHASE_IPC_BUFFERS = "ipc-buffers";
    /** The static memory pool (weights + KV cache) sized by the memory fraction. */
    public static final String PHASE_STATIC_POOL = "static-pool";
    /** Kubernetes reads at most 4096 bytes of a termination message. */
    public static final int MAX_BYTES = 4096;

    private static final ObjectMapper JSON =
            new ObjectMapper().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    public TerminationMessage {
        if (reason == null || reason.isBlank()) {
            throw new IllegalArgumentException("termination message needs a reason");
        }
        if (phase == null || phase.isBlank()) {
            throw new IllegalArgumentException("termination message needs a phase");
        }
    }

    public static TerminationMessage cudaOom(
            String phase,
            long requestedBytes,
            long freeBytes,
            Long totalBytes,
            Integer device,
            Integer rank,
            String buffer) {
        String msg = "CUDA out of memory in phase " + phase + (buffer == null ? "" : " allocating " + buffer)
                + (device == null ? "" : " on GPU " + device) + ": requested " + requestedBytes + " bytes, " + freeBytes
                + " bytes free";
        return new TerminationMessage(
                CUDA_OUT_OF_MEMORY, phase, requestedBytes, freeBytes, totalBytes, device, rank, buffer, msg);
    }

    /** Compact JSON (one line), at most {@link #MAX_BYTES} bytes. */
    public String toJson() {
        try {
            String json = JSON.writeValueAsString(this);
            if (json.length() > MAX_BYTES && message != null) {
                return new TerminationMessage(
                                reason, phase, requestedBytes, freeBytes, totalBytes, device, rank, buffer, null)
                        .toJson();
            }
            return json;
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize termination message", e);
        }
    }

    public static TerminationMessage parse(String json) {
        try {
            return JSON.readValue(json, TerminationMessage.class);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not a Tensorlane termination message: " + e.getOriginalMessage(), e);
        }
    }
}
