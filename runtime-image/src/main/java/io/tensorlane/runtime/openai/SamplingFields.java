package io.tensorlane.runtime.openai;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/** Reads and validates the sampling/output fields shared by completions and chat into {@link GenerationParams}. */
final class SamplingFields {
    /** vLLM/OpenAI extensions this server does not implement: refused unless absent or null. */
    private static final List<String> UNSUPPORTED = List.of(
            "guided_json",
            "guided_regex",
            "guided_choice",
            "guided_grammar",
            "guided_decoding_backend",
            "structured_outputs",
            "prompt_logprobs",
            "allowed_token_ids",
            "logits_processors",
            "use_beam_search",
            "prompt_embeds",
            "lora_request");

    private SamplingFields() {}

    static GenerationParams read(JsonFields f, ModelInfo m, boolean chat) {
        for (String field : UNSUPPORTED) {
            JsonNode n = f.node(field);
            if (n != null && !(n.isBoolean() && !n.booleanValue())) {
                throw OpenAiException.notSupported(field, "'" + field + "'");
            }
        }
        neutral(f, "length_penalty", 1);

        int n = f.integer("n") == null ? 1 : f.integer("n");
        if (n < 1) {
            throw OpenAiException.badRequest("n", "n must be at least 1, got " + n + ".");
        }
        if (n > RequestValidator.MAX_N) {
            throw OpenAiException.badRequest("n", "n must be at most " + RequestValidator.MAX_N + ", got " + n + ".");
        }
        Integer bestOf = f.integer("best_of");
        if (bestOf != null && bestOf != n) {
            throw OpenAiException.notSupported("best_of", "'best_of' other than n (" + n + ")");
        }
        double temperature = orDefault(f.number("temperature"), 1.0);
        if (temperature < 0) {
            throw OpenAiException.badRequest(
                    "temperature", "temperature must be non-negative, got " + temperature + ".");
        }
        double topP = orDefault(f.number("top_p"), 1.0);
        if (!(topP > 0 && topP <= 1)) {
            throw OpenAiException.badRequest("top_p", "top_p must be in (0, 1], got " + topP + ".");
        }
        int topK = f.integer("top_k") == null ? -1 : f.integer("top_k");
        if (topK < -1) {
            throw OpenAiException.badRequest(
                    "top_k", "top_k must be -1 or 0 (disable), or at least 1, got " + topK + ".");
        }
        double minP = orDefault(f.number("min_p"), 0.0);
        if (!(minP >= 0 && minP <= 1)) {
            throw OpenAiException.badRequest("min_p", "min_p must be in [0, 1], got " + minP + ".");
        }
        Long seed = f.longValue("seed");

        String maxField = "max_tokens";
        Integer maxTokens = f.integer("max_tokens");
        if (chat && f.has("max_completion_tokens")) { // vLLM: max_completion_tokens or max_tokens
            maxField = "max_completion_tokens";
            maxTokens = f.integer(maxField);
        }
        boolean echo = PenaltyFields.echo(f, chat);
        if (maxTokens != null && maxTokens < (echo ? 0 : 1)) { // echo with max_tokens 0 scores the prompt (vLLM)
            throw OpenAiException.badRequest(
                    maxField,
                    maxField + " must be at least 1, got " + maxTokens + "."
                            + (maxTokens == 0 && !chat
                                    ? " (0 only with \"echo\": true, which scores the prompt)"
                                    : ""));
        }

        List<String> stop = f.stringOrList("stop");
        if (stop != null && stop.stream().anyMatch(String::isEmpty)) {
            throw OpenAiException.badRequest("stop", "stop cannot contain an empty string.");
        }
        List<Integer> stopIds = new ArrayList<>();
        List<Long> rawStopIds = f.longList("stop_token_ids");
        for (long id : rawStopIds == null ? List.<Long>of() : rawStopIds) {
            if (id < 0 || id >= m.vocabSize()) {
                throw OpenAiException.badRequest(
                        "stop_token_ids", "stop_token_ids must be token ids in [0, " + m.vocabSize() + "), got " + id);
            }
            stopIds.add((int) id);
        }

        boolean stream = f.bool("stream", false);
        JsonFields streamOptions = f.object("stream_options");
        boolean includeUsage = false;
        if (streamOptions != null) {
            if (!stream) {
                throw OpenAiException.badRequest(
                        "stream_options", "Stream options can only be defined when `stream=True`.");
            }
            includeUsage = streamOptions.bool("include_usage", false);
            streamOptions.bool("continuous_usage_stats"); // type-checked, not implemented: usage is sent once
        }
        Integer logprobs = chat ? chatLogprobs(f) : completionLogprobs(f);
        GenerationParams.Penalties penalties = PenaltyFields.read(f, m, maxTokens, maxField, stopIds.size());
        return new GenerationParams(
                temperature,
                topP,
                topK == 0 ? -1 : topK,
                minP,
                seed,
                maxTokens,
                stop,
                stopIds,
                n,
                stream,
                includeUsage,
                f.bool("ignore_eos", false),
                logprobs,
                f.bool("skip_special_tokens", true),
                f.bool("include_stop_str_in_output", false),
                responseFormat(f),
                f.bool("speculative", true),
                penalties,
                echo);
    }

    /** {@code response_format}: text (null), json_object, or json_schema with its {@code json_schema.schema}. */
    private static GenerationParams.ResponseFormat responseFormat(JsonFields f) {
        JsonFields format = f.object("response_format");
        if (format == null) {
            return null;
        }
        String type = format.string("type");
        if (type == null) {
            throw OpenAiException.badRequest("response_format.type", "'response_format.type' is required");
        }
        switch (type) {
            case "text":
                return null;
            case "json_object":
                return new GenerationParams.ResponseFormat(null, null);
            case "json_schema": {
                JsonFields js = format.object("json_schema");
                if (js == null) {
                    throw OpenAiException.badRequest(
                            "response_format.json_schema", "'response_format.json_schema' is required");
                }
                com.fasterxml.jackson.databind.JsonNode schema = js.node("schema");
                if (schema == null) {
                    throw OpenAiException.badRequest(
                            "response_format.json_schema.schema", "'response_format.json_schema.schema' is required");
                }
                if (!schema.isObject()) {
                    throw js.typeError("schema", "an object (a JSON schema)", schema);
                }
                js.bool("strict", false);
                return new GenerationParams.ResponseFormat(schema, js.string("name"));
            }
            default:
                throw OpenAiException.badRequest(
                        "response_format.type",
                        "'response_format.type' must be \"text\", \"json_object\" or \"json_schema\", got '" + type
                                + "'");
        }
    }

    private static Integer completionLogprobs(JsonFields f) {
        Integer k = f.integer("logprobs");
        if (k != null && (k < 0 || k > RequestValidator.MAX_LOGPROBS)) {
            throw OpenAiException.badRequest(
                    "logprobs", "logprobs must be in [0, " + RequestValidator.MAX_LOGPROBS + "], got " + k + ".");
        }
        return k;
    }

    private static Integer chatLogprobs(JsonFields f) {
        boolean want = f.bool("logprobs", false);
        Integer k = f.integer("top_logprobs");
        if (k != null && (k < 0 || k > RequestValidator.MAX_LOGPROBS)) {
            throw OpenAiException.badRequest(
                    "top_logprobs",
                    "top_logprobs must be in [0, " + RequestValidator.MAX_LOGPROBS + "], got " + k + ".");
        }
        if (k != null && k > 0 && !want) {
            throw OpenAiException.badRequest(
                    "top_logprobs", "when using `top_logprobs`, `logprobs` must be set to true.");
        }
        return want ? (k == null ? 0 : k) : null;
    }

    /** A penalty this engine does not apply: only its neutral value (or absence) is accepted. */
    private static void neutral(JsonFields f, String field, double neutralValue) {
        Double v = f.number(field);
        if (v != null && v != neutralValue) {
            throw OpenAiException.notSupported(
                    field, "'" + field + "' other than " + (int) neutralValue + " (got " + v + ")");
        }
    }

    private static double orDefault(Double v, double dflt) {
        return v == null ? dflt : v;
    }
}
