package io.tensorlane.operator.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.ModelQuantization;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.status.StatusAggregator;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import io.tensorlane.testkit.hub.Checkpoints;
import io.tensorlane.testkit.hub.LocalHub;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.topology.TopologyFixtures;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An FP8 checkpoint on the local control plane: the operator reads its quantization_config and headers from a loopback
 * Hub, the API server keeps status.model.quantization and status.memoryPlan.kvCacheDtype, the Tensorlane engine gets
 * the planned KV dtype, and an FP8 KV cache for it is planned at 1 byte an element (twice the tokens in the same
 * bytes) and rendered as TENSORLANE_KV_CACHE_DTYPE=fp8.
 */
@WithLocalCluster
class Fp8ModelE2ETest {
    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static final String SHA = "3333333333333333333333333333333333333333";
    static final Checkpoints.Llama GEOMETRY = new Checkpoints.Llama(2, 320, 4, 2, 1000, 864, 4096, false);
    static LocalHub hub;
    static OperatorHarness operator;

    @BeforeAll
    static void start(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) throws Exception {
        hub = new LocalHub();
        hub.put(
                "org/tiny-fp8",
                new LocalHub.Repo(SHA, Checkpoints.llama(GEOMETRY, Checkpoints.Weights.FP8_BLOCK, 1), null, false));
        sim.addNode(TopologyFixtures.L40S_2);
        operator = OperatorHarness.start(
                client, ns.name(), OperatorHarness.testSettings("tensorlane.model.hub-endpoint", hub.endpoint()));
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

    static Map<String, String> engineEnv(Deployment d) {
        return d.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv().stream()
                .filter(e -> e.getValue() != null)
                .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
    }

    @Test
    void anFp8CheckpointIsPlannedWithABf16KvCacheAndAnFp8KvCacheHoldsTwiceTheTokens(
            KubernetesClient client, TestNamespace ns) {
        client.resource(ModelInspectionE2ETest.userWrites(ns.name(), "fp8", "org/tiny-fp8", 2, 1))
                .create();
        InferenceDeployment d = Samples.await(client, ns.name(), "fp8", TIMEOUT, Samples.phase(Phase.Ready));

        ModelQuantization q = d.getStatus().model.quantization;
        assertThat(q.method).isEqualTo("fp8");
        assertThat(q.weights).isEqualTo(ModelQuantization.Weights.FP8Block);
        assertThat(q.format).isEqualTo("fp8 block 128x128");
        assertThat(d.getStatus().model.dtype).isEqualTo("bfloat16");
        assertThat(d.getStatus().model.weightBytesByDtype).containsOnlyKeys("BF16", "F8_E4M3", "F32");
        assertThat(d.getStatus().memoryPlan.kvCacheDtype).isEqualTo("bf16");
        Deployment running = client.apps()
                .deployments()
                .inNamespace(ns.name())
                .withName("fp8")
                .get();
        assertThat(engineEnv(running))
                .containsEntry(EngineEnv.DTYPE, "fp8")
                .containsEntry(EngineEnv.KV_CACHE_DTYPE, "bf16")
                .containsEntry(EngineEnv.KV_CACHE_TOKENS, Long.toString(d.getStatus().memoryPlan.kvCacheTokens));
        long bf16Tokens = d.getStatus().memoryPlan.kvCacheTokens;

        client.resources(InferenceDeployment.class)
                .inNamespace(ns.name())
                .withName("fp8")
                .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"serving\":{\"kvCacheDtype\":\"fp8\"}}}");
        InferenceDeployment fp8 = Samples.await(
                client,
                ns.name(),
                "fp8",
                TIMEOUT,
                x -> x.getMetadata().getGeneration().equals(x.getStatus().observedGeneration)
                        && x.getStatus().memoryPlan != null
                        && "fp8".equals(x.getStatus().memoryPlan.kvCacheDtype));
        assertThat(Conditions.isTrue(fp8.getStatus().conditions, StatusAggregator.INVALID_SPEC))
                .as("an FP8 KV cache is the engine's own")
                .isFalse();
        // the same KV bytes at 1 byte an element instead of 2
        assertThat(fp8.getStatus().memoryPlan.kvCacheBytes).isEqualTo(d.getStatus().memoryPlan.kvCacheBytes);
        assertThat(fp8.getStatus().memoryPlan.kvCacheTokens).isBetween(2 * bf16Tokens, 2 * bf16Tokens + 1);
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        Map<String, String> env = Map.of();
        while (System.nanoTime() < deadline) {
            env = engineEnv(client.apps()
                    .deployments()
                    .inNamespace(ns.name())
                    .withName("fp8")
                    .get());
            if ("fp8".equals(env.get(EngineEnv.KV_CACHE_DTYPE))) {
                break;
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        assertThat(env)
                .containsEntry(EngineEnv.KV_CACHE_DTYPE, "fp8")
                .containsEntry(EngineEnv.KV_CACHE_TOKENS, Long.toString(fp8.getStatus().memoryPlan.kvCacheTokens));
    }
}
