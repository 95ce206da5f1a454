package io.tensorlane.operator.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.api.v1alpha1.SpeculativeSpec;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.operator.render.ModelVolumes;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.status.StatusAggregator;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import io.tensorlane.testkit.hub.Checkpoints;
import io.tensorlane.testkit.hub.LocalHub;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.testkit.sim.SimAction;
import io.tensorlane.testkit.sim.SimRule;
import io.tensorlane.topology.TopologyFixtures;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Draft-model speculation on the local control plane: the operator reads the target and the draft from a loopback Hub
 * (status.model, status.draftModel), plans both (status.memoryPlan.draftWeightsBytes, draftKvCacheBytes), and the
 * Deployment the API server stores fetches the draft into its own volume and hands the Tensorlane runtime {@code
 * draft:<dir>,k=K}; a draft model that does not exist ends in ModelUnavailable naming the field, a draft model with
 * method ngram in InvalidSpec. Under the simulator's computed OOM rule (SimMemory, which counts the draft where the
 * runtime puts it) the plan with the draft starts, and the fraction of the same deployment without the draft does not.
 */
@WithLocalCluster
class DraftModelE2ETest {
    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static final String TARGET_SHA = "4444444444444444444444444444444444444444";
    static final String DRAFT_SHA = "5555555555555555555555555555555555555555";
    static final Checkpoints.Llama TARGET = new Checkpoints.Llama(4, 320, 4, 2, 1000, 864, 4096, false);
    static final Checkpoints.Llama DRAFT = new Checkpoints.Llama(1, 128, 2, 1, 1000, 256, 4096, false);
    static LocalHub hub;
    static OperatorHarness operator;

    @BeforeAll
    static void start(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) throws Exception {
        hub = new LocalHub();
        hub.put(
                "org/target",
                new LocalHub.Repo(TARGET_SHA, Checkpoints.llama(TARGET, Checkpoints.Weights.BF16, 2), null, false));
        hub.put(
                "org/target-draft",
                new LocalHub.Repo(DRAFT_SHA, Checkpoints.llama(DRAFT, Checkpoints.Weights.BF16, 1), null, false));
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

    static InferenceDeployment withDraft(String ns, String name, SpeculativeSpec.Method method, String draft) {
        InferenceDeployment d = ModelInspectionE2ETest.userWrites(ns, name, "org/target", 2, 1);
        d.getSpec().serving.speculative = new SpeculativeSpec();
        d.getSpec().serving.speculative.method = method;
        d.getSpec().serving.speculative.numSpeculativeTokens = 3;
        d.getSpec().serving.speculative.draftModel = new ModelSpec();
        d.getSpec().serving.speculative.draftModel.name = draft;
        return d;
    }

    static PodSpec podOf(KubernetesClient client, String ns, String name) {
        return client.apps()
                .deployments()
                .inNamespace(ns)
                .withName(name)
                .get()
                .getSpec()
                .getTemplate()
                .getSpec();
    }

    @Test
    void aDraftModelIsReadPlannedFetchedAndHandedToTheRuntime(KubernetesClient client, TestNamespace ns) {
        client.resource(withDraft(ns.name(), "spec", SpeculativeSpec.Method.draft, "org/target-draft"))
                .create();
        InferenceDeployment d = Samples.await(client, ns.name(), "spec", TIMEOUT, Samples.phase(Phase.Ready));

        assertThat(d.getStatus().model.revision).isEqualTo(TARGET_SHA);
        assertThat(d.getStatus().draftModel.revision).isEqualTo(DRAFT_SHA);
        assertThat(d.getStatus().draftModel.geometry.layers).isEqualTo(1);
        // the Tensorlane runtime holds the whole draft on rank 0's GPU, and its cache for the target's token count
        assertThat(d.getStatus().memoryPlan.draftWeightsBytes).isEqualTo(d.getStatus().draftModel.weightBytes);
        long draftKvPerToken = 2L * 1 * 1 * 64 * 2; // K and V, 1 layer, 1 KV head of 64, bf16
        assertThat(d.getStatus().memoryPlan.draftKvCacheBytes)
                .isEqualTo(d.getStatus().memoryPlan.kvCacheTokens * draftKvPerToken);

        PodSpec pod = podOf(client, ns.name(), "spec");
        String dir = ModelVolumes.DRAFT_MOUNT + "/org--target-draft--" + DRAFT_SHA;
        Map<String, String> env = pod.getContainers().get(0).getEnv().stream()
                .filter(e -> e.getValue() != null)
                .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
        assertThat(env).containsEntry(EngineEnv.SPECULATIVE, "draft:" + dir + ",k=3");
        assertThat(pod.getInitContainers())
                .extracting(Container::getName)
                .containsExactly(ModelVolumes.INIT_CONTAINER, ModelVolumes.DRAFT_INIT_CONTAINER);
        Container fetch = pod.getInitContainers().get(1);
        assertThat(fetch.getArgs())
                .containsExactly("fetch-model", "--source", "hf://org/target-draft@" + DRAFT_SHA, "--dest", dir);
        assertThat(pod.getVolumes())
                .extracting(Volume::getName)
                .contains(ModelVolumes.VOLUME, ModelVolumes.DRAFT_VOLUME);
    }

    @Test
    void aDraftModelThatDoesNotExistIsModelUnavailableNamingTheField(KubernetesClient client, TestNamespace ns) {
        client.resource(withDraft(ns.name(), "missing", SpeculativeSpec.Method.draft, "org/no-such-draft"))
                .create();
        InferenceDeployment d = Samples.await(
                client,
                ns.name(),
                "missing",
                TIMEOUT,
                ModelInspectionE2ETest.condition(StatusAggregator.MODEL_UNAVAILABLE, "ModelNotFound"));
        assertThat(Conditions.find(d.getStatus().conditions, StatusAggregator.MODEL_UNAVAILABLE)
                        .orElseThrow()
                        .getMessage())
                .startsWith("spec.serving.speculative.draftModel: ")
                .contains("org/no-such-draft");
        assertThat(client.apps()
                        .deployments()
                        .inNamespace(ns.name())
                        .withName("missing")
                        .get())
                .isNull();
    }

    @Test
    void aDraftModelWithMethodNgramIsInvalidSpec(KubernetesClient client, TestNamespace ns) {
        client.resource(withDraft(ns.name(), "ngram", SpeculativeSpec.Method.ngram, "org/target-draft"))
                .create();
        InferenceDeployment d = Samples.await(
                client,
                ns.name(),
                "ngram",
                TIMEOUT,
                x -> x.getStatus() != null
                        && Conditions.isTrue(x.getStatus().conditions, StatusAggregator.INVALID_SPEC));
        assertThat(Conditions.find(d.getStatus().conditions, StatusAggregator.INVALID_SPEC)
                        .orElseThrow()
                        .getMessage())
                .contains("spec.serving.speculative." + SpeculativeSpec.NGRAM_TAKES_NO_MODEL);
    }

    /**
     * The simulator's OOM rule counts the draft as the plan does: with it, the auto plan of a deployment with a draft
     * starts; the auto fraction of its n-gram twin (the same target and k, no draft: a plan without the draft's
     * activations and CUDA graphs) forced onto the draft deployment dies of CUDA OOM at start-up.
     */
    @Test
    void aPlanWithTheDraftStartsAndTheFractionWithoutItOoms(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        sim.addNode(TopologyFixtures.L40S_2); // the class's node may hold the first test's TP 2 pod (JUnit's order)
        sim.addNode(TopologyFixtures.L40S_2);
        sim.addRule(SimRule.forAllPods("draft-oom", SimAction.of(SimAction.Type.CudaOom))
                .inNamespace(ns.name())
                .withPredicate(p -> p.getMetadata().getName().startsWith("oom-"))
                .whenOutOfMemory());

        try {
            oomTwins(client, ns);
        } finally {
            // its TP 1 pods may sit on every node, one GPU each: gone before another test needs a node with 2 free
            for (String n : java.util.List.of("oom-fits", "oom-ngram", "oom-over")) {
                client.resources(InferenceDeployment.class)
                        .inNamespace(ns.name())
                        .withName(n)
                        .delete();
            }
            org.awaitility.Awaitility.await()
                    .atMost(TIMEOUT)
                    .until(() -> client.pods().inNamespace(ns.name()).list().getItems().stream()
                            .noneMatch(p -> p.getMetadata().getName().startsWith("oom-")));
        }
    }

    private static void oomTwins(KubernetesClient client, TestNamespace ns) {
        InferenceDeployment fits = withDraft(ns.name(), "oom-fits", SpeculativeSpec.Method.draft, "org/target-draft");
        fits.getSpec().parallelism.tensor = 1;
        client.resource(fits).create();
        InferenceDeployment twin = withDraft(ns.name(), "oom-ngram", SpeculativeSpec.Method.ngram, null);
        twin.getSpec().serving.speculative.draftModel = null;
        twin.getSpec().parallelism.tensor = 1;
        client.resource(twin).create();
        var ready = Samples.phase(Phase.Ready).and(x -> x.getStatus().lastStableSpec != null);
        InferenceDeployment withDraft = Samples.await(client, ns.name(), "oom-fits", TIMEOUT, ready);
        InferenceDeployment without = Samples.await(client, ns.name(), "oom-ngram", TIMEOUT, ready);
        assertThat(withDraft.getStatus().lastFailure)
                .as("the plan counting the draft starts")
                .isNull();
        double draftAuto = withDraft.getStatus().memoryPlan.staticFraction;
        double ngramAuto = without.getStatus().memoryPlan.staticFraction;
        assertThat(draftAuto)
                .as("the draft's activations and graphs take the auto fraction down")
                .isLessThan(ngramAuto);

        InferenceDeployment over = withDraft(ns.name(), "oom-over", SpeculativeSpec.Method.draft, "org/target-draft");
        over.getSpec().parallelism.tensor = 1;
        over.getSpec().memory.fraction = String.format(java.util.Locale.ROOT, "%.2f", ngramAuto);
        client.resource(over).create();
        InferenceDeployment failed = Samples.await(
                client,
                ns.name(),
                "oom-over",
                TIMEOUT,
                x -> x.getStatus() != null && x.getStatus().lastFailure != null);
        assertThat(failed.getStatus().lastFailure.reason).isEqualTo("CudaOutOfMemory");
        assertThat(failed.getStatus().lastFailure.message)
                .as("the non-static allocation that no longer fits")
                .containsAnyOf("cuda-graphs", "activations", "reserve");
    }
}
