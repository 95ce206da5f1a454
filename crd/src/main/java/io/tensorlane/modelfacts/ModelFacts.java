package io.tensorlane.modelfacts;

import io.tensorlane.api.v1alpha1.ModelStatus;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Everything read from a model before planning: config.json plus the safetensors headers.
 *
 * @param config what config.json says
 * @param bytesByDtype tensor bytes per safetensors dtype over all files
 * @param files number of safetensors files
 */
public record ModelFacts(ConfigFacts config, Map<String, Long> bytesByDtype, int files) {
    public ModelFacts {
        bytesByDtype = Collections.unmodifiableMap(new TreeMap<>(bytesByDtype));
    }

    /**
     * Facts from config.json and the per-file header byte counts.
     *
     * @throws ModelFactsException when there is no safetensors file
     */
    public static ModelFacts of(ConfigFacts config, List<Map<String, Long>> perFile, String source) {
        if (perFile.isEmpty()) {
            throw new ModelFactsException(
                    source + ": no *.safetensors files (Tensorlane reads safetensors checkpoints only)");
        }
        Map<String, Long> sum = new TreeMap<>();
        perFile.forEach(m -> m.forEach((k, v) -> sum.merge(k, v, Long::sum)));
        return new ModelFacts(config, sum, perFile.size());
    }

    /** Bytes of all tensors. */
    public long weightBytes() {
        return bytesByDtype.values().stream().mapToLong(Long::longValue).sum();
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
        s.weightBytesByDtype = new TreeMap<>(bytesByDtype);
        s.files = files;
        s.readAt = readAt;
        return s;
    }
}
