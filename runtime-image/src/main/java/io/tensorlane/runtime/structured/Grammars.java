package io.tensorlane.runtime.structured;

import com.fasterxml.jackson.databind.JsonNode;
import dk.brics.automaton.Automaton;
import io.tensorlane.runtime.chat.PyJson;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The grammars of constrained answers, compiled onto one vocabulary and cached (the same schema or tool set of a later
 * request reuses the automaton and every mask computed for it): {@code response_format} json_object / json_schema, and
 * forced tool calls ({@code tool_choice: "required"} or a named function) written in the model's tool-call format with
 * their arguments constrained by each function's {@code parameters} schema. Thread-safe.
 */
public final class Grammars {
    private static final int CACHED = 64;

    private final TokenVocabulary vocab;
    private final Map<String, TokenMasks> cache = Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, TokenMasks> e) {
            return size() > CACHED;
        }
    });

    public Grammars(TokenVocabulary vocab) {
        this.vocab = vocab;
    }

    /** A tool the answer may call: its name and its parameters schema (null: any object). */
    public record Tool(String name, JsonNode parameters) {}

    /** The masks of {@code json_object} (schema null) or of a JSON schema. */
    public TokenMasks json(JsonNode schema) {
        String key = schema == null ? "json_object" : "schema:" + schema;
        return cached(key, () -> schema == null ? SchemaCompiler.anyObject() : SchemaCompiler.compile(schema));
    }

    /**
     * The masks of an answer that is only tool calls in {@code format} (hermes, llama3_json, mistral), each call one of
     * {@code tools}; {@code parallel}: one call or more, else exactly one.
     */
    public TokenMasks toolCalls(String format, List<Tool> tools, boolean parallel) {
        StringBuilder key = new StringBuilder("tools:" + format + ":" + parallel);
        for (Tool t : tools) key.append('|').append(t.name()).append('=').append(t.parameters());
        return cached(key.toString(), () -> toolAutomaton(format, tools, parallel));
    }

    static Automaton toolAutomaton(String format, List<Tool> tools, boolean parallel) {
        String argsKey = format.equals("llama3_json") ? "parameters" : "arguments";
        List<Automaton> calls = new ArrayList<>();
        for (int i = 0; i < tools.size(); i++) {
            Tool t = tools.get(i);
            Automaton args;
            try {
                args = t.parameters() == null || t.parameters().isEmpty()
                        ? SchemaCompiler.anyObject()
                        : SchemaCompiler.compile(t.parameters());
            } catch (SchemaException e) {
                throw new SchemaException("tools[" + i + "].function.parameters" + e.at().substring(1), e.why());
            }
            String head = "{\"name\": " + PyJson.dumps(t.name(), null, null, false) + ", \"" + argsKey + "\": ";
            calls.add(SchemaCompiler.literal(head).concatenate(args).concatenate(SchemaCompiler.literal("}")));
        }
        Automaton call = Automaton.union(calls);
        switch (format) {
            case "hermes": {
                Automaton one = SchemaCompiler.literal("<tool_call>\n")
                        .concatenate(call)
                        .concatenate(SchemaCompiler.literal("\n</tool_call>"));
                return parallel
                        ? one.concatenate(
                                SchemaCompiler.literal("\n").concatenate(one).repeat())
                        : one;
            }
            case "llama3_json":
                return parallel
                        ? call.concatenate(
                                SchemaCompiler.literal("; ").concatenate(call).repeat())
                        : call;
            case "mistral": {
                Automaton list = parallel
                        ? call.concatenate(
                                SchemaCompiler.literal(", ").concatenate(call).repeat())
                        : call;
                return SchemaCompiler.literal("[TOOL_CALLS]")
                        .concatenate(SchemaCompiler.literal(" ").optional())
                        .concatenate(SchemaCompiler.literal("["))
                        .concatenate(list)
                        .concatenate(SchemaCompiler.literal("]"));
            }
            default:
                throw new IllegalArgumentException("no grammar for tool-call format '" + format + "'");
        }
    }

    private interface Build {
        Automaton automaton();
    }

    private TokenMasks cached(String key, Build b) {
        TokenMasks m = cache.get(key);
        if (m == null) {
            m = new TokenMasks(b.automaton(), vocab);
            cache.put(key, m);
        }
        return m;
    }

    /** Grammars compiled and held. */
    public int size() {
        return cache.size();
    }
}
