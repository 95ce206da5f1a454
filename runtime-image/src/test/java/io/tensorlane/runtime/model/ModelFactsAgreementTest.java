package io.tensorlane.runtime.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.ModelGeometry;
import io.tensorlane.modelfacts.ConfigFacts;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The operator plans from {@link ConfigFacts} (crd module), the engine runs from {@link ModelConfig}, which is built
 * from the same ConfigFacts plus engine-only fields: this test fails when ModelConfig's geometry drifts from the facts
 * or the two support different architectures.
 */
class ModelFactsAgreementTest {
    static Stream<Path> configs() throws IOException {
        return Files.list(Path.of("src/test/resources/model"))
                .filter(p -> p.toString().endsWith(".json"))
                .sorted();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("configs")
    void theOperatorsGeometryIsTheEnginesGeometry(Path file) throws IOException {
        String json = Files.readString(file, StandardCharsets.UTF_8);
        ModelConfig engine = ModelConfig.parse(json, file.toString());
        ConfigFacts facts = ConfigFacts.parse(json, file.toString());
        ModelGeometry g = facts.geometry();
        assertThat(facts.architecture()).isEqualTo(engine.architecture().hfName());
        assertThat(new int[] {
                    g.layers,
                    g.hiddenSize,
                    g.attentionHeads,
                    g.kvHeads,
                    g.effectiveHeadDim(),
                    g.vocabSize,
                    g.effectiveIntermediateSize()
                })
                .as(file.toString())
                .containsExactly(
                        engine.numLayers(),
                        engine.hiddenSize(),
                        engine.numHeads(),
                        engine.numKvHeads(),
                        engine.headDim(),
                        engine.vocabSize(),
                        engine.intermediateSize());
        assertThat(facts.maxPositionEmbeddings()).isEqualTo(engine.maxPositionEmbeddings());
    }

    @Test
    void bothSupportTheSameArchitectures() {
        assertThat(ConfigFacts.READ)
                .containsExactlyInAnyOrderElementsOf(Arrays.stream(Architecture.values())
                        .map(Architecture::hfName)
                        .toList());
    }
}
