package io.tensorlane.runtime.model;

import java.util.List;

/** Small hand-built configs for arithmetic tests. */
final class TestConfigs {
    private TestConfigs() {}

    static ModelConfig of(
            Architecture arch,
            int hidden,
            int inter,
            int layers,
            int heads,
            int kv,
            int headDim,
            int vocab,
            boolean tie) {
        return new ModelConfig(
                arch,
                hidden,
                inter,
                layers,
                heads,
                kv,
                headDim,
                vocab,
                1e-5,
                10000.0,
                null,
                4096,
                tie,
                arch == Architecture.QWEN2,
                arch == Architecture.QWEN3,
                WeightDType.BF16,
                null,
                null,
                List.of(),
                null,
                null);
    }

    static ModelConfig heads(int heads, int kv, int inter, int vocab) {
        return of(Architecture.LLAMA, heads * 8, inter, 1, heads, kv, 8, vocab, false);
    }

    static ModelConfig rope(int headDim, double theta, RopeScaling scaling) {
        return new ModelConfig(
                Architecture.LLAMA,
                headDim,
                64,
                1,
                1,
                1,
                headDim,
                100,
                1e-5,
                theta,
                scaling,
                4096,
                false,
                false,
                false,
                WeightDType.BF16,
                null,
                null,
                List.of(),
                null,
                null);
    }

    /** {@code c} with its linears stored as {@code q} says. */
    static ModelConfig quantized(ModelConfig c, Quantization q) {
        return new ModelConfig(
                c.architecture(),
                c.hiddenSize(),
                c.intermediateSize(),
                c.numLayers(),
                c.numHeads(),
                c.numKvHeads(),
                c.headDim(),
                c.vocabSize(),
                c.rmsNormEps(),
                c.ropeTheta(),
                c.ropeScaling(),
                c.maxPositionEmbeddings(),
                c.tieWordEmbeddings(),
                c.qkvBias(),
                c.qkNorm(),
                c.dtype(),
                c.slidingWindow(),
                c.bosTokenId(),
                c.eosTokenIds(),
                q,
                c.moe());
    }
}
