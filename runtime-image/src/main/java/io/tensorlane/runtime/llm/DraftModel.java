package io.tensorlane.runtime.llm;

import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.model.ModelConfig;
import io.tensorlane.runtime.sched.DraftProposer;
import io.tensorlane.runtime.sched.Proposer;
import io.tensorlane.runtime.sched.SpeculativeConfig;
import io.tensorlane.runtime.text.TokenizerMatch;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The draft model of draft-model speculation ({@code --speculative draft:DIR,k=K}, issue 34 item 2b): a smaller
 * checkpoint with the target's tokenizer ({@link TokenizerMatch}), loaded beside the target as an {@link LlmEngine} of
 * its own (its weights, its paged KV cache, its CUDA graphs for its one-token steps and its short chunks), whose greedy
 * guesses the scheduler verifies in the target's steps ({@link DraftProposer}): greedy guesses, or for requests sampling by
 * temperature alone guesses drawn from the draft's own distributions, verified by the rejection rule.
 *
 * <p><b>Placement: TP 1 on rank 0's GPU</b>, whatever the target's TP. A draft step is one token of a small model at
 * batch 1: a few microseconds of weight reads against the fixed cost of a step (input upload, a graph launch, the
 * sampled id back). Sharding it over the target's ranks would add two allreduces a layer to each of its k steps per
 * verify (each ~5-20 µs, more than the draft's own GEMVs) and keep every rank in lockstep through them; on rank 0 alone
 * the other ranks simply wait, as they would wait for the draft anyway (the guesses come before the verify step). The
 * price: only rank 0's GPU holds the draft, so the target's KV blocks, the same on every rank, are sized by what rank 0's
 * GPU leaves after both.
 *
 * <p><b>Memory:</b> the draft loads first, without a KV cache ({@link KvSizing#LATER}): its weights and activations are
 * then on rank 0's GPU when the target sizes its KV cache, which it does for itself and a draft cache of as many tokens
 * on that GPU ({@link KvSizing#beside}, the draft's bytes per block); the draft's cache is then allocated with the
 * target's token count, so it never runs out before the target's does. The draft's KV elements are its activations'
 * dtype.
 *
 * <p><b>KV cache in step with the target:</b> each sequence's draft session feeds the draft only the tokens past the
 * longest prefix the draft's cache and the sequence share, so after a verify step the cache holds exactly the accepted
 * tokens (the rejected positions are overwritten at the next feed); a preempted or finished sequence gives its draft
 * blocks back and a preempted one's next session feeds its tokens again (the target's prefix cache never reaches the
 * draft's: the draft computes every prompt itself).
 */
public final class DraftModel implements AutoCloseable {
    /** The most tokens of one draft step (its prompt chunks): the contract's, which the operator budgets with. */
    static final int MAX_CHUNK = io.tensorlane.contract.DraftLayout.MAX_CHUNK;

    private final LlmEngine engine;
    private final DraftProposer proposer;

    private DraftModel(LlmEngine engine, int k, int targetVocab) {
        this.engine = engine;
        this.proposer = new DraftProposer(
                engine,
                engine.blocks(),
                engine.options().maxBatchTokens(),
                engine.maxBlocksPerSeq(),
                k + 1,
                targetVocab,
                true);
    }

    /** The target and, with draft speculation, its draft; closing it closes both. */
    public record Engines(LlmEngine target, DraftModel draft) implements AutoCloseable {
        /** The draft's proposer, or null without a draft (no speculation, or n-gram's own). */
        public Proposer proposer() {
            return draft == null ? null : draft.proposer();
        }

        @Override
        public void close() {
            try {
                target.close();
            } finally {
                if (draft != null) {
                    draft.close();
                }
            }
        }
    }

    /**
     * Loads the target of {@code target} and, when {@code spec} is draft speculation, its draft beside it (see the class
     * comment); otherwise the target alone ({@link LlmEngine#load}). A draft whose tokenizer is not the target's, or
     * that cannot serve the target's longest sequence, is refused before any GPU memory is taken.
     */
    public static Engines load(EngineOptions target, SpeculativeConfig spec, PrintWriter log) {
        if (spec == null || spec.method() != SpeculativeConfig.Method.DRAFT) {
            return new Engines(LlmEngine.load(target, log), null);
        }
        Path dir = spec.draftDir();
        String where = "draft model " + dir + " (--speculative " + spec + ")";
        if (!Files.isRegularFile(dir.resolve("config.json"))) {
            throw new IllegalArgumentException(where + ": no config.json there");
        }
        String tok = TokenizerMatch.problem(target.modelDir(), dir);
        if (tok != null) {
            throw new IllegalArgumentException(where + ": " + tok);
        }
        EngineOptions d = options(target, ModelConfig.read(target.modelDir()), spec);
        ModelConfig dc = ModelConfig.read(dir);
        try {
            LoadPlan.maxModelLen(d.maxModelLen(), dc);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
        }
        Cuda.init(LlmEngine.devices(target)); // the target's driver settings (virtual ranks) before the first context
        log.printf(
                "draft: %s (%s, %d layers, hidden %d, vocab %d) at TP 1 on rank 0's GPU, k=%d, chunks of %d tokens%n",
                dir, dc.architecture(), dc.numLayers(), dc.hiddenSize(), dc.vocabSize(), spec.k(), d.maxBatchTokens());
        log.flush();
        LlmEngine draft = LlmEngine.load(d, log, KvSizing.LATER);
        LlmEngine t = null;
        try {
            t = LlmEngine.load(target, log, KvSizing.beside(draft.kvBytesPerBlock()));
            log.print("draft: ");
            draft.allocateKv(t.memory().kvTokens(), log);
            DraftModel m = new DraftModel(draft, spec.k(), t.vocabSize());
            log.printf(
                    "draft: weights %.3f GB, KV cache %.3f GB (%d tokens, the target's count), activations %.3f GB%n",
                    draft.memory().weightBytesPerRank() / 1e9,
                    draft.memory().kvBytesPerRank() / 1e9,
                    draft.memory().kvTokens(),
                    draft.memory().activationBytesPerRank() / 1e9);
            log.flush();
            return new Engines(t, m);
        } catch (RuntimeException e) {
            try {
                if (t != null) {
                    t.close();
                }
            } finally {
                draft.close();
            }
            throw e;
        }
    }

    /**
     * The draft engine's options for {@code target} (config {@code targetConfig}): TP 1 on GPU 0 (never virtual ranks),
     * one sequence a step, chunks of {@code min(target's max batch tokens, }{@value #MAX_CHUNK}{@code )} tokens (at
     * least k + 1), k + 1 logits rows (a short chunk asks logits for every token: the shape of a captured graph), the
     * target's longest sequence, block size, memory fraction, graphs and kernel choices; its KV elements in its
     * activations' dtype. Pure.
     */
    static EngineOptions options(EngineOptions target, ModelConfig targetConfig, SpeculativeConfig spec) {
        int rows = spec.k() + 1;
        int chunk = io.tensorlane.contract.DraftLayout.chunkTokens(spec.k(), target.maxBatchTokens());
        return new EngineOptions(
                        spec.draftDir(),
                        1,
                        false,
                        1,
                        chunk,
                        LoadPlan.maxModelLen(target.maxModelLen(), targetConfig),
                        0,
                        target.memoryFraction(),
                        rows,
                        target.graphs(),
                        false,
                        null,
                        target.blockSize())
                .withBaselineKernels(target.baselineKernels());
    }

    public Proposer proposer() {
        return proposer;
    }

    /** The draft steps run so far and their wall time ({@link DraftProposer#work}). */
    public DraftProposer.Work work() {
        return proposer.work();
    }

    public LlmEngine engine() {
        return engine;
    }

    @Override
    public void close() {
        engine.close();
    }
}
