package io.tensorlane.runtime.model;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * The parts of a Hugging Face config.json the engine needs. Field names in error messages are the config.json names.
 *
 * @param ropeScaling null for unscaled ("default") rope
 * @param slidingWindow null when every layer attends to the whole context
 * @param bosTokenId null when the config has none
 * @param eosTokenIds empty when the config has none
 * @param quantization how the linear layers are stored ({@link Quantization#NONE}: in {@code dtype})
 * @param moe the Mixture-of-Experts layers; null for a dense model (every layer's MLP of {@code intermediateSize})
 */
public record ModelConfig(
        Architecture architecture,
        int hiddenSize,
        int intermediateSize,
        int numLayers,
        int numHeads,
        int numKvHeads,
        int headDim,
        int vocabSize,
        double rmsNormEps,
        double ropeTheta,
        RopeScaling ropeScaling,
        int maxPositionEmbeddings,
        boolean tieWordEmbeddings,
        boolean qkvBias,
        boolean qkNorm,
        WeightDType dtype,
        Integer slidingWindow,
        Integer bosTokenId,
        List<Integer> eosTokenIds,
        Quantization quantization,
        MoeSpec moe) {

    public static final String CONFIG_FILE = "config.json";

    public ModelConfig {
        if (architecture == null) {
            throw new ModelException("architecture is required");
        }
        if (dtype == null) {
            throw new ModelException("dtype is required");
        }
        positive("hidden_size", hiddenSize);
        positive("intermediate_size", intermediateSize);
        positive("num_hidden_layers", numLayers);
        positive("num_attention_heads", numHeads);
        positive("num_key_value_heads", numKvHeads);
        positive("head_dim", headDim);
        positive("vocab_size", vocabSize);
        positive("max_position_embeddings", maxPositionEmbeddings);
        if (numHeads % numKvHeads != 0) {
            throw new ModelException(
                    "num_attention_heads " + numHeads + " is not a multiple of num_key_value_heads " + numKvHeads);
        }
        if (moe != null && moe.moeLayers().stream().anyMatch(l -> l < 0 || l >= numLayers)) {
            throw new ModelException("MoE layers " + moe.moeLayers() + " outside num_hidden_layers " + numLayers);
        }
        if (headDim % 2 != 0) {
            throw new ModelException("head_dim " + headDim + " must be even (rotary embedding pairs)");
        }
        if (!(rmsNormEps > 0) || Double.isInfinite(rmsNormEps)) {
            throw new ModelException("rms_norm_eps must be > 0, got " + rmsNormEps);
        }
        if (!(ropeTheta > 1) || Double.isInfinite(ropeTheta)) {
            throw new ModelException("rope_theta must be > 1, got " + ropeTheta);
        }
        if (slidingWindow != null && slidingWindow <= 0) {
            throw new ModelException("sliding_window must be > 0, got " + slidingWindow);
        }
        if (bosTokenId != null && (bosTokenId < 0 || bosTokenId >= vocabSize)) {
            throw new ModelException(
                    "bos_token_id " + bosTokenId + " is outside the vocabulary [0, " + vocabSize + ")");
        }
        eosTokenIds = eosTokenIds == null ? List.of() : List.copyOf(eosTokenIds);
        quantization = quantization == null ? Quantization.NONE : quantization;
        for (int eos : eosTokenIds) {
            if (eos < 0 || eos >= vocabSize) {
                throw new ModelException("eos_token_id " + eos + " is outside the vocabulary [0, " + vocabSize + ")");
            }
        }
    }

    private static void positive(String field, int value) {
        if (value <= 0) {
            throw new ModelException(field + " must be > 0, got " + value);
        }
    }

    /** Reads {@code modelDir/config.json}. */
    public static ModelConfig read(Path modelDir) {
        Path file = modelDir.resolve(CONFIG_FILE);
        String json;
        try {
            json = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new ModelException(file + " does not exist (expected a Hugging Face model directory)", e);
        } catch (IOException e) {
            throw new ModelException("cannot read " + file + ": " + e, e);
        }
        return parse(json, file.toString());
    }

    /** Parses config.json text; {@code sourceName} (a file name) starts every error message. */
    public static ModelConfig parse(String json, String sourceName) {
        return ConfigParser.parse(json, sourceName);
    }

    /** Query heads per KV head (the GQA group size). */
    public int groupSize() {
        return numHeads / numKvHeads;
    }

    /** Rows of the q projection: numHeads * headDim. */
    public int qSize() {
        return numHeads * headDim;
    }

    /** Rows of the k (and v) projection: numKvHeads * headDim. */
    public int kvSize() {
        return numKvHeads * headDim;
    }

    /** Whether layer {@code layer}'s MLP is a Mixture-of-Experts block (else dense, of {@code intermediateSize}). */
    public boolean isMoe(int layer) {
        return moe != null && moe.isMoe(layer);
    }

    /** Layers with a dense MLP. */
    public int denseLayers() {
        return moe == null ? numLayers : numLayers - moe.moeLayers().size();
    }

    /** Weights in elements (embedding, lm_head unless tied, all layers with every expert and router, final norm). */
    public long parameterCount() {
        long h = hiddenSize;
        long attn = h * (qSize() + 2L * kvSize())
                + (long) qSize() * h
                + (qkvBias ? qSize() + 2L * kvSize() : 0)
                + (qkNorm ? 2L * headDim : 0);
        long dense = 3L * h * intermediateSize;
        long layers = numLayers * (attn + 2 * h) + denseLayers() * dense;
        if (moe != null) {
            long experts = (long) moe.experts() * 3L * h * moe.expertIntermediateSize() + (long) moe.experts() * h;
            layers += moe.moeLayers().size() * experts;
        }
        return (long) vocabSize * h * (tieWordEmbeddings ? 1 : 2) + layers + h;
    }
}
