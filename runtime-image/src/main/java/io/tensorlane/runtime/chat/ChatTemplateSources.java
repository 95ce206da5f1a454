package io.tensorlane.runtime.chat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The chat template texts of a model folder, found as transformers' tokenizer finds them (PreTrainedTokenizerBase
 * {@code from_pretrained}/{@code _from_pretrained}/{@code __init__}, 4.47 to 5.x):
 *
 * <ol>
 *   <li>Template files win: {@code chat_template.jinja} is the template named {@code default}, each
 *       {@code additional_chat_templates/NAME.jinja} the template NAME. When any file exists, tokenizer_config.json's
 *       {@code chat_template} is not read at all (also when only additional templates exist: then there is no
 *       {@code default}). One {@code chat_template.jinja} and nothing else is a single template.
 *   <li>Else tokenizer_config.json's {@code chat_template}: a string is a single template; a list of
 *       {@code {"name", "template"}} is a set of named templates.
 * </ol>
 *
 * <p>Choosing one for a request is transformers' {@code get_chat_template(None, tools)} ({@link #select}): a single
 * template always; of named ones {@code tool_use} when tools are given (not None, even an empty list) and there is
 * one, else {@code default}, else an error. A processor's {@code chat_template.json} is not read: transformers' tokenizer
 * does not read it, and vLLM consults the processor only for multimodal models, which this engine does not serve.
 *
 * <p>Immutable.
 */
public final class ChatTemplateSources {
    public static final String JINJA_FILE = "chat_template.jinja";
    public static final String TEMPLATE_DIR = "additional_chat_templates";
    public static final String DEFAULT = "default";
    public static final String TOOL_USE = "tool_use";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Map<String, String> templates;
    private final boolean named;

    private ChatTemplateSources(Map<String, String> templates, boolean named) {
        this.templates = Collections.unmodifiableMap(new LinkedHashMap<>(templates));
        this.named = named;
    }

    /**
     * The resolution itself, on what the files held.
     *
     * @param configTemplate tokenizer_config.json's {@code chat_template} (null or JSON null: none)
     * @param jinjaFile the text of {@code chat_template.jinja}, null when there is no such file
     * @param additional {@code additional_chat_templates/NAME.jinja} texts by NAME (none: empty or null)
     * @throws IllegalArgumentException when the config's chat_template is neither a string nor a list of
     *     {name, template} objects
     */
    public static ChatTemplateSources resolve(
            JsonNode configTemplate, String jinjaFile, Map<String, String> additional) {
        Map<String, String> files = new LinkedHashMap<>();
        if (jinjaFile != null) files.put(DEFAULT, jinjaFile);
        if (additional != null) new TreeMap<>(additional).forEach(files::put);
        if (!files.isEmpty()) {
            boolean single = files.size() == 1 && jinjaFile != null;
            return new ChatTemplateSources(files, !single);
        }
        if (configTemplate == null || configTemplate.isNull() || configTemplate.isMissingNode()) {
            return new ChatTemplateSources(Map.of(), false);
        }
        if (configTemplate.isTextual()) {
            return new ChatTemplateSources(Map.of(DEFAULT, configTemplate.textValue()), false);
        }
        if (!configTemplate.isArray()) {
            throw new IllegalArgumentException("tokenizer_config.json: chat_template must be a string or a list of "
                    + "{\"name\", \"template\"} objects, got "
                    + configTemplate.getNodeType().name().toLowerCase());
        }
        Map<String, String> named = new LinkedHashMap<>();
        for (int i = 0; i < configTemplate.size(); i++) {
            JsonNode e = configTemplate.get(i);
            if (!e.path("name").isTextual() || !e.path("template").isTextual()) {
                throw new IllegalArgumentException("tokenizer_config.json: chat_template[" + i
                        + "] is not a {\"name\": string, \"template\": string} object");
            }
            named.put(e.get("name").textValue(), e.get("template").textValue()); // a repeated name: the last wins
        }
        return new ChatTemplateSources(named, true);
    }

    /**
     * Reads a model folder's tokenizer_config.json (optional), chat_template.jinja (optional) and
     * additional_chat_templates/*.jinja (optional, not recursive), then {@link #resolve}s.
     *
     * @throws IllegalArgumentException when tokenizer_config.json is not valid JSON or its chat_template is malformed
     * @throws UncheckedIOException when a file cannot be read
     */
    public static ChatTemplateSources read(Path modelDir) {
        JsonNode configTemplate = null;
        Path config = modelDir.resolve("tokenizer_config.json");
        if (Files.isRegularFile(config)) {
            try {
                configTemplate = JSON.readTree(config.toFile()).get("chat_template");
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot parse " + config + ": " + e.getMessage(), e);
            }
        }
        Path jinja = modelDir.resolve(JINJA_FILE);
        String jinjaText = Files.isRegularFile(jinja) ? text(jinja) : null;
        Map<String, String> additional = new TreeMap<>();
        Path dir = modelDir.resolve(TEMPLATE_DIR);
        if (Files.isDirectory(dir)) {
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*.jinja")) {
                for (Path p : ds) {
                    String file = p.getFileName().toString();
                    if (Files.isRegularFile(p)) additional.put(file.substring(0, file.length() - 6), text(p));
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot list " + dir, e);
            }
        }
        return resolve(configTemplate, jinjaText, additional);
    }

    private static String text(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + p, e);
        }
    }

    /** No template at all: chat is not possible. */
    public boolean isEmpty() {
        return templates.isEmpty();
    }

    /** True for a set of named templates (transformers' dict form), false for none or a single template. */
    public boolean named() {
        return named;
    }

    /** The template texts by name; a single template is under {@link #DEFAULT}. Unmodifiable, in file/config order. */
    public Map<String, String> templates() {
        return templates;
    }

    /**
     * The name of the template a request renders with: transformers' {@code get_chat_template(None, tools)}.
     *
     * @param toolsGiven whether the request passes {@code tools} (not None: an empty list counts)
     * @throws ChatTemplateException when there is no template, or named ones without the one to use (transformers'
     *     message, with the available names)
     */
    public String select(boolean toolsGiven) {
        if (templates.isEmpty()) {
            throw new ChatTemplateException(
                    "this model has no chat template (no chat_template.jinja, no chat_template in "
                            + "tokenizer_config.json)",
                    false);
        }
        if (!named) return DEFAULT;
        if (toolsGiven && templates.containsKey(TOOL_USE)) return TOOL_USE;
        if (templates.containsKey(DEFAULT)) return DEFAULT;
        throw new ChatTemplateException(
                "This model has multiple chat templates with no default specified! Please either pass a chat template "
                        + "or the name of the template you wish to use to the `chat_template` argument. Available "
                        + "template names are "
                        + templates.keySet().stream()
                                .sorted()
                                .map(n -> "'" + n + "'")
                                .collect(Collectors.joining(", ", "[", "]"))
                        + ".",
                false);
    }
}
