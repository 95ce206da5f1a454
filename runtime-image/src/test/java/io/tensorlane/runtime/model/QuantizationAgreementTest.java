package io.tensorlane.runtime.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.ModelQuantization;
import io.tensorlane.modelfacts.ConfigJson;
import io.tensorlane.modelfacts.QuantizationConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The operator's lenient reading of quantization_config (crd: {@link QuantizationConfig}, what it plans from) and the
 * engine's strict one ({@link QuantizationParser}, what it loads) name the same weight layout for every format the
 * engine runs: two readers of one field, held together here.
 */
class QuantizationAgreementTest {
    static final Map<Quantization.Method, ModelQuantization.Weights> SAME = Map.of(
            Quantization.Method.FP8_BLOCK, ModelQuantization.Weights.FP8Block,
            Quantization.Method.FP8_CHANNEL, ModelQuantization.Weights.FP8Channel,
            Quantization.Method.FP8_TENSOR, ModelQuantization.Weights.FP8Tensor);

    @Test
    void everyFormatTheEngineRunsIsPlannedAsTheSameLayout() {
        String[] configs = {
            QuantizationTest.QWEN3_FP8,
            "{'quant_method': 'fp8', 'activation_scheme': 'static'}",
            QuantizationTest.FP8_DYNAMIC,
            QuantizationTest.FP8_DYNAMIC.replace("'channel'", "'tensor'"),
            QuantizationTest.FP8_DYNAMIC.replace(
                    "'strategy': 'channel'", "'strategy': 'block', 'block_structure': [128, 128]")
        };
        for (String qc : configs) {
            Quantization engine = QuantizationParser.parse(QuantizationTest.json(qc));
            ModelQuantization planned = QuantizationConfig.read(
                    ConfigJson.parse(("{'quantization_config': " + qc + "}").replace('\'', '"'), "config.json"));
            assertThat(planned).as(qc).isNotNull();
            assertThat(planned.weights).as(qc).isEqualTo(SAME.get(engine.method()));
        }
    }
}
