package io.tensorlane.operator.engine;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.tensorlane.api.v1alpha1.AllreduceDecision.AlgorithmRange;
import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.contract.Allreduce;
import io.tensorlane.contract.TerminationMessage;
import io.tensorlane.operator.plan.AllreduceChoice;
import io.tensorlane.operator.plan.Fixtures;
import io.tensorlane.operator.plan.MemoryPlan;
import io.tensorlane.operator.plan.Outcome;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.SpecValidator;
import io.tensorlane.operator.render.Renderer;
import io.tensorlane.operator.rollback.FailureDetector;
import io.tensorlane.operator.rollback.FailureSignal;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Plans written by hand (no planner): a static fraction and a utilization that differ, custom / NCCL / none. */
final class ProfileFixtures {
    static final double STATIC = 0.87;
    static final double UTILIZATION = 0.93;
    static final long KV_TOKENS = 123_456;
    static final EngineProfile.ModelLocation MODEL = new EngineProfile.ModelLocation(
            "/models/meta-llama--Llama-3.1-8B-Instruct--abc", "hf://meta-llama/Llama-3.1-8B-Instruct@abc");
    static final String PYTORCH_OOM = """
      [2026-11-29 11:59:01 TP1] Capture cuda graph begin.
      torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 24.00 MiB. GPU 1 has a total capacity of 95.59 GiB""";
    static final String RUNTIME_OOM = TerminationMessage.cudaOom(
                    TerminationMessage.PHASE_IPC_BUFFERS, 25_165_824L, 4_194_304L, 102_641_958_912L, 1, 1, "staging")
            .toJson();
    static final String JAVA_HEAP = "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space";
    static final String JCUDA = "jcuda.CudaException: CUDA_ERROR_ILLEGAL_ADDRESS";

    private ProfileFixtures() {}

    /** Which allreduce the hand-written plan chose. */
    enum Ar {
        CUSTOM,
        NCCL,
        NONE
    }

    /** Llama-3.1-8B with every default, for {@code engine} at tensor parallelism {@code tp}. */
    static InferenceDeploymentSpec spec(EngineType engine, int tp) {
        InferenceDeploymentSpec s = Fixtures.llama8b(tp);
        s.engine = new io.tensorlane.api.v1alpha1.EngineSpec();
        s.engine.type = engine;
        s.engine.image = engine == EngineType.Tensorlane ? null : "engine:1";
        return SpecValidator.withDefaults(s);
    }

    static Plan plan(Ar ar) {
        return plan(ar, DType.bf16);
    }

    /** The hand-written plan with its KV cache sized in {@code kv}. */
    static Plan plan(Ar ar, DType kv) {
        AllreduceChoice choice = switch (ar) {
            case CUSTOM ->
                new AllreduceChoice(
                        Allreduce.Custom,
                        List.of(new AlgorithmRange(65_536, "OneStage"), new AlgorithmRange(8_388_608, "Ring")),
                        8_388_608,
                        "test",
                        List.of(new AllreduceChoice.NcclEnv("NCCL_PROTO", "^LL128", "crosses the CPU")),
                        false);
            case NCCL -> new AllreduceChoice(Allreduce.NCCL, List.of(), 0, "test", List.of(), false);
            case NONE -> new AllreduceChoice(Allreduce.None, List.of(), 0, "test", List.of(), false);
        };
        MemoryPlan memory = new MemoryPlan(
                100L << 30,
                STATIC,
                UTILIZATION,
                KV_TOKENS,
                kv,
                MemoryPlan.AUTO,
                8L << 30,
                70L << 30,
                3L << 30,
                560L << 20,
                1L << 30,
                192L << 20,
                18L << 20,
                512L << 20,
                5L << 30,
                1L << 30,
                false,
                List.of(),
                0,
                0);
        return new Plan(Outcome.OK, null, null, choice, memory, List.of());
    }

    static Map<String, String> env(EngineProfile.Launch launch) {
        Map<String, String> m = new LinkedHashMap<>();
        for (EnvVar e : launch.env()) {
            m.put(e.getName(), e.getValue());
        }
        return m;
    }

    /** What the failure detector makes of an engine container that ended with {@code message}, for this engine. */
    static boolean cudaOom(EngineProfile engine, String message) {
        Pod pod = new PodBuilder()
                .withNewMetadata()
                .withName("p0")
                .addToLabels(Renderer.LABEL_REVISION, "r1")
                .endMetadata()
                .withNewStatus()
                .addNewContainerStatus()
                .withName("engine")
                .withNewState()
                .withNewTerminated()
                .withExitCode(1)
                .withReason("Error")
                .withMessage(message)
                .withFinishedAt("2026-11-29T11:59:30Z")
                .endTerminated()
                .endState()
                .endContainerStatus()
                .endStatus()
                .build();
        return FailureDetector.detect(List.of(pod), "r1", null, engine, Instant.parse("2026-11-29T12:00:00Z"))
                .map(f -> f.kind() == FailureSignal.Kind.CudaOutOfMemory)
                .orElse(false);
    }
}
