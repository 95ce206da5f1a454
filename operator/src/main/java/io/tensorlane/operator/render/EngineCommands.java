package io.tensorlane.operator.render;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.operator.plan.AllreduceChoice;
import io.tensorlane.operator.plan.AllreduceTables;
import io.tensorlane.operator.plan.MemoryPlan;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Units;
import java.util.ArrayList;
import java.util.List;

/** Per-engine command line, environment and health paths. */
final class EngineCommands {
  /** Container command (null: the image's entrypoint), args, env, readiness and liveness paths. */
  record Engine(List<String> command, List<String> args, List<EnvVar> env, String readyPath, String livePath) {
  }

  private EngineCommands() {
  }

  /**
   * @param model where the model is in the pod (its directory) and the source URI the pod uses
   */
  static Engine render(InferenceDeploymentSpec spec, Plan plan, ModelVolumes.Mount model) {
    int tp = spec.parallelism.tensor;
    MemoryPlan mem = plan.memory();
    AllreduceChoice ar = plan.allreduce();
    String port = Integer.toString(spec.serving.port);
    List<EnvVar> env = new ArrayList<>();
    ar.ncclEnv().forEach(e -> env.add(env(e.name(), e.value())));
    List<String> args = new ArrayList<>();
    Engine engine;
    switch (spec.engine.type) {
      case SGLang -> {
        env.add(env("HOME", "/tmp"));
        args.addAll(List.of("--model-path", model.modelDir(), "--served-model-name", spec.model.name, "--host", "0.0.0.0", "--port", port, "--tp",
            Integer.toString(tp), "--mem-fraction-static", Units.fraction(mem.staticFraction()), "--context-length",
            Integer.toString(spec.serving.maxModelLength), "--chunked-prefill-size",
            Integer.toString(spec.serving.maxBatchTokens)));
        if (tp > 1 && !ar.custom()) {
          args.add("--disable-custom-all-reduce");
        }
        engine = new Engine(List.of("python3", "-m", "sglang.launch_server"), args, env, "/health", "/health");
      }
      case VLLM -> {
        env.add(env("HOME", "/tmp"));
        args.addAll(List.of(model.modelDir(), "--served-model-name", spec.model.name, "--host", "0.0.0.0", "--port", port, "--tensor-parallel-size",
            Integer.toString(tp), "--gpu-memory-utilization", Units.fraction(mem.gpuMemoryUtilization()),
            "--max-model-len", Integer.toString(spec.serving.maxModelLength), "--max-num-batched-tokens",
            Integer.toString(spec.serving.maxBatchTokens)));
        if (tp > 1 && !ar.custom()) {
          args.add("--disable-custom-all-reduce");
        }
        engine = new Engine(List.of("vllm", "serve"), args, env, "/health", "/health");
      }
      default -> {
        args.add("serve");
        env.add(env(EngineEnv.MODEL, spec.model.name));
        env.add(env(EngineEnv.MODEL_SOURCE, model.source()));
        env.add(env(EngineEnv.MODEL_DIR, model.modelDir()));
        env.add(env(EngineEnv.DTYPE, spec.model.dtype.name()));
        env.add(env(EngineEnv.PORT, port));
        env.add(env(EngineEnv.WORLD_SIZE, Integer.toString(tp)));
        env.add(env(EngineEnv.ALLREDUCE, ar.mode().name()));
        if (ar.custom()) {
          env.add(env(EngineEnv.ALGORITHM_TABLE, Serialization.asJson(
              AllreduceTables.toKernelTable(tp, ar.measured() ? "preflight" : "planner", ar.table()))));
          env.add(env(EngineEnv.MAX_MESSAGE_BYTES, Long.toString(ar.maxMessageBytes())));
        }
        env.add(env(EngineEnv.MEMORY_FRACTION, Units.fraction(mem.staticFraction())));
        env.add(env(EngineEnv.KV_CACHE_TOKENS, Long.toString(mem.kvCacheTokens())));
        env.add(env(EngineEnv.MAX_MODEL_LENGTH, Integer.toString(spec.serving.maxModelLength)));
        env.add(env(EngineEnv.MAX_BATCH_TOKENS, Integer.toString(spec.serving.maxBatchTokens)));
        engine = new Engine(null, args, env, "/health/ready", "/health/live");
      }
    }
    // the user's additions come last: their args after ours; their env replaces ours of the same name (a list with
    // duplicate names is rejected by server-side apply, whose merge key is the name)
    engine.args().addAll(spec.engine.args);
    spec.engine.env.forEach(e -> {
      engine.env().removeIf(ours -> ours.getName().equals(e.getName()));
      engine.env().add(new EnvVarBuilder(e).build());
    });
    return engine;
  }

  static boolean isTensorlane(InferenceDeploymentSpec spec) {
    return spec.engine.type == EngineType.Tensorlane;
  }

  private static EnvVar env(String name, String value) {
    return new EnvVarBuilder().withName(name).withValue(value).build();
  }
}
