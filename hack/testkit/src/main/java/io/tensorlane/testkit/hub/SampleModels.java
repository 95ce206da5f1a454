package io.tensorlane.testkit.hub;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The models manifests/samples name, as header-only checkpoints with their real geometry (from their config.json):
 * what the operator reads for them on a cluster, served on loopback for the tests and the demo.
 */
public final class SampleModels {
    /** The commit every sample model is at on the local Hub. */
    public static final String SHA = "5a3e2b1c0d9f8e7a6b5c4d3e2f1a0b9c8d7e6f5a";

    private SampleModels() {}

    /** Repository id → files. Llama-3.3-70B: 141,107,412,992 bytes; Llama-3.1-8B: 16,060,522,496 bytes (bf16). */
    public static Map<String, Map<String, byte[]>> all() {
        Map<String, Map<String, byte[]>> m = new LinkedHashMap<>();
        m.put(
                "meta-llama/Llama-3.3-70B-Instruct",
                Checkpoints.llama(
                        new Checkpoints.Llama(80, 8192, 64, 8, 128256, 28672, 131072, false),
                        Checkpoints.Weights.BF16,
                        8));
        m.put(
                "meta-llama/Llama-3.1-8B-Instruct",
                Checkpoints.llama(
                        new Checkpoints.Llama(32, 4096, 32, 8, 128256, 14336, 131072, false),
                        Checkpoints.Weights.BF16,
                        8));
        m.put(
                "meta-llama/Llama-3.1-405B-Instruct-FP8",
                Checkpoints.llama(
                        new Checkpoints.Llama(126, 16384, 128, 8, 128256, 53248, 131072, false),
                        Checkpoints.Weights.FP8_FBGEMM,
                        16));
        return m;
    }

    /** Puts every sample model on {@code hub}. */
    public static LocalHub serve(LocalHub hub) {
        all().forEach((id, files) -> hub.put(id, new LocalHub.Repo(SHA, files, null, false)));
        return hub;
    }
}
