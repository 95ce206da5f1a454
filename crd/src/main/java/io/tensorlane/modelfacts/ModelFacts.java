package io.tensorlane.modelfacts;

import io.tensorlane.api.v1alpha1.ModelStatus;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Everything read from a model before planning: config.json plus the safetensors headers.
 *
 * @param config what config.json says
 * @param tensors what the headers of all files add up to (bytes per dtype, parameters, routed experts)
 * @param counts total and active parameters and weight bytes ({@link ActiveWeights})
 * @param files number of safetensors files
 */
public record ModelFacts(ConfigFacts config, TensorTally tensors, ActiveWeights.Counts counts, int files) {
    /**
     * Facts from config.json and the per-file header byte counts.
     *
     * @throws ModelFactsException when there is no safetensors file, or the headers' experts disagree with config.json
     */
    public static ModelFacts of(ConfigFacts config, List<TensorTally> perFile, String source) {
        if (perFile.isEmpty()) {
            throw new ModelFactsException(
                    source + ": no *.safetensors files (Tensorlane reads safetensors checkpoints only)");
        }
        TensorTally sum = perFile.stream().reduce(TensorTally.EMPTY, TensorTally::plus);
        return new ModelFacts(config, sum, ActiveWeights.of(config.geometry(), sum, source), perFile.size());
    }

    /** Tensor bytes per safetensors dtype over all files. */
    public Map<String, Long> bytesByDtype() {
        return tensors.bytesByDtype();
    }

    /** Bytes of all tensors. */
    public long weightBytes() {
        return tensors.bytes();
    }

    /** The status.model block: these facts, the source that was read, the exact revision and when. */
    public ModelStatus toStatus(String source, String revision, String readAt) {
        ModelStatus s = new ModelStatus();
        s.source = source;
        s.revision = revision;
        s.architecture = config.architecture();
        s.geometry = config.geometry();
        s.maxPositionEmbeddings = config.maxPositionEmbeddings();
        s.dtype = config.dtype();
        s.quantization = config.quantization();
        s.weightBytes = weightBytes();
        s.parameters = counts.parameters();
        s.activeParameters = counts.activeParameters();
        s.activeWeightBytes = counts.activeWeightBytes();
        s.weightBytesByDtype = new TreeMap<>(bytesByDtype());
        s.files = files;
        s.readAt = readAt;
        return s;
    }
}
