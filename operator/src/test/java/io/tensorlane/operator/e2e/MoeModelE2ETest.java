package io.tensorlane.operator.e2e;

import static io.tensorlane.operator.e2e.ModelInspectionE2ETest.condition;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.api.v1alpha1.EngineSpec;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.status.StatusAggregator;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import io.tensorlane.testkit.hub.Checkpoints;
import io.tensorlane.testkit.hub.LocalHub;
import io.tensorlane.testkit.hub.MoeCheckpoints;
import io.tensorlane.testkit.hub.MoeCheckpoints.Moe;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.topology.TopologyFixtures;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Mixture-of-Experts checkpoints on the local control plane, read from a loopback Hub: the API server keeps
 * status.model's experts, top-k and active parameters (the CRD's schema has them), SGLang and the Tensorlane engine
 * roll the bf16 model out (the Tensorlane pod with the environment of a dense model), FP8 experts on the Tensorlane
 * engine and a TP that cannot split the experts end in InvalidSpec, and a DeepSeek-style config in ModelUnavailable
 * naming its variants.
 */
@WithLocalCluster
class MoeModelE2ETest {
    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static final String SHA = "4444444444444444444444444444444444444444";
    /** 2 layers, 8 experts of 64, top-2. */
    static final Moe TINY =
            new Moe(MoeCheckpoints.Family.QWEN3_MOE, 2, 256, 4, 2, 64, 1000, 512, 8, 2, 64, List.of(), 4096);
    /** The same with experts 65 wide: TP 2 cannot split them. */
    static final Moe ODD =
            new Moe(MoeCheckpoints.Family.QWEN3_MOE, 2, 256, 4, 2, 64, 1000, 512, 8, 2, 65, List.of(), 4096);

    static LocalHub hub;
    static OperatorHarness operator;

    @BeforeAll
    static void start(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) throws Exception {
        hub = new LocalHub();
        hub.put(
                "org/tiny-moe",
                new LocalHub.Repo(SHA, MoeCheckpoints.checkpoint(TINY, Checkpoints.Weights.BF16, 1), null, false));
        hub.put(
                "org/odd-moe",
                new LocalHub.Repo(SHA, MoeCheckpoints.checkpoint(ODD, Checkpoints.Weights.BF16, 1), null, false));
        hub.put(
                "org/tiny-moe-fp8",
                new LocalHub.Repo(SHA, MoeCheckpoints.checkpoint(TINY, Checkpoints.Weights.FP8_BLOCK, 1), null, false));
        hub.put("org/deepseek-like", new LocalHub.Repo(SHA, deepseekLike(), null, false));
        // one node for the SGLang rollout, one for the Tensorlane bf16 one, one for the Tensorlane FP8 one
        sim.addNode(TopologyFixtures.L40S_2);
        sim.addNode(TopologyFixtures.L40S_2);
        sim.addNode(TopologyFixtures.L40S_2);
        operator = OperatorHarness.start(
                client, ns.name(), OperatorHarness.testSettings("tensorlane.model.hub-endpoint", hub.endpoint()));
    }

    /** The tiny checkpoint's headers under a config.json with DeepSeek-V3's MoE and attention fields. */
    static Map<String, byte[]> deepseekLike() throws Exception {
        Map<String, byte[]> files = new LinkedHashMap<>(MoeCheckpoints.checkpoint(TINY, Checkpoints.Weights.BF16, 2));
        Map<String, Object> c = new LinkedHashMap<>(MoeCheckpoints.config(TINY, Checkpoints.Weights.BF16));
        c.put("architectures", List.of("DeepseekV3ForCausalLM"));
        c.put("n_shared_experts", 1);
        c.put("n_group", 8);
        c.put("topk_group", 4);
        c.put("kv_lora_rank", 512);
        files.put("config.json", new ObjectMapper().writeValueAsBytes(c));
        return files;
    }

    @AfterAll
    static void stop() {
        if (operator != null) {
            operator.close();
        }
        if (hub != null) {
            hub.close();
        }
    }

    static InferenceDeployment sglang(String ns, String name, String model) {
        InferenceDeployment d = ModelInspectionE2ETest.userWrites(ns, name, model, 2, 1);
        d.getSpec().engine = new EngineSpec();
        d.getSpec().engine.type = EngineSpec.EngineType.SGLang;
        d.getSpec().engine.image = "lmsysorg/sglang:test";
        return d;
    }

    static String message(InferenceDeployment d, String type) {
        return Conditions.find(d.getStatus().conditions, type).orElseThrow().getMessage();
    }

    @Test
    void aMoeCheckpointShowsItsExpertsAndActiveParametersAndRollsOutOnSglang(
            KubernetesClient client, TestNamespace ns) {
        client.resource(sglang(ns.name(), "moe", "org/tiny-moe")).create();
        InferenceDeployment d = Samples.await(client, ns.name(), "moe", TIMEOUT, Samples.phase(Phase.Ready));

        ModelStatus m = d.getStatus().model;
        assertThat(m.architecture).isEqualTo("Qwen3MoeForCausalLM");
        assertThat(List.of(
                        m.geometry.experts,
                        m.geometry.expertsPerToken,
                        m.geometry.expertIntermediateSize,
                        m.geometry.moeLayers))
                .containsExactly(8, 2, 64, 2);
        long routed = 2L * 8 * 3 * 256 * 64;
        assertThat(m.parameters - m.activeParameters)
                .as("6 of 8 experts per layer unused")
                .isEqualTo(routed * 6 / 8);
        assertThat(m.weightBytes).isEqualTo(2 * m.parameters);
        assertThat(m.activeWeightBytes).isEqualTo(2 * m.activeParameters);
        assertThat(d.getStatus().memoryPlan.weightsBytes)
                .as("every expert, split by TP 2")
                .isEqualTo(m.weightBytes / 2);
    }

    @Test
    void aBf16MoeCheckpointRollsOutOnTheTensorlaneEngineWithTheEnvironmentOfADenseModel(
            KubernetesClient client, TestNamespace ns) {
        client.resource(ModelInspectionE2ETest.userWrites(ns.name(), "moe-tl", "org/tiny-moe", 2, 1))
                .create();
        InferenceDeployment d = Samples.await(client, ns.name(), "moe-tl", TIMEOUT, Samples.phase(Phase.Ready));

        assertThat(d.getSpec().engine.type).isEqualTo(EngineSpec.EngineType.Tensorlane);
        assertThat(d.getStatus().model.geometry.experts).isEqualTo(8);
        assertThat(d.getStatus().memoryPlan.weightsBytes)
                .as("every expert, split by TP 2")
                .isEqualTo(d.getStatus().model.weightBytes / 2);
        Container engine = ModelInspectionE2ETest.deploymentOf(client, ns.name(), "moe-tl")
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0);
        assertThat(engine.getArgs()).containsExactly("serve");
        Map<String, String> env = engine.getEnv().stream()
                .filter(e -> e.getValue() != null)
                .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
        assertThat(env)
                .containsEntry(EngineEnv.MODEL, "org/tiny-moe")
                .containsEntry(EngineEnv.DTYPE, "bf16")
                .containsEntry(EngineEnv.WORLD_SIZE, "2")
                .containsEntry(EngineEnv.KV_CACHE_DTYPE, "bf16")
                .containsEntry(EngineEnv.KV_CACHE_TOKENS, Long.toString(d.getStatus().memoryPlan.kvCacheTokens));
        assertThat(env.keySet())
                .as("the runtime reads the experts from config.json")
                .noneMatch(k -> k.contains("EXPERT") || k.contains("MOE"));
    }

    @Test
    void fp8ExpertsRollOutOnTheTensorlaneEngineAndAnUnsplittableExpertIsInvalidSpec(
            KubernetesClient client, TestNamespace ns) {
        client.resource(ModelInspectionE2ETest.userWrites(ns.name(), "moe-fp8", "org/tiny-moe-fp8", 2, 1))
                .create();
        client.resource(sglang(ns.name(), "moe-odd", "org/odd-moe")).create();

        InferenceDeployment fp8 = Samples.await(client, ns.name(), "moe-fp8", TIMEOUT, Samples.phase(Phase.Ready));
        assertThat(fp8.getStatus().model.quantization.fp8()).isTrue();
        assertThat(ModelInspectionE2ETest.deploymentOf(client, ns.name(), "moe-fp8")
                        .getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .get(0)
                        .getEnv())
                .as("the runtime reads the experts' FP8 layout from config.json")
                .anySatisfy(e -> {
                    assertThat(e.getName()).isEqualTo(EngineEnv.DTYPE);
                    assertThat(e.getValue()).isEqualTo("fp8");
                });
        InferenceDeployment odd = Samples.await(
                client, ns.name(), "moe-odd", TIMEOUT, condition(StatusAggregator.INVALID_SPEC, "InvalidSpec"));
        assertThat(message(odd, StatusAggregator.INVALID_SPEC))
                .contains("spec.parallelism.tensor 2 must divide spec.model.geometry.expertIntermediateSize 65");
        assertThat(odd.getStatus().model.geometry.expertIntermediateSize).isEqualTo(65);
        assertThat(ModelInspectionE2ETest.deploymentOf(client, ns.name(), "moe-odd"))
                .isNull();
    }

    @Test
    void aDeepseekStyleConfigNamesItsVariants(KubernetesClient client, TestNamespace ns) {
        client.resource(sglang(ns.name(), "dsv3", "org/deepseek-like")).create();
        InferenceDeployment d = Samples.await(
                client,
                ns.name(),
                "dsv3",
                TIMEOUT,
                condition(StatusAggregator.MODEL_UNAVAILABLE, "UnsupportedArchitecture"));
        assertThat(message(d, StatusAggregator.MODEL_UNAVAILABLE))
                .contains(
                        "architecture DeepseekV3ForCausalLM uses shared experts (DeepSeek style) (n_shared_experts 1), "
                                + "grouped top-k routing (n_group 8, topk_group 4), multi-head latent attention "
                                + "(kv_lora_rank 512)");
        assertThat(ModelInspectionE2ETest.deploymentOf(client, ns.name(), "dsv3"))
                .isNull();
    }
}
