package io.tensorlane.kernels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.DType;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class FatbinTest {
    @Test
    void resourceCarriesEveryArchitecture() {
        assumeFalse(Boolean.getBoolean("tensorlane.skipNvcc"), "built with -Dtensorlane.skipNvcc");
        List<Fatbin.Entry> entries = Fatbin.entries(Kernels.fatbin());
        List<Integer> sass = entries.stream()
                .filter(e -> !e.ptx())
                .map(Fatbin.Entry::arch)
                .distinct()
                .toList();
        assertThat(sass)
                .containsExactlyInAnyOrderElementsOf(
                        Arrays.stream(Kernels.SASS_ARCHES).boxed().toList());
        assertThat(entries)
                .filteredOn(Fatbin.Entry::ptx)
                .extracting(Fatbin.Entry::arch)
                .containsExactly(Kernels.PTX_ARCH);
        assertThat(entries).allSatisfy(e -> assertThat(e.payloadBytes()).isPositive());
        String text = new String(Kernels.fatbin(), java.nio.charset.StandardCharsets.ISO_8859_1);
        for (DType d : List.of(DType.bf16, DType.fp16)) {
            assertThat(text)
                    .contains(Kernels.allreduceNormKernel(d))
                    .contains(Kernels.allreducePushKernel(d))
                    .contains(Kernels.allreducePushNormKernel(d));
        }
    }

    @Test
    void modelResourceCarriesEveryArchitectureAndEveryEntryPoint() {
        assumeFalse(Boolean.getBoolean("tensorlane.skipNvcc"), "built with -Dtensorlane.skipNvcc");
        byte[] bin = Kernels.modelFatbin();
        List<Fatbin.Entry> entries = Fatbin.entries(bin);
        List<Integer> sass = entries.stream()
                .filter(e -> !e.ptx())
                .map(Fatbin.Entry::arch)
                .distinct()
                .toList();
        assertThat(sass)
                .containsExactlyInAnyOrderElementsOf(
                        Arrays.stream(Kernels.SASS_ARCHES).boxed().toList());
        assertThat(entries)
                .filteredOn(Fatbin.Entry::ptx)
                .extracting(Fatbin.Entry::arch)
                .containsExactly(Kernels.PTX_ARCH);
        // The entry names are plain strings in the (uncompressed) ELF symbol tables and PTX.
        String text = new String(bin, java.nio.charset.StandardCharsets.ISO_8859_1);
        for (String base : Kernels.MODEL_TYPED_KERNELS) {
            assertThat(text)
                    .contains(Kernels.modelKernel(base, DType.bf16))
                    .contains(Kernels.modelKernel(base, DType.fp16));
        }
        assertThat(text).contains(Kernels.SAMPLE_KERNEL);
        assertThat(text).contains(Kernels.MOE_ROUTE_KERNEL);
        assertThat(text).contains(Kernels.MOE_SORT_KERNEL);
        assertThat(text).contains(Kernels.SPEC_VERIFY_KERNEL);
        assertThat(text).contains(Kernels.CHAIN_ADVANCE_KERNEL);
        assertThat(text).contains(Kernels.L2_PREFETCH_KERNEL);
    }

    @Test
    void modelKernelNames() {
        assertThat(Kernels.modelKernel("tl_attention", DType.bf16)).isEqualTo("tl_attention_bf16");
        assertThat(Kernels.modelKernel("tl_add_rmsnorm", DType.fp16)).isEqualTo("tl_add_rmsnorm_fp16");
        assertThatThrownBy(() -> Kernels.modelKernel("tl_embed", DType.fp32)).hasMessageContaining("no fp32");
        assertThatThrownBy(() -> Kernels.modelKernel("tl_nope", DType.bf16))
                .hasMessageContaining("unknown model kernel");
    }

    @Test
    void rejectsGarbage() {
        assertThatThrownBy(() -> Fatbin.entries(new byte[32])).hasMessageContaining("bad magic");
    }

    @Test
    void kernelNames() {
        assertThat(Kernels.allreduceKernel(Algorithm.TwoStage, DType.bf16)).isEqualTo("tl_allreduce_twostage_bf16");
        assertThat(Kernels.allreduceKernel(Algorithm.OneStage, DType.fp32)).isEqualTo("tl_allreduce_onestage_fp32");
        assertThatThrownBy(() -> Kernels.allreduceKernel(Algorithm.NCCL, DType.fp16))
                .hasMessageContaining("not a custom kernel");
        assertThat(Kernels.allreduceNormKernel(DType.bf16)).isEqualTo("tl_allreduce_rmsnorm_bf16");
        assertThat(Kernels.allreduceNormKernel(DType.fp16)).isEqualTo("tl_allreduce_rmsnorm_fp16");
        assertThatThrownBy(() -> Kernels.allreduceNormKernel(DType.fp32)).hasMessageContaining("no fp32");
        assertThat(Kernels.allreducePushKernel(DType.bf16)).isEqualTo("tl_allreduce_push_bf16");
        assertThat(Kernels.allreducePushNormKernel(DType.fp16)).isEqualTo("tl_allreduce_push_rmsnorm_fp16");
        assertThatThrownBy(() -> Kernels.allreducePushKernel(DType.fp32)).hasMessageContaining("no fp32");
        assertThatThrownBy(() -> Kernels.allreducePushNormKernel(DType.fp32)).hasMessageContaining("no fp32");
        assertThat(DType.bf16.elementsPerVector()).isEqualTo(8);
        assertThat(DType.parse("FP32")).isEqualTo(DType.fp32);
    }
}
