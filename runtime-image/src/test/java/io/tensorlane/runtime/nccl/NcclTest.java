package io.tensorlane.runtime.nccl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.contract.DType;
import java.util.List;
import org.junit.jupiter.api.Test;

class NcclTest {
    @Test
    void searchOrder() {
        assertThat(Nccl.candidates("/opt/x/libnccl.so.2", "/env/libnccl.so.2"))
                .containsExactly("/opt/x/libnccl.so.2", "/env/libnccl.so.2", "libnccl.so.2");
        assertThat(Nccl.candidates(null, " ")).containsExactly("libnccl.so.2");
    }

    @Test
    void versions() {
        assertThat(Nccl.versionString(22809)).isEqualTo("2.28.9");
        assertThat(Nccl.versionString(2708)).isEqualTo("2.7.8");
    }

    @Test
    void dataTypes() {
        assertThat(NcclComm.ncclType(DType.bf16)).isEqualTo(9);
        assertThat(NcclComm.ncclType(DType.fp16)).isEqualTo(6);
        assertThat(NcclComm.ncclType(DType.fp32)).isEqualTo(7);
    }

    @Test
    void missingLibraryNamesEveryPlaceTried() {
        assertThatThrownBy(() -> Nccl.load("/nonexistent/libnccl.so.2"))
                .hasMessageContaining("/nonexistent/libnccl.so.2 (no such file)")
                .hasMessageContaining("Set --nccl-lib or TENSORLANE_NCCL_LIB");
    }

    @Test
    void refusesVirtualRanks() {
        assertThatThrownBy(() -> new NcclComm(null, List.of(0, 0))).hasMessageContaining("distinct GPUs");
    }
}
