package io.tensorlane.runtime.fetch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.runtime.fetch.FetchFailure.Kind;
import io.tensorlane.runtime.model.Checkpoint;
import io.tensorlane.runtime.model.ModelException;
import io.tensorlane.runtime.model.SafetensorsFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Checks a finished download without reading the weights: every safetensors file is exactly as long as its header
 * declares (8 + header + the largest data_offsets end), config.json is a JSON object, and the shards the safetensors
 * index names are there. Only JSON syntax is checked for config.json: the same files serve SGLang and vLLM, and
 * whether the Tensorlane engine supports the architecture is decided elsewhere.
 */
final class Verifier {
    private static final ObjectMapper JSON = new ObjectMapper();

    private Verifier() {}

    static void verify(Path dir, List<String> files) throws FetchFailure {
        for (String f : files) {
            Path p = dir.resolve(f);
            if (f.endsWith(".safetensors")) {
                safetensors(f, p);
            } else if (f.equals("config.json")) {
                object(f, p);
            } else if (f.equals(Checkpoint.INDEX_FILE)) {
                index(dir, f, p);
            }
        }
    }

    private static void safetensors(String name, Path p) throws FetchFailure {
        try {
            long size = Files.size(p);
            long declared = SafetensorsFile.declaredSize(p);
            if (size != declared) {
                throw new FetchFailure(
                        Kind.VERIFICATION,
                        "verification failed: " + SafetensorsFile.sizeMismatch(Path.of(name), size, declared));
            }
        } catch (ModelException e) {
            throw new FetchFailure(
                    Kind.VERIFICATION, "verification failed: " + e.getMessage().replace(p.toString(), name));
        } catch (IOException e) {
            throw new FetchFailure(Kind.IO, "cannot read " + name + ": " + e.getMessage());
        }
    }

    private static JsonNode object(String name, Path p) throws FetchFailure {
        try {
            JsonNode n = JSON.readTree(p.toFile());
            if (n == null || !n.isObject()) {
                throw new FetchFailure(Kind.VERIFICATION, "verification failed: " + name + " is not a JSON object");
            }
            return n;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new FetchFailure(
                    Kind.VERIFICATION,
                    "verification failed: " + name + " is not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new FetchFailure(Kind.IO, "cannot read " + name + ": " + e.getMessage());
        }
    }

    private static void index(Path dir, String name, Path p) throws FetchFailure {
        JsonNode map = object(name, p).get("weight_map");
        if (map == null || !map.isObject()) {
            throw new FetchFailure(Kind.VERIFICATION, "verification failed: " + name + " has no \"weight_map\" object");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = map.fields(); it.hasNext(); ) {
            String shard = it.next().getValue().asText("");
            if (!Files.isRegularFile(dir.resolve(shard))) {
                throw new FetchFailure(
                        Kind.VERIFICATION,
                        "verification failed: " + name + " names " + shard
                                + ", which was not downloaded (is it in --files?)");
            }
        }
    }
}
