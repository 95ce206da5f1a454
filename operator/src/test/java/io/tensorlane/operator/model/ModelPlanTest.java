package io.tensorlane.operator.model;

import static io.tensorlane.operator.plan.Fixtures.SETTINGS;
import static io.tensorlane.operator.plan.Fixtures.llama8b;
import static io.tensorlane.operator.plan.Fixtures.node;
import static io.tensorlane.operator.plan.Fixtures.with;
import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.modelfacts.ConfigFacts;
import io.tensorlane.modelfacts.ModelFacts;
import io.tensorlane.operator.plan.NodeInfo;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Planner;
import io.tensorlane.topology.TopologyFixtures;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Facts read from a real config.json plan exactly as the hand-written geometry; a spec override wins. */
class ModelPlanTest {
  static final List<NodeInfo> NODES = List.of(node("pro-0", TopologyFixtures.RTX_PRO_6000_PCIE_8, 0),
      node("l40s-0", TopologyFixtures.L40S_2, 0));

  static ModelStatus llama8bFacts() {
    try (InputStream in = ModelPlanTest.class.getResourceAsStream("/model/llama-3.1-8b-instruct.json")) {
      ConfigFacts c = ConfigFacts.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), "config.json");
      // the four safetensors files of Llama-3.1-8B-Instruct hold 16,060,522,496 bytes of BF16 tensors
      ModelFacts f = ModelFacts.of(c, List.of(Map.of("BF16", 4_976_698_672L), Map.of("BF16", 4_999_802_720L),
          Map.of("BF16", 4_915_916_176L), Map.of("BF16", 1_168_104_928L)), "hf://meta-llama/Llama-3.1-8B-Instruct@main");
      return f.toStatus("hf://meta-llama/Llama-3.1-8B-Instruct@main", "0e9e39f249a16976918f6564b8830bc894c89659",
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
    InferenceDeploymentSpec full = llama8b(2);
    assertThat(ModelResolution.fill(full, facts)).as("nothing to fill: the spec itself").isSameAs(full);
  }
}
