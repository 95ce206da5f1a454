package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.contract.DType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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
    void cublasLtIsFoundBesideAnExplicitCublasOrByItsOwnVariable() {
        assertThat(CublasLt.candidates(null, "/opt/x/libcublas.so.13")).first().isEqualTo("/opt/x/libcublasLt.so.13");
        assertThat(CublasLt.candidates("/y/libcublasLt.so.12", "/opt/x/libcublas.so.13"))
                .first()
                .isEqualTo("/y/libcublasLt.so.12");
        var c = CublasLt.candidates(null, null);
        assertThat(c).first().isEqualTo("libcublasLt.so.13");
        assertThat(c).contains("/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcublasLt.so.13", "libcublasLt.so.12");
        assertThat(c).noneMatch(n -> n.contains("libcublas.so"));
    }

    @Test
    void fp8ScaleModesAndShapesCublasLtTakes() {
        // cublasLtMatmulMatrixScale_t (cublasLt.h of CUDA 13.0): VEC128_32F 4, BLK128x128_32F 5
        assertThat(CublasLt.Fp8Scaling.BLOCK.weightMode).isEqualTo(5);
        assertThat(CublasLt.Fp8Scaling.BLOCK.activationMode).isEqualTo(4);
        assertThat(CublasLt.Fp8Scaling.ROW.weightMode).isEqualTo(4);
        assertThat(CublasLt.Fp8Scaling.ROW.activationMode).isEqualTo(4);
        assertThat(CublasLt.fits(4096, 1024, 1024, DType.bf16)).isTrue();
        assertThat(CublasLt.fits(4104, 1024, 1024, DType.bf16)).isFalse(); // e4m3 rows of 16 bytes
        assertThat(CublasLt.fits(4096, 1000, 1000, DType.bf16)).isFalse();
        assertThat(CublasLt.fits(4096, 1024, 1028, DType.fp16)).isFalse(); // output rows of 16 bytes
    }

    @ParameterizedTest(name = "{0} tokens, buffers of {1} rows -> {2}")
    @CsvSource({
        "1, 64, 4",
        "2, 64, 4",
        "4, 64, 4",
        "5, 64, 8",
        "765, 2048, 768",
        "300, 300, 300",
        "2047, 2048, 2048",
        "2046, 2047, 2046",
        "3, 3, 3"
    })
    void tokenRowsAreRoundedUpToFourWhereTheBuffersHoldThem(int n, int max, int rows) {
        assertThat(CublasLt.tokenRows(n, max)).isEqualTo(rows);
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
