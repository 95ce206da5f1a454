package io.tensorlane.runtime.model;

/**
 * Rotary embedding scaling. {@code type} is {@code linear} (only {@code factor} is used) or {@code llama3} (all fields
 * are used). Unscaled ("default") rope is represented by a null RopeScaling in {@link ModelConfig}.
 * For {@code linear}, the other fields are 0 (originalMaxPositionEmbeddings may be set when the config has it).
 */
public record RopeScaling(
        String type, double factor, double lowFreqFactor, double highFreqFactor, int originalMaxPositionEmbeddings) {
    public static final String LINEAR = "linear";
    public static final String LLAMA3 = "llama3";

    public RopeScaling {
        if (!LINEAR.equals(type) && !LLAMA3.equals(type)) {
            throw new ModelException("rope type " + type + " is not supported (default, linear or llama3)");
        }
        if (!(factor > 0) || Double.isInfinite(factor)) {
            throw new ModelException(type + " rope factor must be > 0, got " + factor);
        }
        if (LLAMA3.equals(type)) {
            if (!(lowFreqFactor > 0) || !(highFreqFactor > lowFreqFactor) || Double.isInfinite(highFreqFactor)) {
                throw new ModelException(
                        "llama3 rope needs 0 < low_freq_factor < high_freq_factor, got low_freq_factor " + lowFreqFactor
                                + ", high_freq_factor " + highFreqFactor);
            }
            if (originalMaxPositionEmbeddings <= 0) {
                throw new ModelException(
                        "llama3 rope needs original_max_position_embeddings > 0, got " + originalMaxPositionEmbeddings);
            }
        }
    }

    public static RopeScaling linear(double factor) {
        return new RopeScaling(LINEAR, factor, 0, 0, 0);
    }

    public static RopeScaling llama3(
            double factor, double lowFreqFactor, double highFreqFactor, int originalMaxPositionEmbeddings) {
        return new RopeScaling(LLAMA3, factor, lowFreqFactor, highFreqFactor, originalMaxPositionEmbeddings);
    }
}
