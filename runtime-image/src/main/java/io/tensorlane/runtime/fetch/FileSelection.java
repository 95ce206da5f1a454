package io.tensorlane.runtime.fetch;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Which files of a repository to download: glob patterns over the repository's file names ({@code *} and {@code ?}
 * stay within one folder, {@code **} crosses folders). The default is what an engine needs.
 */
public final class FileSelection {
    /**
     * The engine's files: config, generation config, tokenizer, the chat templates (chat_template.jinja and the named
     * ones under additional_chat_templates/, which transformers reads before tokenizer_config.json's chat_template),
     * the safetensors index and the safetensors shards.
     */
    public static final List<String> DEFAULT = List.of(
            "config.json",
            "generation_config.json",
            "tokenizer.json",
            "tokenizer_config.json",
            "special_tokens_map.json",
            "tokenizer.model",
            "chat_template.jinja",
            "additional_chat_templates/*.jinja",
            "model.safetensors.index.json",
            "*.safetensors");

    private final List<String> globs;
    private final List<Pattern> patterns;

    private FileSelection(List<String> globs) {
        this.globs = List.copyOf(globs);
        this.patterns = globs.stream().map(FileSelection::regex).toList();
    }

    public static FileSelection defaults() {
        return new FileSelection(DEFAULT);
    }

    /** The given globs, or the defaults when none are given. */
    public static FileSelection of(List<String> globs) throws FetchFailure {
        if (globs == null || globs.isEmpty()) {
            return defaults();
        }
        for (String g : globs) {
            if (g.isBlank() || g.startsWith("/") || g.contains("..") || g.contains("\\")) {
                throw new FetchFailure(
                        FetchFailure.Kind.USAGE,
                        "--files: '" + g + "' is not a file name pattern (relative names, "
                                + "'*', '?', '**'; no '..', '\\' or leading '/')");
            }
        }
        return new FileSelection(globs);
    }

    public boolean isDefault() {
        return globs.equals(DEFAULT);
    }

    public List<String> globs() {
        return globs;
    }

    public boolean matches(String file) {
        return patterns.stream().anyMatch(p -> p.matcher(file).matches());
    }

    /** The repository files that match, in the repository's order. */
    public List<String> select(List<String> files) {
        List<String> out = new ArrayList<>();
        for (String f : files) {
            if (matches(f)) {
                out.add(f);
            }
        }
        return out;
    }

    static Pattern regex(String glob) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < glob.length(); i++) {
            char c = glob.charAt(i);
            if (c == '*' && i + 1 < glob.length() && glob.charAt(i + 1) == '*') {
                sb.append(".*");
                i++;
            } else if (c == '*') {
                sb.append("[^/]*");
            } else if (c == '?') {
                sb.append("[^/]");
            } else {
                sb.append(Pattern.quote(String.valueOf(c)));
            }
        }
        return Pattern.compile(sb.toString());
    }
}
