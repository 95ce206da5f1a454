package io.tensorlane.runtime.serve;

/**
 * The environment through which the operator hands the plan to {@code serve}. The names are the operator's
 * {@code io.tensorlane.operator.render.EngineEnv} constants (the renderer writes them); the runtime cannot depend on
 * the operator module, so they are repeated here and {@code ServeEnvTest} pins them. (Moving EngineEnv into the
 * kernels module, which both depend on, would make this one definition.)
 */
public final class ServeEnv {
  public static final String WORLD_SIZE = "TENSORLANE_WORLD_SIZE";
  public static final String ALLREDUCE = "TENSORLANE_ALLREDUCE";
  public static final String ALGORITHM_TABLE = "TENSORLANE_ALGORITHM_TABLE";
  public static final String MAX_MESSAGE_BYTES = "TENSORLANE_MAX_MESSAGE_BYTES";
  public static final String MEMORY_FRACTION = "TENSORLANE_MEMORY_FRACTION";
  public static final String PORT = "TENSORLANE_PORT";
  public static final String MODEL = "TENSORLANE_MODEL";
  public static final String DTYPE = "TENSORLANE_DTYPE";

  private ServeEnv() {
  }
}
