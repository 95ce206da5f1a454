package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.contract.DType;
import org.junit.jupiter.api.Test;

class CublasTest {
    @Test
    void explicitLibraryFirstThenVersion13Then12() {
        assertThat(Cublas.candidates("/opt/x/libcublas.so.13")).first().isEqualTo("/opt/x/libcublas.so.13");
        var c = Cublas.candidates(null);
        assertThat(c).first().isEqualTo("libcublas.so.13");
        assertThat(c.indexOf("libcublas.so.12"))
                .isGreaterThan(c.lastIndexOf("/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcublas.so.13"));
        assertThat(Cublas.candidates(" ")).isEqualTo(c);
    }

    @Test
    void cudaDataTypesAndStatusNames() {
        assertThat(Cublas.cudaType(DType.bf16)).isEqualTo(14);
        assertThat(Cublas.cudaType(DType.fp16)).isEqualTo(2);
        assertThat(Cublas.cudaType(DType.fp32)).isZero();
        assertThat(Cublas.statusName(15)).isEqualTo("NOT_SUPPORTED");
        assertThat(Cublas.statusName(99)).isEqualTo("status 99");
    }
}
