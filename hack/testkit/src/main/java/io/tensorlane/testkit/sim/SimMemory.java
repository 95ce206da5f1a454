package io.tensorlane.testkit.sim;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelGeometry;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.ServingSpec;
import io.tensorlane.contract.Allreduce;
import io.tensorlane.contract.DraftLayout;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.contract.MemoryBudget;
import io.tensorlane.modelfacts.ModelDtype;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Would this pod die of CUDA OOM at start-up on its GPU? The same {@link MemoryBudget} the operator's planner sizes
 * the fraction from, over what the pod is started with (static fraction, tensor parallelism, custom allreduce and its
 * buffer size, batch tokens: the Tensorlane runtime's env or SGLang's flags), the node's GPU memory and the model of
 * the InferenceDeployment that owns the pod (geometry, dtype, memory.reserveMiB, serving.maxModelLength for the
 * sampler's penalty buffer). So the planner's {@code auto} fraction runs, and a fraction above what the non-static
 * memory leaves fails in the allocation that no longer fits. Speculative decoding counts as the plan counts it: its
 * verify steps' extra logits rows in the activations ({@link MemoryBudget#speculativeLogitsBytes} of k, read from
 * {@code TENSORLANE_SPECULATIVE} or SGLang's {@code --speculative-num-draft-tokens}) and the sampler's rows. When the pod
 * is given its KV tokens ({@code TENSORLANE_KV_CACHE_TOKENS}, which the runtime allocates as given), the weights and KV
 * caches on rank 0's GPU must fit the static pool; what they take beyond it is one more allocation
 * ({@value MemoryBudget#PHASE_KV_CACHE}). A Tensorlane draft model ({@code TENSORLANE_SPECULATIVE=draft:DIR,k=K}) counts
 * where the runtime puts it ({@link DraftLayout}, {@link SimDraft}): its weights and a KV cache of the target's tokens in
 * those contents, its activations and its own CUDA graph pool in the non-static allocations. Pure.
 */
public final class SimMemory {
    /** The custom allreduce's buffer size when the pod does not say (the operator's default, 8 MiB). */
    public static final long DEFAULT_MAX_MESSAGE_BYTES = 8L << 20;
    /** Batch tokens when the pod does not say (the operator's default). */
    public static final long DEFAULT_BATCH_TOKENS = 8192;
    /** memory.reserveMiB when there is no owner to read it from (the CRD default). */
    public static final long DEFAULT_RESERVE_BYTES = 512L << 20;
    /** k of {@code TENSORLANE_SPECULATIVE=ngram} without {@code k=} (the runtime's default, SpeculativeConfig). */
    public static final int DEFAULT_SPECULATIVE_TOKENS = 4;

    private SimMemory() {}

    /**
     * What the pod is started with.
     *
     * @param fraction the static memory fraction (Tensorlane env / SGLang --mem-fraction-static)
     * @param tp GPUs of the pod (tensor parallelism)
     * @param customAllreduce whether the custom allreduce allocates its IPC buffers
     * @param maxMessageBytes the custom allreduce's largest message
     * @param batchTokens tokens of one forward batch
     * @param speculativeTokens tokens proposed per sequence and step (k), 0 without speculation
     * @param kvCacheTokens the KV tokens the pod is given ({@code TENSORLANE_KV_CACHE_TOKENS}), 0: sized by the runtime
     * @param kvCacheDtype the KV elements' type it is given ({@code TENSORLANE_KV_CACHE_DTYPE}), null: auto
     * @param draft the Tensorlane runtime runs a draft model ({@code TENSORLANE_SPECULATIVE=draft:…})
     */
    public record PodPlan(
            double fraction,
            int tp,
            boolean customAllreduce,
            long maxMessageBytes,
            long batchTokens,
            int speculativeTokens,
            long kvCacheTokens,
            ModelSpec.DType kvCacheDtype,
            boolean draft) {}

    /** The plan the pod is started with; empty when it has no static fraction (vLLM's utilization is not one). */
    public static Optional<PodPlan> read(Pod pod) {
        var fraction = PodFacts.envNumber(pod, EngineEnv.MEMORY_FRACTION);
        if (fraction.isEmpty()) {
            fraction = PodFacts.argNumber(pod, "--mem-fraction-static");
        }
        if (fraction.isEmpty()) {
            fraction = PodFacts.argNumber(pod, "--memory-fraction");
        }
        if (fraction.isEmpty()) {
            return Optional.empty();
        }
        int tp = (int) first(pod, EngineEnv.WORLD_SIZE, List.of("--tp", "--tensor-parallel-size"), gpus(pod));
        boolean tensorlane = env(pod, EngineEnv.ALLREDUCE) != null;
        boolean custom = tensorlane
                ? Allreduce.Custom.name().equals(env(pod, EngineEnv.ALLREDUCE))
                : tp > 1 && !hasArg(pod, "--disable-custom-all-reduce");
        long maxMessage = (long) first(pod, EngineEnv.MAX_MESSAGE_BYTES, List.of(), DEFAULT_MAX_MESSAGE_BYTES);
        long tokens = (long) first(
                pod,
                EngineEnv.MAX_BATCH_TOKENS,
                List.of("--chunked-prefill-size", "--max-num-batched-tokens"),
                DEFAULT_BATCH_TOKENS);
        long kvTokens = (long) first(pod, EngineEnv.KV_CACHE_TOKENS, List.of(), 0);
        return Optional.of(new PodPlan(
                fraction.getAsDouble(),
                Math.max(1, tp),
                custom,
                maxMessage,
                tokens,
                speculativeTokens(pod),
                Math.max(0, kvTokens),
                kvCacheDtype(env(pod, EngineEnv.KV_CACHE_DTYPE)),
                draftDir(env(pod, EngineEnv.SPECULATIVE)) != null));
    }

    /** The KV dtype of a {@code TENSORLANE_KV_CACHE_DTYPE} value; null for auto, unset or a value that does not parse. */
    static ModelSpec.DType kvCacheDtype(String value) {
        if (value == null) {
            return null;
        }
        for (ModelSpec.DType d : ModelSpec.DType.values()) {
            if (d.name().equalsIgnoreCase(value.trim())) {
                return d;
            }
        }
        return null;
    }

    /** DIR of a {@code TENSORLANE_SPECULATIVE=draft:DIR[,k=K]} value, else null (no draft, or none named). */
    static String draftDir(String value) {
        if (value == null) {
            return null;
        }
        String s = value.trim();
        int colon = s.indexOf(':');
        if (colon < 0 || !s.substring(0, colon).trim().equalsIgnoreCase("draft")) {
            return null;
        }
        String dir = s.substring(colon + 1).split(",", 2)[0].trim();
        return dir.isEmpty() || dir.contains("=") ? null : dir;
    }

    /**
     * k of the pod's speculation, 0 without: the Tensorlane runtime's {@code TENSORLANE_SPECULATIVE} ({@code
     * ngram:k=K,n=N} or {@code draft:DIR,k=K}, k defaulting to {@link #DEFAULT_SPECULATIVE_TOKENS}; off, none or a
     * value that does not parse: 0), else SGLang's {@code --speculative-num-draft-tokens}, which counts the last
     * verified token too (k + 1).
     */
    public static int speculativeTokens(Pod pod) {
        String v = env(pod, EngineEnv.SPECULATIVE);
        if (v != null) {
            return ngramTokens(v);
        }
        var draftTokens = PodFacts.argNumber(pod, "--speculative-num-draft-tokens");
        return draftTokens.isPresent() ? Math.max(0, (int) draftTokens.getAsDouble() - 1) : 0;
    }

    /** k of a {@code TENSORLANE_SPECULATIVE} value (see {@link #speculativeTokens}). */
    static int ngramTokens(String value) {
        String s = value.trim();
        int colon = s.indexOf(':');
        String method = (colon < 0 ? s : s.substring(0, colon)).trim();
        if (!method.equalsIgnoreCase("ngram") && !method.equalsIgnoreCase("draft")) {
            return 0;
        }
        int k = DEFAULT_SPECULATIVE_TOKENS;
        for (String field : colon < 0 ? new String[0] : s.substring(colon + 1).split(",")) {
            String[] kv = field.split("=", 2);
            if (kv.length == 2 && kv[0].trim().equalsIgnoreCase("k")) {
                try {
                    k = Integer.parseInt(kv[1].trim());
                } catch (NumberFormatException e) {
                    return 0;
                }
            }
        }
        return Math.max(0, k);
    }

    /** The model dimensions of {@code owner}; zeros (no activations but the attention workspace) when unknown. */
    public static MemoryBudget.Dims dims(InferenceDeploymentSpec owner) {
        ModelGeometry g = owner == null || owner.model == null ? null : owner.model.geometry;
        if (g == null || g.hiddenSize == null || g.attentionHeads == null || g.kvHeads == null) {
            return new MemoryBudget.Dims(0, 0, 0, 0, 0, 0, 0);
        }
        // as the planner: activations compute in the activation dtype (16 bits for an FP8 checkpoint), the MLP as wide
        // as one token's widest layer (a Mixture of Experts: top-k × the expert intermediate size)
        return dims(g, ModelDtype.activation(owner.model.dtype, null).bytes());
    }

    /** The dimensions of a model of geometry {@code g} (its fields set) computing in {@code dtypeBytes}-byte elements. */
    static MemoryBudget.Dims dims(ModelGeometry g, int dtypeBytes) {
        return new MemoryBudget.Dims(
                g.hiddenSize,
                g.attentionHeads,
                g.kvHeads,
                g.effectiveHeadDim(),
                g.activationIntermediateSize(),
                g.vocabSize == null ? 0 : g.vocabSize,
                dtypeBytes);
    }

    /**
     * The allocation that fails at start-up, or empty when everything fits (or the pod has no static fraction).
     *
     * @param gpuMemoryBytes memory of one GPU of the pod's node
     * @param owner the spec of the InferenceDeployment that owns the pod, or null
     */
    public static Optional<MemoryBudget.Oom> startupOom(Pod pod, long gpuMemoryBytes, InferenceDeploymentSpec owner) {
        Optional<PodPlan> plan = read(pod);
        if (plan.isEmpty()) {
            return Optional.empty();
        }
        PodPlan p = plan.get();
        long reserve = owner != null && owner.memory != null && owner.memory.reserveMiB != null
                ? owner.memory.reserveMiB * (1L << 20)
                : DEFAULT_RESERVE_BYTES;
        MemoryBudget.Dims d = dims(owner);
        MemoryBudget.NonStatic base = MemoryBudget.nonStatic(
                d, p.batchTokens(), p.tp(), p.customAllreduce(), p.maxMessageBytes(), reserve, p.speculativeTokens());
        // the sampler's per-row buffers, as the planner counts them (k + 1 rows a sequence with speculation)
        long sampling = MemoryBudget.samplingBytes(
                        d.vocabSize(), p.batchTokens(), p.speculativeTokens(), maxModelLength(owner))
                .total();
        SimDraft draft = p.draft() ? SimDraft.of(owner, p.speculativeTokens(), p.batchTokens()) : SimDraft.NONE;
        MemoryBudget.NonStatic n = new MemoryBudget.NonStatic(
                base.activations() + sampling + draft.activationBytes(),
                base.cudaContext(),
                base.cudaGraphs() + draft.cudaGraphBytes(),
                base.nccl(),
                base.ipc(),
                base.reserve());
        long pool = MemoryBudget.staticPoolBytes(p.fraction(), gpuMemoryBytes);
        return MemoryBudget.firstFailure(
                gpuMemoryBytes, withStaticOverflow(MemoryBudget.startup(pool, n), overflow(p, owner, draft, pool)));
    }

    /**
     * What the weights and KV caches on rank 0's GPU take beyond the static pool {@code pool} (0 when they fit or the
     * runtime sizes its cache itself: no KV tokens given, or the target's weights or geometry unknown): the target's
     * weights / TP and its cache of {@link PodPlan#kvCacheTokens} tokens ({@link MemoryBudget#kvBytesPerToken} in the
     * given KV dtype, auto: the activation dtype), and a draft's weights and a cache of as many tokens.
     */
    static long overflow(PodPlan p, InferenceDeploymentSpec owner, SimDraft draft, long pool) {
        ModelGeometry g = owner == null || owner.model == null ? null : owner.model.geometry;
        if (p.kvCacheTokens() <= 0
                || g == null
                || g.layers == null
                || g.kvHeads == null
                || owner.model.weightBytes == null) {
            return 0;
        }
        ModelSpec.DType kv =
                p.kvCacheDtype() != null ? p.kvCacheDtype() : ModelDtype.kvCache(null, owner.model.dtype, null);
        long perToken = MemoryBudget.kvBytesPerToken(g.layers, g.kvHeads, g.effectiveHeadDim(), p.tp(), kv.bytes())
                + draft.kvBytesPerToken();
        long contents = (owner.model.weightBytes + p.tp() - 1) / p.tp()
                + draft.weightsBytes()
                + Math.multiplyExact(p.kvCacheTokens(), perToken);
        return Math.max(0, contents - pool);
    }

    /** {@code startup} with {@code overflow} bytes of {@value MemoryBudget#PHASE_KV_CACHE} after the activations. */
    static List<MemoryBudget.Allocation> withStaticOverflow(List<MemoryBudget.Allocation> startup, long overflow) {
        if (overflow <= 0) {
            return startup;
        }
        List<MemoryBudget.Allocation> a = new ArrayList<>(startup);
        int at = 0;
        while (at < a.size() && !MemoryBudget.PHASE_ACTIVATIONS.equals(a.get(at).phase())) {
            at++;
        }
        a.add(Math.min(at + 1, a.size()), new MemoryBudget.Allocation(MemoryBudget.PHASE_KV_CACHE, overflow));
        return a;
    }

    /** spec.serving.maxModelLength of {@code owner} (the CRD default without one). */
    private static int maxModelLength(InferenceDeploymentSpec owner) {
        Integer n = owner == null || owner.serving == null ? null : owner.serving.maxModelLength;
        return n != null ? n : new ServingSpec().maxModelLength;
    }

    private static double first(Pod pod, String envName, List<String> flags, double dflt) {
        var v = PodFacts.envNumber(pod, envName);
        for (int i = 0; v.isEmpty() && i < flags.size(); i++) {
            v = PodFacts.argNumber(pod, flags.get(i));
        }
        return v.orElse(dflt);
    }

    private static String env(Pod pod, String name) {
        for (Container c : containers(pod)) {
            if (c.getEnv() != null) {
                for (var e : c.getEnv()) {
                    if (name.equals(e.getName())) {
                        return e.getValue();
                    }
                }
            }
        }
        return null;
    }

    private static boolean hasArg(Pod pod, String flag) {
        return containers(pod).stream()
                .anyMatch(c -> c.getArgs() != null && c.getArgs().contains(flag)
                        || c.getCommand() != null && c.getCommand().contains(flag));
    }

    private static int gpus(Pod pod) {
        int n = 0;
        for (Container c : containers(pod)) {
            Quantity q = c.getResources() == null || c.getResources().getLimits() == null
                    ? null
                    : c.getResources().getLimits().get("nvidia.com/gpu");
            n += q == null ? 0 : Integer.parseInt(q.getAmount());
        }
        return Math.max(1, n);
    }

    private static List<Container> containers(Pod pod) {
        return pod.getSpec() == null || pod.getSpec().getContainers() == null
                ? List.of()
                : pod.getSpec().getContainers();
    }
}
