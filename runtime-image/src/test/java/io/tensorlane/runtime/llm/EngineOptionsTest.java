package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.AlgorithmTable;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class EngineOptionsTest {
    private static EngineOptions base(int tp) {
        return new EngineOptions(Path.of("m"), tp, false, 8, 512, 1024, 0, 0.9, 8, true, false, null, 16);
    }

    @Test
    void withoutAPlanTheEngineSizesItsBuffers() {
        EngineOptions o = base(2);
        assertThat(o.table()).isNull();
        assertThat(o.maxMessageBytes()).isZero();
    }

    @Test
    void theOperatorsPlanIsCarried() {
        AlgorithmTable t = AlgorithmTable.single(2, Algorithm.OneStage, 1 << 20);
        EngineOptions o = base(2).withAllreducePlan(t, 8 << 20);
        assertThat(o.table()).isEqualTo(t);
        assertThat(o.maxMessageBytes()).isEqualTo(8 << 20);
        assertThat(o.tp()).isEqualTo(2);
        assertThat(o.maxBatchTokens()).isEqualTo(512);
    }

    @Test
    void badValuesAreNamed() {
        assertThatThrownBy(() -> base(4).withAllreducePlan(AlgorithmTable.single(2, Algorithm.OneStage, 1024), 0))
                .hasMessageContaining("world size 2")
                .hasMessageContaining("4 ranks");
        assertThatThrownBy(() -> base(2).withAllreducePlan(null, -1)).hasMessageContaining("max message bytes");
        assertThatThrownBy(() -> base(9)).hasMessageContaining("--tp must be 1..8");
        assertThatThrownBy(() -> new EngineOptions(Path.of("m"), 1, false, 8, 4, 0, 0, 0.9, 8, true, false, null, 16))
                .hasMessageContaining("max batch tokens");
        assertThatThrownBy(() -> new EngineOptions(Path.of("m"), 1, false, 8, 64, 0, 0, 1.5, 8, true, false, null, 16))
                .hasMessageContaining("memory fraction");
        assertThatThrownBy(() -> new EngineOptions(Path.of("m"), 1, false, 8, 64, 0, 0, 0.9, 8, true, false, null, 12))
                .hasMessageContaining("power of two");
        assertThatThrownBy(() -> base(1).withVerifyTokens(9)).hasMessageContaining("verify tokens (9)");
        assertThatThrownBy(() -> base(1).withVerifyTokens(-1)).hasMessageContaining("verify tokens (-1)");
    }

    @Test
    void verifyTokensSurviveTheOtherWithers() {
        EngineOptions o = new EngineOptions(Path.of("m"), 2, false, 4, 512, 1024, 0, 0.9, 20, true, false, null, 16)
                .withVerifyTokens(20)
                .withAllreducePlan(null, 0)
                .withBaselineKernels(true)
                .withKvCacheDtype(KvCacheDtype.FP8);
        assertThat(o.verifyTokens()).isEqualTo(20);
        assertThat(o.decodeTokens()).isEqualTo(20);
        assertThat(base(2).decodeTokens()).isEqualTo(9); // no speculation: a token a sequence and the spare row
    }
}
