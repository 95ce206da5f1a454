package io.tensorlane.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class TerminationMessageTest {
    @Test
    void cudaOomFormat() throws Exception {
        TerminationMessage m =
                TerminationMessage.cudaOom("ipc-buffers", 18874880L, 1024L, 150_000_000_000L, 3, 3, "staging");
        JsonNode n = new ObjectMapper().readTree(m.toJson());
        assertThat(n.get("reason").asText()).isEqualTo("CudaOutOfMemory");
        assertThat(n.get("phase").asText()).isEqualTo("ipc-buffers");
        assertThat(n.get("requestedBytes").asLong()).isEqualTo(18874880L);
        assertThat(n.get("freeBytes").asLong()).isEqualTo(1024L);
        assertThat(n.get("device").asInt()).isEqualTo(3);
        assertThat(n.get("buffer").asText()).isEqualTo("staging");
        assertThat(n.get("message").asText()).contains("requested 18874880 bytes, 1024 bytes free");
        assertThat(m.toJson()).doesNotContain("\n");
        assertThat(TerminationMessage.parse(m.toJson())).isEqualTo(m);
    }

    @Test
    void omitsUnknownFieldsAndParsesMinimal() {
        TerminationMessage m = TerminationMessage.parse(
                "{\"reason\":\"CudaOutOfMemory\",\"phase\":\"static-pool\",\"requestedBytes\":5,\"freeBytes\":1,\"extra\":true}");
        assertThat(m.phase()).isEqualTo(TerminationMessage.PHASE_STATIC_POOL);
        assertThat(m.device()).isNull();
        assertThat(new TerminationMessage("CudaOutOfMemory", "x", 1, 0, null, null, null, null, null).toJson())
                .isEqualTo("{\"reason\":\"CudaOutOfMemory\",\"phase\":\"x\",\"requestedBytes\":1,\"freeBytes\":0}");
    }

    @Test
    void rejectsBadInput() {
        assertThatThrownBy(() -> TerminationMessage.parse("OOM!"))
                .hasMessageContaining("not a Tensorlane termination message");
        assertThatThrownBy(() -> TerminationMessage.parse("{\"phase\":\"x\"}")).hasMessageContaining("needs a reason");
    }
}
