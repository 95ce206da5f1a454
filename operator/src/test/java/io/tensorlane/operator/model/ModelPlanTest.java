package io.tensorlane.operator.model;

import static io.tensorlane.operator.plan.Fixtures.SETTINGS;
import static io.tensorlane.operator.plan.Fixtures.llama8b;
import static io.tensorlane.operator.plan.Fixtures.node;
import static io.tensorlane.operator.plan.Fixtures.with;
import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.modelfacts.ConfigFacts;
import io.tensorlane.modelfacts.ModelFacts;
import io.tensorlane.modelfacts.TensorTally;
import io.tensorlane.operator.plan.NodeInfo;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Planner;
import io.tensorlane.topology.TopologyFixtures;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Facts read from a real config.json plan exactly as the hand-written geometry; a spec override wins. */
class ModelPlanTest {
    static final List<NodeInfo> NODES =
            List.of(node("pro-0", TopologyFixtures.RTX_PRO_6000_PCIE_8, 0), node("l40s-0", TopologyFixtures.L40S_2, 0));

    /** One file's tally of BF16 tensors: 2 bytes per parameter, no experts. */
    static TensorTally bf16(long bytes) {
        return new TensorTally(Map.of("BF16", bytes), bytes / 2, 0, 0);
    }

    static ModelStatus llama8bFacts() {
        try (InputStream in = ModelPlanTest.class.getResourceAsStream("/model/llama-3.1-8b-instruct.json")) {
            ConfigFacts c = ConfigFacts.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), "config.json");
            // the four safetensors files of Llama-3.1-8B-Instruct hold 16,060,522,496 bytes of BF16 tensors
            ModelFacts f = ModelFacts.of(
                    c,
                    List.of(bf16(4_976_698_672L), bf16(4_999_802_720L), bf16(4_915_916_176L), bf16(1_168_104_928L)),
                    "hf://meta-llama/Llama-3.1-8B-Instruct@main");
            return f.toStatus(
                    "hf://meta-llama/Llama-3.1-8B-Instruct@main",
                    "0e9e39f249a16976918f6564b8830bc894c89659",
                    "2026-11-29T12:00:00Z");
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    static InferenceDeploymentSpec whatAUserWrites(int tp) {
        return with(llama8b(tp), s -> {
            s.model.geometry = null;
            s.model.weightBytes = null;
        });
    }

    @Test
    void planFromConfigJsonEqualsPlanFromHandWrittenGeometry() {
        ModelStatus facts = llama8bFacts();
        assertThat(facts.weightBytes).isEqualTo(16_060_522_496L);
        for (int tp : new int[] {1, 2, 4, 8}) {
            Plan fromConfig = Planner.plan(ModelResolution.fill(whatAUserWrites(tp), facts), NODES, SETTINGS);
            Plan handWritten = Planner.plan(llama8b(tp), NODES, SETTINGS);
            assertThat(fromConfig.ok()).as(fromConfig.message()).isTrue();
            assertThat(fromConfig).as("TP %d", tp).usingRecursiveComparison().isEqualTo(handWritten);
        }
    }

    @Test
    void withoutFactsTheSpecIsNotPlannable() {
        Plan p = Planner.plan(whatAUserWrites(2), NODES, SETTINGS);
        assertThat(p.ok()).isFalse();
        assertThat(p.message()).contains("weightBytes");
    }

    @Test
    void aSpecOverrideWins() {
        ModelStatus facts = llama8bFacts();
        InferenceDeploymentSpec spec = with(whatAUserWrites(2), s -> s.model.weightBytes = 20_000_000_000L);
        InferenceDeploymentSpec filled = ModelResolution.fill(spec, facts);
        assertThat(filled.model.weightBytes).isEqualTo(20_000_000_000L);
        assertThat(filled.model.geometry).usingRecursiveComparison().isEqualTo(facts.geometry);
        assertThat(spec.model.geometry).as("the input is not modified").isNull();

        InferenceDeploymentSpec geo = with(whatAUserWrites(2), s -> s.model.geometry = llama8b(2).model.geometry);
        geo.model.geometry.layers = 40;
        InferenceDeploymentSpec filled2 = ModelResolution.fill(geo, facts);
        assertThat(filled2.model.geometry.layers).isEqualTo(40);
        assertThat(filled2.model.weightBytes).isEqualTo(16_060_522_496L);
        InferenceDeploymentSpec full = with(llama8b(2), s -> s.model.dtype = DType.bf16);
        assertThat(ModelResolution.fill(full, facts))
                .as("nothing to fill: the spec itself")
                .isSameAs(full);
    }

    /**
     * The dtype the plan sizes KV cache and activations with: the spec's when set, else the one inspection read
     * (config.json, else the headers' majority), else bf16. Columns: spec dtype, config.json dtype, header dtypes,
     * the dtype planned.
     */
    static Stream<Arguments> dtypes() {
        return Stream.of(
                Arguments.of(null, "bfloat16", Map.of("BF16", 16_060_522_496L), DType.bf16),
                Arguments.of(null, "float16", Map.of("F16", 16_060_522_496L), DType.fp16),
                Arguments.of(null, "float32", Map.of("F32", 32_121_044_992L), DType.fp32),
                Arguments.of(null, null, Map.of("F32", 32_121_044_992L), DType.fp32),
                Arguments.of(null, "float8_e4m3fn", Map.of("F8_E4M3", 8_030_261_248L), DType.fp8),
                Arguments.of(null, null, Map.of(), DType.bf16),
                Arguments.of(DType.fp16, "float32", Map.of("F32", 32_121_044_992L), DType.fp16),
                Arguments.of(DType.fp32, "bfloat16", Map.of("BF16", 16_060_522_496L), DType.fp32));
    }

    @ParameterizedTest
    @MethodSource("dtypes")
    void thePlanUsesTheDtypeReadFromTheModelWhenTheSpecNamesNone(
            DType specDtype, String configDtype, Map<String, Long> headers, DType planned) {
        ModelStatus facts = llama8bFacts();
        facts.dtype = configDtype;
        facts.weightBytesByDtype = new TreeMap<>(headers);
        InferenceDeploymentSpec spec = with(whatAUserWrites(2), s -> s.model.dtype = specDtype);
        InferenceDeploymentSpec filled = ModelResolution.fill(spec, facts);
        Plan p = Planner.plan(filled, NODES, SETTINGS);
        assertThat(p.ok()).as(p.message()).isTrue();
        // the same plan as a spec that names the expected dtype itself
        Plan explicit = Planner.plan(with(llama8b(2), s -> s.model.dtype = planned), NODES, SETTINGS);
        assertThat(p).usingRecursiveComparison().isEqualTo(explicit);
        // and the KV cache really was sized with it: 2 × 32 layers × 4 KV heads per GPU × 128 × KV dtype bytes per
        // token (auto: the activation dtype, 16 bits for FP8 weights)
        long perToken = 2L * 32 * 4 * 128 * (planned == DType.fp8 ? 2 : planned.bytes());
        assertThat(p.memory().kvCacheTokens()).isEqualTo(p.memory().kvCacheBytes() / perToken);
        assertThat(spec.model.dtype).as("the input is not modified").isEqualTo(specDtype);
    }
}
