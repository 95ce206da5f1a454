package io.tensorlane.operator.render;

import static io.tensorlane.operator.plan.Fixtures.SETTINGS;
import static io.tensorlane.operator.plan.Fixtures.llama405bFp8;
import static io.tensorlane.operator.plan.Fixtures.llama70b;
import static io.tensorlane.operator.plan.Fixtures.llama8b;
import static io.tensorlane.operator.plan.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.tensorlane.api.v1alpha1.EngineSpec;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.ServingSpec;
import io.tensorlane.api.v1alpha1.SpeculativeSpec;
import io.tensorlane.contract.MemoryBudget;
import io.tensorlane.operator.plan.Fixtures;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Planner;
import io.tensorlane.operator.plan.SpecValidator;
import io.tensorlane.testkit.sim.SimMemory;
import io.tensorlane.topology.TopologyFixtures;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The demo tells the truth: the GPU node simulator's OOM rule ({@code SimMemory}) run on the pod the operator renders
 * agrees with the planner. The planner's {@code auto} fraction starts; a user fraction OOMs exactly when the planner
 * warns MemoryFractionTooHigh; the seed's forced 0.95 reproduces the incident.
 */
class SimulatedOomAgreesWithPlannerTest {
    static final String PRO = TopologyFixtures.RTX_PRO_6000_PCIE_8;
    static final String H200 = TopologyFixtures.H200_SXM_8;
    static final String L40S = TopologyFixtures.L40S_2;
    static final String RTX4090 = TopologyFixtures.RTX_4090_4;

    static InferenceDeploymentSpec seed(String fraction) {
        InferenceDeploymentSpec s = SpecValidator.withDefaults(llama70b(8));
        s.serving.maxBatchTokens = 16384;
        s.memory.fraction = fraction;
        return s;
    }

    static InferenceDeploymentSpec spec(InferenceDeploymentSpec base, String fraction) {
        InferenceDeploymentSpec s = SpecValidator.withDefaults(base);
        s.memory.fraction = fraction;
        return s;
    }

    static InferenceDeploymentSpec sglang(InferenceDeploymentSpec base, String fraction) {
        InferenceDeploymentSpec s = spec(base, fraction);
        s.engine.type = EngineSpec.EngineType.SGLang;
        s.engine.image = "sglang:test";
        return s;
    }

    static InferenceDeploymentSpec fp8Kv(InferenceDeploymentSpec s) {
        s.serving.kvCacheDtype = ServingSpec.KvCacheDtype.fp8;
        return s;
    }

    /** n-gram speculation with k guesses per step: the plan counts its verify logits, the simulator reads k. */
    static InferenceDeploymentSpec speculating(InferenceDeploymentSpec s, int k) {
        s.serving.speculative = new SpeculativeSpec();
        s.serving.speculative.method = SpeculativeSpec.Method.ngram;
        s.serving.speculative.numSpeculativeTokens = k;
        return s;
    }

    /** A Llama-3.2-1B-like bf16 draft with k guesses: the plan counts it (DraftPlan), and so does the simulator. */
    static InferenceDeploymentSpec drafting(InferenceDeploymentSpec s, int k) {
        speculating(s, k);
        s.serving.speculative.method = SpeculativeSpec.Method.draft;
        ModelSpec m = new ModelSpec();
        m.name = "meta-llama/Llama-3.2-1B-Instruct";
        m.weightBytes = 2_471_645_184L;
        m.dtype = ModelSpec.DType.bf16;
        m.geometry = Fixtures.llama1bGeometry();
        s.serving.speculative.draftModel = m;
        return s;
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("seed box, auto", seed("auto"), PRO, false),
                Arguments.of("seed box, 0.90", seed("0.90"), PRO, false),
                Arguments.of("seed box, the incident's 0.95", seed("0.95"), PRO, true),
                Arguments.of("seed box, 0.97", seed("0.97"), PRO, true),
                Arguments.of("seed box on SGLang, auto", sglang(seed("auto"), "auto"), PRO, false),
                Arguments.of("seed box on SGLang, 0.95", sglang(seed("auto"), "0.95"), PRO, true),
                Arguments.of("H200 70B TP 8, auto", spec(llama70b(8), "auto"), H200, false),
                Arguments.of("H200 70B TP 8, 0.97 still fits (141 GB GPUs)", spec(llama70b(8), "0.97"), H200, false),
                Arguments.of("H200 70B TP 8, 0.98", spec(llama70b(8), "0.98"), H200, true),
                Arguments.of("L40S 8B TP 2, auto", spec(llama8b(2), "auto"), L40S, false),
                Arguments.of("L40S 8B TP 2, 0.85", spec(llama8b(2), "0.85"), L40S, false),
                Arguments.of("L40S 8B TP 2, 0.95", spec(llama8b(2), "0.95"), L40S, true),
                Arguments.of("H200 8B TP 1, auto", spec(llama8b(1), "auto"), H200, false),
                Arguments.of("H200 8B TP 1, 0.99", spec(llama8b(1), "0.99"), H200, true),
                // FP8 weights compute in bf16: both count 16-bit activations
                Arguments.of("H200 405B FP8 TP 8, auto", spec(llama405bFp8(8), "auto"), H200, false),
                Arguments.of("H200 405B FP8 TP 8, 0.98", spec(llama405bFp8(8), "0.98"), H200, true),
                Arguments.of(
                        "H200 405B FP8 TP 8 on SGLang, fp8 KV, auto",
                        fp8Kv(sglang(llama405bFp8(8), "auto")),
                        H200,
                        false),
                Arguments.of(
                        "H200 405B FP8 TP 8 on SGLang, fp8 KV, 0.98",
                        fp8Kv(sglang(llama405bFp8(8), "0.98")),
                        H200,
                        true),
                // the verify logits of k = 8 (2.1 GB) take the auto fraction down a step: 0.96 fits only without
                Arguments.of("H200 8B TP 1, 0.96", spec(llama8b(1), "0.96"), H200, false),
                Arguments.of("H200 8B TP 1, ngram k=8, auto", speculating(spec(llama8b(1), "auto"), 8), H200, false),
                Arguments.of("H200 8B TP 1, ngram k=8, 0.96", speculating(spec(llama8b(1), "0.96"), 8), H200, true),
                Arguments.of(
                        "H200 8B TP 1 on SGLang, ngram k=8, 0.96",
                        speculating(sglang(llama8b(1), "0.96"), 8),
                        H200,
                        true),
                Arguments.of("seed box, ngram k=4, auto", speculating(seed("auto"), 4), PRO, false),
                Arguments.of("seed box, 1B draft k=4, auto", drafting(seed("auto"), 4), PRO, false),
                Arguments.of("seed box, 1B draft k=4, 0.93", drafting(seed("0.93"), 4), PRO, true),
                Arguments.of("H200 8B TP 1, 1B draft k=4, auto", drafting(spec(llama8b(1), "auto"), 4), H200, false),
                Arguments.of("H200 8B TP 2, 1B draft k=4, auto", drafting(spec(llama8b(2), "auto"), 4), H200, false),
                Arguments.of("L40S 8B TP 2, 1B draft k=4, auto", drafting(spec(llama8b(2), "auto"), 4), L40S, false),
                Arguments.of("RTX 4090 8B TP 4 (NCCL), auto", spec(llama8b(4), "auto"), RTX4090, false),
                Arguments.of("RTX 4090 8B TP 4 (NCCL), 0.95", spec(llama8b(4), "0.95"), RTX4090, true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void theSimulatorOomsExactlyWhenThePlannerWarns(
            String why, InferenceDeploymentSpec spec, String fixture, boolean ooms) {
        Plan plan = Planner.plan(spec, List.of(node("n-0", fixture, 0)), SETTINGS);
        assertThat(plan.ok()).as(plan.message()).isTrue();
        Rendered r = Renderer.render(RendererTest.owner(spec), spec, plan, RendererTest.RS);
        Pod pod = new PodBuilder()
                .withMetadata(r.deployment().getSpec().getTemplate().getMetadata())
                .withSpec(r.deployment().getSpec().getTemplate().getSpec())
                .build();

        Optional<MemoryBudget.Oom> oom = SimMemory.startupOom(pod, plan.memory().gpuMemoryBytes(), spec);
        assertThat(oom.isPresent()).as("simulated OOM " + oom).isEqualTo(ooms);
        assertThat(plan.memory().fractionTooHigh()).as("the planner's warning").isEqualTo(ooms);
        if (!ooms) {
            // what the simulator leaves free after the last allocation is the planner's headroom
            long used = MemoryBudget.startup(
                            MemoryBudget.staticPoolBytes(
                                    plan.memory().staticFraction(),
                                    plan.memory().gpuMemoryBytes()),
                            new MemoryBudget.NonStatic(
                                    plan.memory().activationBytes(),
                                    plan.memory().cudaContextBytes(),
                                    plan.memory().cudaGraphBytes(),
                                    plan.memory().ncclBytes(),
                                    plan.memory().allreduceIpcBytes(),
                                    plan.memory().reserveBytes()))
                    .stream()
                    .mapToLong(MemoryBudget.Allocation::bytes)
                    .sum();
            assertThat(plan.memory().gpuMemoryBytes() - used)
                    .isEqualTo(plan.memory().headroomBytes());
        }
    }

    static Pod pod(InferenceDeploymentSpec spec, Plan plan) {
        Rendered r = Renderer.render(RendererTest.owner(spec), spec, plan, RendererTest.RS);
        return new PodBuilder()
                .withMetadata(r.deployment().getSpec().getTemplate().getMetadata())
                .withSpec(r.deployment().getSpec().getTemplate().getSpec())
                .build();
    }

    /** {@code pod} with env {@code name} set to what {@code from} says. */
    static Pod withEnvOf(Pod pod, Pod from, String name) {
        Pod p = new PodBuilder(pod).build();
        String value = from.getSpec().getContainers().get(0).getEnv().stream()
                .filter(e -> name.equals(e.getName()))
                .findFirst()
                .orElseThrow()
                .getValue();
        p.getSpec().getContainers().get(0).getEnv().stream()
                .filter(e -> name.equals(e.getName()))
                .findFirst()
                .orElseThrow()
                .setValue(value);
        return p;
    }

    /**
     * A plan with a draft model fits in the simulator; the same pod with a figure of a plan that leaves the draft's
     * terms out (the n-gram plan of the same k: the verify rows without the draft) does not: its fraction leaves no room
     * for the draft's activations and CUDA graphs, its KV tokens no room for the draft's weights and cache.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("draftFixtures")
    void aPlanThatLeavesTheDraftOutOomsInTheSimulator(String why, InferenceDeploymentSpec base, String fixture) {
        InferenceDeploymentSpec withDraft = drafting(spec(base, "auto"), 4);
        InferenceDeploymentSpec without = speculating(spec(base, "auto"), 4);
        Plan plan = Planner.plan(withDraft, List.of(node("n-0", fixture, 0)), SETTINGS);
        Plan undercount = Planner.plan(without, List.of(node("n-0", fixture, 0)), SETTINGS);
        assertThat(plan.ok()).as(plan.message()).isTrue();
        assertThat(undercount.ok()).as(undercount.message()).isTrue();
        long gpu = plan.memory().gpuMemoryBytes();
        Pod pod = pod(withDraft, plan);
        Pod other = pod(without, undercount);
        assertThat(plan.memory().staticFraction())
                .isLessThan(undercount.memory().staticFraction());

        assertThat(SimMemory.startupOom(pod, gpu, withDraft))
                .as("the plan counting the draft")
                .isEmpty();
        assertThat(SimMemory.startupOom(withEnvOf(pod, other, "TENSORLANE_MEMORY_FRACTION"), gpu, withDraft))
                .as("the fraction without the draft's activations and graphs")
                .map(MemoryBudget.Oom::phase)
                .get()
                .isIn(MemoryBudget.PHASE_CUDA_GRAPHS, MemoryBudget.PHASE_RESERVE, MemoryBudget.PHASE_ACTIVATIONS);
        assertThat(SimMemory.startupOom(withEnvOf(pod, other, "TENSORLANE_KV_CACHE_TOKENS"), gpu, withDraft))
                .as("the KV tokens without the draft's weights and cache")
                .map(MemoryBudget.Oom::phase)
                .contains(MemoryBudget.PHASE_KV_CACHE);
        assertThat(SimMemory.startupOom(other, gpu, without))
                .as("the under-counting plan itself fits when there is no draft")
                .isEmpty();
    }

    static Stream<Arguments> draftFixtures() {
        return Stream.of(
                Arguments.of("seed box 70B TP 8", seed("auto"), PRO),
                Arguments.of("H200 8B TP 1", llama8b(1), H200),
                Arguments.of("L40S 8B TP 2", llama8b(2), L40S));
    }
}
