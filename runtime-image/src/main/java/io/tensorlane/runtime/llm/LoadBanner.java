package io.tensorlane.runtime.llm;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.model.ModelConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/** The engine's line announcing a load: the model, its shape, its linears' quantization and where it runs; pure. */
final class LoadBanner {
    private LoadBanner() {}

    /**
     * E.g. {@code engine: loading /models/llama (LLAMA, 32 layers, hidden 4096, 32/8 heads, vocab 128256, bf16) on 2
     * rank(s), GPUs [0, 1]}; FP8 linears add {@code ; linears <quantization>}, virtual ranks {@code (virtual ranks)}.
     *
     * @param devices the GPU of each rank
     */
    static String of(Path modelDir, ModelConfig config, DType dtype, List<Integer> devices, boolean virtual) {
        return String.format(
                Locale.ROOT,
                "engine: loading %s (%s, %d layers, hidden %d, %d/%d heads, vocab %d, %s%s) on %d rank(s), GPUs %s%s",
                modelDir,
                config.architecture(),
                config.numLayers(),
                config.hiddenSize(),
                config.numHeads(),
                config.numKvHeads(),
                config.vocabSize(),
                dtype,
                config.quantization().fp8()
                        ? "; linears " + config.quantization().describe()
                        : "",
                devices.size(),
                devices,
                virtual ? " (virtual ranks)" : "");
    }
}
