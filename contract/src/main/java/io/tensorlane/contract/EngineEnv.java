package io.tensorlane.contract;

/**
 * Environment variables through which the operator hands the plan to the Tensorlane runtime's {@code serve}
 * command: the operator's renderer writes these names and {@code serve} reads them. This is the one definition of the
 * contract; it lives in the kernels module because both the operator and the runtime depend on it.
 */
public final class EngineEnv {
    /** Model name as the engine knows it (spec.model.name). */
    public static final String MODEL = "TENSORLANE_MODEL";
    /** Where the weights come from (spec.model.source, default hf://name). */
    public static final String MODEL_SOURCE = "TENSORLANE_MODEL_SOURCE";
    /** Local directory of the model that {@code serve} loads (config.json, *.safetensors, tokenizer files). */
    public static final String MODEL_DIR = "TENSORLANE_MODEL_DIR";
    /** bf16, fp16, fp8 or fp32. */
    public static final String DTYPE = "TENSORLANE_DTYPE";
    /** HTTP port (spec.serving.port). */
    public static final String PORT = "TENSORLANE_PORT";
    /** Tensor-parallel world size: GPUs of the pod. */
    public static final String WORLD_SIZE = "TENSORLANE_WORLD_SIZE";
    /** {@link Allreduce}: Custom, NCCL or None. */
    public static final String ALLREDUCE = "TENSORLANE_ALLREDUCE";
    /** {@link AlgorithmTable} JSON (only with Custom). */
    public static final String ALGORITHM_TABLE = "TENSORLANE_ALGORITHM_TABLE";
    /** Largest custom-allreduce message in bytes; sizes the IPC buffers (only with Custom). */
    public static final String MAX_MESSAGE_BYTES = "TENSORLANE_MAX_MESSAGE_BYTES";
    /** Static memory fraction (weights + KV cache over total GPU memory), two decimals. */
    public static final String MEMORY_FRACTION = "TENSORLANE_MEMORY_FRACTION";
    /** KV-cache capacity the plan expects, in tokens; the runtime sizes its KV cache from it when set, else from the fraction. */
    public static final String KV_CACHE_TOKENS = "TENSORLANE_KV_CACHE_TOKENS";
    /**
     * Element type of the KV cache: bf16, fp16, fp8 (e4m3, 1 byte) or fp32, as the operator's plan sized it for {@link
     * #KV_CACHE_TOKENS} (spec.serving.kvCacheDtype, auto resolved to the model's activation dtype); auto (or unset): the
     * model's activation dtype (bf16 for an FP8 checkpoint unless its config.json says float16).
     */
    public static final String KV_CACHE_DTYPE = "TENSORLANE_KV_CACHE_DTYPE";
    /** Maximum sequence length. */
    public static final String MAX_MODEL_LENGTH = "TENSORLANE_MAX_MODEL_LENGTH";
    /** Maximum tokens in one forward batch. */
    public static final String MAX_BATCH_TOKENS = "TENSORLANE_MAX_BATCH_TOKENS";
    /**
     * Speculative decoding ({@code serve --speculative}): {@code ngram:k=4,n=3} (prompt lookup, up to k guesses per step
     * from suffixes of up to n tokens), {@code draft:DIR,k=4[,batch=B]} (a draft model in DIR, at TP 1 on rank 0's GPU:
     * {@link DraftLayout}; the operator renders {@code draft:<its /draft-model dir>,k=K}), or unset / off.
     */
    public static final String SPECULATIVE = "TENSORLANE_SPECULATIVE";

    private EngineEnv() {}
}
