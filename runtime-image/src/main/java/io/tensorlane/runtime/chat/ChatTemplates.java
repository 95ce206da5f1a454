package io.tensorlane.runtime.chat;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A model's chat templates compiled once ({@link ChatTemplateSources}: which one a request uses), with the tokenizer's
 * special tokens. Immutable and thread-safe.
 */
public final class ChatTemplates {
    private final ChatTemplateSources sources;
    private final Map<String, ChatTemplate> compiled;

    private ChatTemplates(ChatTemplateSources sources, Map<String, ChatTemplate> compiled) {
        this.sources = sources;
        this.compiled = Collections.unmodifiableMap(compiled);
    }

    /**
     * Compiles every template of the sources.
     *
     * @throws ChatTemplateException naming the template that does not compile
     */
    public static ChatTemplates compile(ChatTemplateSources sources, String bosToken, String eosToken) {
        Map<String, ChatTemplate> out = new LinkedHashMap<>();
        sources.templates().forEach((name, text) -> {
            try {
                out.put(name, ChatTemplate.compile(text, bosToken, eosToken));
            } catch (ChatTemplateException e) {
                throw new ChatTemplateException(
                        (sources.named() ? "chat template '" + name + "': " : "") + e.getMessage(), false);
            }
        });
        return new ChatTemplates(sources, out);
    }

    public boolean isEmpty() {
        return compiled.isEmpty();
    }

    /** The template names (a single template: {@code default}). */
    public java.util.Set<String> names() {
        return compiled.keySet();
    }

    /**
     * The template a request renders with ({@link ChatTemplateSources#select}).
     *
     * @throws ChatTemplateException when there is none to use
     */
    public ChatTemplate forRequest(boolean toolsGiven) {
        return compiled.get(sources.select(toolsGiven));
    }
}
