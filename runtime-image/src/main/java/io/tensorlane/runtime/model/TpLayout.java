package io.tensorlane.runtime.model;

import java.util.Objects;

/**
 * Megatron tensor parallelism over {@code tp} ranks: attention heads and MLP columns (every expert's too) split evenly, KV heads split when
 * there are at least {@code tp} of them and replicated (each rank holds one) when there are fewer, vocabulary split in
 * {@code ceil(vocab / tp)} rows per rank (the last ranks padded).
 */
public record TpLayout(ModelConfig config, int tp) {
    public static final int MAX_TP = 8;

    public TpLayout {
        Objects.requireNonNull(config, "config");
        if (tp < 1 || tp > MAX_TP) {
            throw new ModelException("tensor parallel size " + tp + " is not supported (1.." + MAX_TP + ")");
        }
        int heads = config.numHeads();
        int kv = config.numKvHeads();
        if (heads % tp != 0) {
            throw new ModelException(
                    "num_attention_heads " + heads + " is not divisible by tensor parallel size " + tp);
        }
        if (kv % tp != 0 && tp % kv != 0) {
            throw new ModelException("num_key_value_heads " + kv + " and tensor parallel size " + tp
                    + " do not divide one another (KV heads are split or replicated evenly)");
        }
        if (config.denseLayers() > 0 && config.intermediateSize() % tp != 0) {
            throw new ModelException("intermediate_size " + config.intermediateSize()
                    + " is not divisible by tensor parallel size " + tp);
        }
        MoeSpec moe = config.moe();
        if (moe != null && moe.expertIntermediateSize() % tp != 0) {
            throw new ModelException("the experts' intermediate size " + moe.expertIntermediateSize()
                    + " is not divisible by tensor parallel size " + tp
                    + " (each expert is split over the ranks by its intermediate columns)");
        }
    }

    public static TpLayout of(ModelConfig config, int tp) {
        return new TpLayout(config, tp);
    }

    public int headsPerRank() {
        return config.numHeads() / tp;
    }

    /** KV heads held by each rank: numKvHeads / tp, or 1 when fewer KV heads than ranks (replicated). */
    public int kvHeadsPerRank() {
        return Math.max(1, config.numKvHeads() / tp);
    }

    /** Whether a KV head is held by more than one rank. */
    public boolean kvReplicated() {
        return config.numKvHeads() < tp;
    }

    /** The first KV head of {@code rank}. */
    public int kvHeadStart(int rank) {
        checkRank(rank);
        int kv = config.numKvHeads();
        return kv >= tp ? rank * (kv / tp) : rank / (tp / kv);
    }

    /** The first query head of {@code rank}. */
    public int headStart(int rank) {
        checkRank(rank);
        return rank * headsPerRank();
    }

    /** Columns of a dense MLP's intermediate on each rank. */
    public int intermediatePerRank() {
        return config.intermediateSize() / tp;
    }

    /** Columns of each expert's intermediate on each rank (0 for a dense model). */
    public int expertIntermediatePerRank() {
        return config.moe() == null ? 0 : config.moe().expertIntermediateSize() / tp;
    }

    /** Vocabulary rows per rank: ceil(vocab / tp). */
    public int vocabPerRank() {
        return (config.vocabSize() + tp - 1) / tp;
    }

    /** Rows of the gathered logits: vocabPerRank x tp (the vocabulary padded to a multiple of tp). */
    public int vocabPadded() {
        return vocabPerRank() * tp;
    }

    public int vocabStart(int rank) {
        checkRank(rank);
        return rank * vocabPerRank();
    }

    /** Rows of real vocabulary on {@code rank} (the rest of its {@link #vocabPerRank} rows are padding), >= 0. */
    public int vocabRows(int rank) {
        return Math.max(0, Math.min(vocabPerRank(), config.vocabSize() - vocabStart(rank)));
    }

    /** Width of this rank's q+k+v projection output: (headsPerRank + 2 kvHeadsPerRank) x headDim. */
    public int qkvRows() {
        return (headsPerRank() + 2 * kvHeadsPerRank()) * config.headDim();
    }

    public void checkRank(int rank) {
        if (rank < 0 || rank >= tp) {
            throw new ModelException("rank " + rank + " is outside tensor parallel size " + tp);
        }
    }
}
