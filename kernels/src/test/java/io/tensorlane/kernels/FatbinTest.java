package io.tensorlane.kernels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class FatbinTest {
  @Test
  void resourceCarriesEveryArchitecture() {
    assumeFalse(Boolean.getBoolean("tensorlane.skipNvcc"), "built with -Dtensorlane.skipNvcc");
    List<Fatbin.Entry> entries = Fatbin.entries(Kernels.fatbin());
    List<Integer> sass = entries.stream().filter(e -> !e.ptx()).map(Fatbin.Entry::arch).distinct().toList();
    assertThat(sass).containsExactlyInAnyOrderElementsOf(Arrays.stream(Kernels.SASS_ARCHES).boxed().toList());
    assertThat(entries).filteredOn(Fatbin.Entry::ptx).extracting(Fatbin.Entry::arch).containsExactly(Kernels.PTX_ARCH);
    assertThat(entries).allSatisfy(e -> assertThat(e.payloadBytes()).isPositive());
  }

  @Test
  void rejectsGarbage() {
    assertThatThrownBy(() -> Fatbin.entries(new byte[32])).hasMessageContaining("bad magic");
  }

  @Test
  void kernelNames() {
    assertThat(Kernels.allreduceKernel(Algorithm.TwoStage, DType.bf16)).isEqualTo("tl_allreduce_twostage_bf16");
    assertThat(Kernels.allreduceKernel(Algorithm.OneStage, DType.fp32)).isEqualTo("tl_allreduce_onestage_fp32");
    assertThatThrownBy(() -> Kernels.allreduceKernel(Algorithm.NCCL, DType.fp16)).hasMessageContaining("not a custom kernel");
    assertThat(DType.bf16.elementsPerVector()).isEqualTo(8);
    assertThat(DType.parse("FP32")).isEqualTo(DType.fp32);
  }
}
