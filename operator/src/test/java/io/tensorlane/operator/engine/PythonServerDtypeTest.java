package io.tensorlane.operator.engine;

import static io.tensorlane.operator.engine.ProfileFixtures.MODEL;
import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.operator.engine.ProfileFixtures.Ar;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The model's dtype as {@code --dtype} for both Python engines (one mapping, {@link PythonServerProfile}); FP8
 * checkpoints get none (the engine's auto: their quantization config decides).
 */
class PythonServerDtypeTest {
    static Stream<Arguments> enginesAndDtypes() {
        return Stream.of(EngineType.SGLang, EngineType.VLLM)
                .flatMap(e -> Stream.of(
                        Arguments.of(e, DType.bf16, "bfloat16"),
                        Arguments.of(e, DType.fp16, "float16"),
                        Arguments.of(e, DType.fp32, "float32"),
                        Arguments.of(e, DType.fp8, null)));
    }

    @ParameterizedTest(name = "{0}: {1} → {2}")
    @MethodSource("enginesAndDtypes")
    void passesTheModelDtype(EngineType engine, DType model, String flag) {
        var spec = ProfileFixtures.spec(engine, 1);
        spec.model.dtype = model;
        List<String> a = EngineProfiles.of(engine)
                .launch(spec, ProfileFixtures.plan(Ar.NONE), MODEL)
                .args();
        if (flag == null) {
            assertThat(a).doesNotContain("--dtype");
        } else {
            assertThat(a).containsSubsequence("--dtype", flag);
            assertThat(a.get(a.indexOf("--dtype") + 1)).isEqualTo(flag);
        }
    }
}
