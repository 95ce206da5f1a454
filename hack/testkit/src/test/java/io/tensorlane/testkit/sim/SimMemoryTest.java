package io.tensorlane.testkit.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.MemorySpec;
import io.tensorlane.api.v1alpha1.ModelGeometry;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.contract.MemoryBudget;
import io.tensorlane.contract.TerminationMessage;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The simulator's OOM rule on the seed's box (8 × RTX PRO 6000, 102,641,958,912 bytes each; Llama-3.3-70B bf16 at TP 8,
 * 16384 batch tokens, custom allreduce with 8 MiB messages): the planner's auto fraction there is 0.94.
 */
class SimMemoryTest {
    static final long PRO_6000 = 102_641_958_912L;

    static InferenceDeploymentSpec llama70b() {
        InferenceDeploymentSpec s = new InferenceDeploymentSpec();
        s.model = new ModelSpec();
        s.model.dtype = ModelSpec.DType.bf16;
        ModelGeometry g = new ModelGeometry();
        g.layers = 80;
        g.hiddenSize = 8192;
        g.attentionHeads = 64;
        g.kvHeads = 8;
        g.headDim = 128;
        g.vocabSize = 128256;
        g.intermediateSize = 28672;
        s.model.geometry = g;
        s.memory = new MemorySpec();
        s.memory.reserveMiB = 512;
        return s;
    }

    static Pod tensorlane(String fraction, String allreduce) {
        Map<String, String> env = new java.util.LinkedHashMap<>(Map.of(
                "TENSORLANE_WORLD_SIZE",
                "8",
                "TENSORLANE_ALLREDUCE",
                allreduce,
                "TENSORLANE_MEMORY_FRACTION",
                fraction,
                "TENSORLANE_MAX_BATCH_TOKENS",
                "16384"));
        if ("Custom".equals(allreduce)) {
            env.put("TENSORLANE_MAX_MESSAGE_BYTES", "8388608");
        }
        return pod(List.of("serve"), env);
    }

    static Pod pod(List<String> args, Map<String, String> env) {
        var c = new ContainerBuilder()
                .withName("engine")
                .withImage("img")
                .withArgs(args)
                .withNewResources()
                .addToLimits("nvidia.com/gpu", new Quantity("8"))
                .endResources();
        env.forEach((k, v) -> c.addNewEnv().withName(k).withValue(v).endEnv());
        return new PodBuilder()
                .withNewMetadata()
                .withName("p")
                .withNamespace("demo")
                .endMetadata()
                .withNewSpec()
                .withContainers(c.build())
                .endSpec()
                .build();
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("auto (0.94) runs", tensorlane("0.94", "Custom"), llama70b(), null),
                Arguments.of("0.90 runs", tensorlane("0.90", "Custom"), llama70b(), null),
                Arguments.of(
                        "the seed's forced 0.95: no room for the CUDA graphs",
                        tensorlane("0.95", "Custom"),
                        llama70b(),
                        MemoryBudget.PHASE_CUDA_GRAPHS),
                Arguments.of(
                        "0.95 with NCCL still fails (the IPC buffers are small)",
                        tensorlane("0.95", "NCCL"),
                        llama70b(),
                        MemoryBudget.PHASE_CUDA_GRAPHS),
                Arguments.of(
                        "0.99: the activations do not fit",
                        tensorlane("0.99", "Custom"),
                        llama70b(),
                        MemoryBudget.PHASE_ACTIVATIONS),
                Arguments.of(
                        "0.999: the static pool itself does not fit",
                        tensorlane("0.999", "Custom"),
                        llama70b(),
                        TerminationMessage.PHASE_STATIC_POOL),
                Arguments.of(
                        "a bigger reserve makes 0.94 too much",
                        tensorlane("0.94", "Custom"),
                        withReserve(2048),
                        MemoryBudget.PHASE_RESERVE),
                Arguments.of(
                        "SGLang flags, custom allreduce",
                        pod(
                                List.of(
                                        "--tp",
                                        "8",
                                        "--mem-fraction-static",
                                        "0.95",
                                        "--chunked-prefill-size",
                                        "16384"),
                                Map.of()),
                        llama70b(),
                        MemoryBudget.PHASE_CUDA_GRAPHS),
                Arguments.of(
                        "SGLang at 0.94 runs",
                        pod(
                                List.of(
                                        "--tp",
                                        "8",
                                        "--mem-fraction-static",
                                        "0.94",
                                        "--chunked-prefill-size",
                                        "16384",
                                        "--disable-custom-all-reduce"),
                                Map.of()),
                        llama70b(),
                        null),
                Arguments.of(
                        "vLLM's utilization is no static fraction",
                        pod(List.of("--tensor-parallel-size", "8", "--gpu-memory-utilization", "0.99"), Map.of()),
                        llama70b(),
                        null),
                Arguments.of(
                        "without an owner only the attention workspace counts",
                        tensorlane("0.95", "Custom"),
                        null,
                        null));
    }

    static InferenceDeploymentSpec withReserve(int mib) {
        InferenceDeploymentSpec s = llama70b();
        s.memory.reserveMiB = mib;
        return s;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void startupOom(String why, Pod pod, InferenceDeploymentSpec owner, String phase) {
        Optional<MemoryBudget.Oom> oom = SimMemory.startupOom(pod, PRO_6000, owner);
        assertThat(oom.map(MemoryBudget.Oom::phase).orElse(null)).isEqualTo(phase);
        oom.ifPresent(o -> {
            assertThat(o.requestedBytes()).isGreaterThan(o.freeBytes());
            assertThat(o.totalBytes()).isEqualTo(PRO_6000);
        });
    }

    @org.junit.jupiter.api.Test
    void anOutOfMemoryRuleTakesTheFailingAllocationsNumbers() {
        SimRule rule =
                SimRule.forAllPods("oom", SimAction.of(SimAction.Type.CudaOom)).whenOutOfMemory();
        Pod pod = tensorlane("0.95", "Custom");
        var oom = SimMemory.startupOom(pod, PRO_6000, llama70b());
        assertThat(rule.matches(pod)).as("no node, no decision").isFalse();
        assertThat(rule.matches(pod, () -> oom)).isTrue();
        assertThat(rule.matches(tensorlane("0.94", "Custom"), Optional::empty)).isFalse();
        SimAction a = SimOwners.withNumbers(rule, () -> oom);
        assertThat(a.phase()).isEqualTo(MemoryBudget.PHASE_CUDA_GRAPHS);
        assertThat(a.requestedBytes()).isEqualTo(MemoryBudget.CUDA_GRAPH_BYTES);
        assertThat(a.freeBytes()).isEqualTo(oom.orElseThrow().freeBytes());
    }

    static Pod speculating(String fraction, String speculative) {
        Pod p = tensorlane(fraction, "Custom");
        p.getSpec()
                .getContainers()
                .get(0)
                .getEnv()
                .add(new io.fabric8.kubernetes.api.model.EnvVar("TENSORLANE_SPECULATIVE", speculative, null));
        return p;
    }

    @ParameterizedTest(name = "{0} -> k {1}")
    @org.junit.jupiter.params.provider.CsvSource(
            delimiter = ';',
            value = {
                "ngram:k=4,n=3; 4",
                "ngram:n=2,k=8; 8",
                " NGRAM : k = 6 ; 6",
                "ngram; 4",
                "ngram:n=5; 4",
                "off; 0",
                "none; 0",
                "''; 0",
                "draft:/models/small,k=4; 4",
                "draft:/draft-model/org--small--abc,k=2; 2",
                "draft:/models/small; 4",
                "ngram:k=x; 0"
            })
    void readsKFromTheRuntimesSpeculativeValue(String value, int k) {
        assertThat(SimMemory.ngramTokens(value)).isEqualTo(k);
    }

    @org.junit.jupiter.api.Test
    void readsKFromThePod() {
        assertThat(SimMemory.speculativeTokens(tensorlane("0.94", "Custom"))).isZero();
        assertThat(SimMemory.speculativeTokens(speculating("0.94", "ngram:k=4,n=3")))
                .isEqualTo(4);
        // SGLang counts the last verified token: k + 1 draft tokens
        Pod sglang = pod(
                List.of("--tp", "8", "--speculative-algorithm", "NGRAM", "--speculative-num-draft-tokens", "5"),
                Map.of());
        assertThat(SimMemory.speculativeTokens(sglang)).isEqualTo(4);
        assertThat(SimMemory.read(speculating("0.94", "ngram:k=8,n=3"))
                        .orElseThrow()
                        .speculativeTokens())
                .isEqualTo(8);
    }

    /**
     * The verify logits the plan counts ({@link MemoryBudget#speculativeLogitsBytes}: 256 x k x 128256 x 8 bytes, 2.1
     * GB at k = 8) are allocated with the activations: the seed's auto fraction without speculation leaves too little
     * for them.
     */
    static Stream<Arguments> speculation() {
        return Stream.of(
                Arguments.of("0.94 without speculation runs", tensorlane("0.94", "Custom"), null),
                Arguments.of(
                        "0.94 with k = 8 runs out",
                        speculating("0.94", "ngram:k=8,n=3"),
                        MemoryBudget.PHASE_ACTIVATIONS),
                Arguments.of("0.90 with k = 8 runs", speculating("0.90", "ngram:k=8,n=3"), null),
                Arguments.of("0.94 with speculation off runs", speculating("0.94", "off"), null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("speculation")
    void speculationsVerifyLogitsCountAsThePlanCountsThem(String why, Pod pod, String phase) {
        Optional<MemoryBudget.Oom> oom = SimMemory.startupOom(pod, PRO_6000, llama70b());
        assertThat(oom.map(MemoryBudget.Oom::phase).orElse(null)).isEqualTo(phase);
    }

    @org.junit.jupiter.api.Test
    void theVerifyLogitsAreWhatIsMissing() {
        // at 0.94 the last allocation leaves some free memory; k = 8 asks for more than that on top of it
        long free = PRO_6000
                - MemoryBudget.startup(
                                MemoryBudget.staticPoolBytes(0.94, PRO_6000),
                                MemoryBudget.nonStatic(
                                        SimMemory.dims(llama70b()), 16384, 8, true, 8L << 20, 512L << 20))
                        .stream()
                        .mapToLong(MemoryBudget.Allocation::bytes)
                        .sum();
        long extra = MemoryBudget.speculativeLogitsBytes(128256, 16384, 8);
        assertThat(free).isPositive().isLessThan(extra);
        var oom = SimMemory.startupOom(speculating("0.94", "ngram:k=8,n=3"), PRO_6000, llama70b())
                .orElseThrow();
        assertThat(oom.requestedBytes() - oom.freeBytes()).isPositive().isLessThanOrEqualTo(extra - free);
    }
}
