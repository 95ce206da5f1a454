package io.tensorlane.runtime.chat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

/**
 * Which tool-call format ({@link ToolCallFormat#named}) a model writes, chosen as vLLM's users choose
 * {@code --tool-call-parser}: {@code hermes} for Qwen2/Qwen2.5/Qwen3 (dense and MoE), {@code llama3_json} for Llama
 * 3.x (a Llama whose template knows {@code <|python_tag|>}, {@code ipython} or {@code <|eot_id|>}), {@code mistral} for
 * a Mistral/Mixtral whose template writes {@code [TOOL_CALLS]} or {@code [AVAILABLE_TOOLS]}. Another model falls back
 * to its templates' own markers ({@code <tool_call>}, {@code [TOOL_CALLS]}, {@code <|python_tag|>}); none: the model
 * has no tool-call parser, and requests that need one are refused.
 */
public final class ToolParsers {
    /** The names {@link ToolCallFormat#named} knows. */
    public static final List<String> NAMES = List.of("hermes", "llama3_json", "mistral");

    private ToolParsers() {}

    /**
     * The parser for a served model: {@code override} when given ("auto" or blank: chosen), else from the model folder's
     * config.json and the chat templates' texts. Null: none.
     *
     * @throws IllegalArgumentException for an override that is not a known parser
     */
    public static String choose(String override, Path modelDir, Collection<String> templateTexts) {
        if (override != null && !override.isBlank() && !override.equals("auto")) {
            if (!NAMES.contains(override)) {
                throw new IllegalArgumentException(
                        "unknown tool-call parser '" + override + "' (one of " + String.join(", ", NAMES) + ", auto)");
            }
            return override;
        }
        String modelType = "";
        JsonNode config = readConfig(modelDir);
        if (config != null) {
            modelType = config.path("model_type").asText("");
            for (JsonNode a : config.path("architectures")) {
                modelType += " " + a.asText("");
            }
        }
        return forModel(modelType, String.join("\n", templateTexts));
    }

    /**
     * The parser for a model of {@code modelType} (config.json's model_type and architectures, any case) whose chat
     * templates read {@code templates}; null when none fits.
     */
    static String forModel(String modelType, String templates) {
        String t = modelType.toLowerCase(Locale.ROOT);
        boolean llama3 = templates.contains("<|python_tag|>")
                || templates.contains("ipython")
                || templates.contains("<|eot_id|>");
        boolean mistralTools = templates.contains("[TOOL_CALLS]") || templates.contains("[AVAILABLE_TOOLS]");
        if (t.contains("qwen2") || t.contains("qwen3")) return "hermes";
        if (t.contains("llama") && llama3) return "llama3_json";
        if ((t.contains("mistral") || t.contains("mixtral")) && mistralTools) return "mistral";
        if (templates.contains("<tool_call>")) return "hermes";
        if (mistralTools) return "mistral";
        if (templates.contains("<|python_tag|>")) return "llama3_json";
        return null;
    }

    private static JsonNode readConfig(Path modelDir) {
        Path file = modelDir == null ? null : modelDir.resolve("config.json");
        if (file == null || !Files.isRegularFile(file)) return null;
        try {
            return ToolCallFormat.Json.MAPPER.readTree(Files.readString(file));
        } catch (IOException e) {
            return null; // the engine reports a broken config.json itself
        }
    }
}
