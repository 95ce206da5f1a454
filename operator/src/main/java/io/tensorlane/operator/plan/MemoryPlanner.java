package io.tensorlane.operator.plan;

import static io.tensorlane.operator.plan.Units.MiB;

import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelGeometry;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.contract.MemoryBudget;
import io.tensorlane.modelfacts.ModelDtype;
import java.util.ArrayList;
import java.util.List;

/**
 * Per-GPU memory plan (README, "Memory plan"). Static = weights/TP + KV cache (what SGLang's mem_fraction_static
 * covers), with a draft model ({@link DraftPlan}) also its weights and its KV cache for the same tokens; non-static = activations + CUDA context + CUDA graphs + NCCL + custom-allreduce IPC buffers + reserve.
 * The constants are estimates, each in one place with its reasoning; the IPC buffers are exact: they come from
 * {@code BufferLayout}, the same description the engine allocates from. The estimates and the start-up order are
 * {@link MemoryBudget}'s, shared with the GPU node simulator.
 */
public final class MemoryPlanner {
    // the estimates live once, in the kernels' MemoryBudget, which the GPU node simulator's OOM rule uses too
    public static final long CUDA_CONTEXT_BYTES = MemoryBudget.CUDA_CONTEXT_BYTES;
    public static final long CUDA_GRAPH_BYTES = MemoryBudget.CUDA_GRAPH_BYTES;
    public static final long NCCL_BYTES = MemoryBudget.NCCL_BYTES;
    public static final long ATTENTION_WORKSPACE_BYTES = MemoryBudget.ATTENTION_WORKSPACE_BYTES;
    public static final int ACTIVATION_PEAK_FACTOR = MemoryBudget.ACTIVATION_PEAK_FACTOR;
    public static final int MAX_SEQUENCES = MemoryBudget.MAX_SEQUENCES;
    /** Largest automatic fraction. */
    public static final double MAX_AUTO_FRACTION = 0.99;

    private MemoryPlanner() {}

    /**
     * KV-cache bytes per token on one GPU ({@link MemoryBudget#kvBytesPerToken}): 2 (K and V) × layers × max(1,
     * ⌈kvHeads / TP⌉) × headDim × KV dtype bytes.
     */
    public static long kvBytesPerToken(InferenceDeploymentSpec spec, int tensor) {
        ModelGeometry g = spec.model.geometry;
        return MemoryBudget.kvBytesPerToken(
                g.layers,
                g.kvHeads,
                g.effectiveHeadDim(),
                tensor,
                kvCacheDtype(spec).bytes());
    }

    /**
     * The KV cache's element type ({@link ModelDtype#kvCache}): spec.serving.kvCacheDtype, auto meaning the activation
     * dtype of spec.model.dtype (which {@code ModelResolution.fill} sets from status.model when the user left it out,
     * and for an FP8 checkpoint whose config.json says float16 it resolves auto to fp16 too).
     */
    public static DType kvCacheDtype(InferenceDeploymentSpec spec) {
        return ModelDtype.kvCache(spec.serving == null ? null : spec.serving.kvCacheDtype, spec.model.dtype, null);
    }

    /** Bytes of one activation element: an FP8 checkpoint computes in 16 bits ({@link ModelDtype#activation}). */
    static int activationDtypeBytes(InferenceDeploymentSpec spec) {
        return ModelDtype.activation(spec.model.dtype, null).bytes();
    }

    /**
     * The model dimensions {@link MemoryBudget} sizes the activations from; the MLP's width is {@link
     * ModelGeometry#activationIntermediateSize} (a Mixture of Experts: expertsPerToken × the expert intermediate size).
     */
    public static MemoryBudget.Dims dims(InferenceDeploymentSpec spec) {
        return dims(spec.model.geometry, activationDtypeBytes(spec));
    }

    /** {@link #dims(InferenceDeploymentSpec)} of a model of geometry {@code g} computing in {@code bytes}-byte elements. */
    static MemoryBudget.Dims dims(ModelGeometry g, int bytes) {
        return new MemoryBudget.Dims(
                g.hiddenSize,
                g.attentionHeads,
                g.kvHeads,
                g.effectiveHeadDim(),
                g.activationIntermediateSize(),
                g.vocabSize == null ? 0 : g.vocabSize,
                bytes);
    }

    /**
     * Activation workspace on one GPU for a forward pass of maxBatchTokens ({@link MemoryBudget#activationBytes}), plus
     * the speculative verify steps' extra logits rows ({@link Speculation#logitsBytes}; 0 without speculation), plus
     * the sampler's per-row buffers ({@link #sampling}).
     */
    public static long activationBytes(InferenceDeploymentSpec spec, int tensor) {
        return MemoryBudget.activationBytes(dims(spec), spec.serving.maxBatchTokens, tensor)
                + Speculation.logitsBytes(spec)
                + sampling(spec).total();
    }

    /**
     * The sampler's per-row buffers on the GPU that samples ({@link MemoryBudget#samplingBytes}, the Tensorlane
     * runtime's layout from the contract's {@code SamplingBuffers}): the sampling parameters and a token-mask slot
     * (structured outputs, tool-call enforcement) for every logits row, k + 1 a sequence with speculation, and the
     * penalty pairs of every sequence of serving.maxModelLength tokens, for min(maxBatchTokens, 256) sequences a step.
     * Zeros when the vocabulary is unknown.
     */
    public static MemoryBudget.Sampling sampling(InferenceDeploymentSpec spec) {
        Integer vocab = spec.model.geometry.vocabSize;
        return MemoryBudget.samplingBytes(
                vocab == null ? 0 : vocab,
                spec.serving.maxBatchTokens,
                Speculation.verifiedTokens(spec),
                spec.serving.maxModelLength);
    }

    /** Custom-allreduce device buffers per rank, from the kernels' layout; 0 unless the custom allreduce is used. */
    public static long allreduceIpcBytes(AllreduceChoice allreduce, int tensor) {
        return MemoryBudget.ipcBytes(allreduce.custom(), tensor, allreduce.maxMessageBytes());
    }

    /**
     * The plan, or a DOES_NOT_FIT reason. {@code fraction} is null for auto, else the user's value in (0, 1).
     *
     * @return the plan and, when the model does not fit, the message (plan numbers are still filled in)
     */
    public static Result plan(
            InferenceDeploymentSpec spec, int tensor, long gpuMemoryBytes, AllreduceChoice allreduce, Double fraction) {
        long total = gpuMemoryBytes;
        DraftPlan draft = DraftPlan.of(spec);
        long weights = ceilDiv(spec.model.weightBytes, tensor);
        long draftWeights = draft == null ? 0 : draft.weightsBytes();
        long targetKvPerToken = kvBytesPerToken(spec, tensor);
        // the draft's cache holds as many tokens as the target's (DraftPlan): one token costs both
        long kvPerToken = targetKvPerToken + (draft == null ? 0 : draft.kvBytesPerToken());
        long minKv = kvPerToken * spec.serving.maxModelLength;
        long activations = activationBytes(spec, tensor) + (draft == null ? 0 : draft.activationBytes());
        long graphs = CUDA_GRAPH_BYTES + (draft == null ? 0 : draft.cudaGraphBytes());
        long nccl = MemoryBudget.ncclBytes(tensor);
        long ipc = allreduceIpcBytes(allreduce, tensor);
        long reserve = (long) spec.memory.reserveMiB * MiB;
        long nonStatic = activations + CUDA_CONTEXT_BYTES + graphs + nccl + ipc + reserve;
        String breakdown = "activations " + Units.bytes(activations) + ofWhich(spec, draft)
                + ", CUDA graphs " + Units.bytes(graphs) + (draft == null ? "" : " (two pools: target and draft)")
                + ", CUDA context " + Units.bytes(CUDA_CONTEXT_BYTES) + ", reserve " + Units.bytes(reserve) + ", NCCL "
                + Units.bytes(nccl) + ", custom-allreduce IPC buffers " + Units.bytes(ipc);

        double autoFraction = Math.min(MAX_AUTO_FRACTION, floor2((double) (total - nonStatic) / total));
        double f = fraction == null ? autoFraction : fraction;
        // what the runtime takes: fraction × total rounded down to the allocation granule
        long staticBytes = MemoryBudget.staticPoolBytes(f, total);
        long kv = Math.max(0, staticBytes - weights - draftWeights);
        long kvTokens = kvPerToken == 0 ? 0 : kv / kvPerToken;
        long draftKv = draft == null ? 0 : kvTokens * draft.kvBytesPerToken();
        long headroom = total - staticBytes - nonStatic;
        double utilization = Math.min(MAX_AUTO_FRACTION, floor2((double) (staticBytes + nonStatic - reserve) / total));
        List<String> warnings = new ArrayList<>();
        String doesNotFit = null;
        boolean tooHigh = false;
        String weightTerms = draft == null
                ? "weights " + Units.bytes(weights)
                : "weights " + Units.bytes(weights) + " + draft model weights " + Units.bytes(draftWeights);
        String kvTerm = draft == null ? "KV cache" : "KV cache (target and draft)";

        long need = weights + draftWeights + minKv + nonStatic;
        if (need > total || fraction == null && kv < minKv) {
            doesNotFit = "model does not fit: per GPU it needs " + weightTerms + " + " + kvTerm + " for "
                    + spec.serving.maxModelLength + " tokens " + Units.bytes(minKv) + " + non-static "
                    + Units.bytes(nonStatic)
                    + " (" + breakdown + ") = " + Units.bytes(need) + " > " + Units.bytes(total)
                    + "; use more GPUs (parallelism.tensor) or lower serving.maxModelLength / maxBatchTokens"
                    + (draft == null ? "" : ", or a smaller draft model");
        } else if (kv < minKv) {
            doesNotFit = "memory.fraction " + Units.fraction(f) + " gives " + Units.bytes(staticBytes)
                    + " static memory per GPU: " + weightTerms + " take " + Units.bytes(weights + draftWeights)
                    + ", leaving " + Units.bytes(kv) + " for the " + kvTerm + " but one "
                    + spec.serving.maxModelLength + "-token sequence needs " + Units.bytes(minKv)
                    + "; auto would pick " + Units.fraction(autoFraction);
        } else if (fraction != null && total - staticBytes < nonStatic) {
            tooHigh = true;
            warnings.add("memory.fraction " + Units.fraction(f) + " leaves " + Units.bytes(total - staticBytes)
                    + " per GPU for non-static use but " + Units.bytes(nonStatic) + " is needed (" + breakdown
                    + "); expect CUDA out of memory at start-up; auto would pick " + Units.fraction(autoFraction));
        }
        MemoryPlan plan = new MemoryPlan(
                total,
                f,
                utilization,
                kvTokens,
                kvCacheDtype(spec),
                fraction == null ? MemoryPlan.AUTO : MemoryPlan.USER,
                weights,
                kv - draftKv,
                activations,
                CUDA_CONTEXT_BYTES,
                graphs,
                nccl,
                ipc,
                reserve,
                nonStatic,
                headroom,
                tooHigh,
                warnings,
                draftWeights,
                draftKv);
        return new Result(plan, doesNotFit, autoFraction);
    }

    /** The named terms inside the activations, " (of which …)", or "" when there are none. */
    private static String ofWhich(InferenceDeploymentSpec spec, DraftPlan draft) {
        List<String> terms = new ArrayList<>();
        if (draft != null) {
            terms.add("draft model " + Units.bytes(draft.activationBytes()));
        }
        long speculativeLogits = Speculation.logitsBytes(spec);
        if (speculativeLogits > 0) {
            terms.add("speculative verify logits " + Units.bytes(speculativeLogits));
        }
        MemoryBudget.Sampling s = sampling(spec);
        if (s.total() > 0) {
            terms.add("sampling parameters and token masks " + Units.bytes(s.parametersAndMasks()));
            terms.add("sampling penalty pairs " + Units.bytes(s.penaltyPairs()));
        }
        return terms.isEmpty() ? "" : " (of which " + String.join(", ", terms) + ")";
    }

    /**
     * @param doesNotFit the DoesNotFit message, or null when the plan fits
     * @param autoFraction what auto would pick on this hardware (remediation lowers from it)
     */
    public record Result(MemoryPlan plan, String doesNotFit, double autoFraction) {}

    static double floor2(double x) {
        return Math.floor(x * 100 + 1e-9) / 100;
    }

    static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }
}
