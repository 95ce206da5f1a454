package io.tensorlane.runtime.serve;

import io.tensorlane.runtime.chat.ChatTemplate;
import io.tensorlane.runtime.chat.ChatTemplateException;
import io.tensorlane.runtime.chat.ChatTemplates;
import io.tensorlane.runtime.chat.ToolCallFormat;
import io.tensorlane.runtime.openai.ChatCompletionRequest;
import io.tensorlane.runtime.openai.ChatMessage;
import io.tensorlane.runtime.openai.CompletionRequest;
import io.tensorlane.runtime.openai.GenerationParams;
import io.tensorlane.runtime.openai.ModelInfo;
import io.tensorlane.runtime.openai.OpenAiException;
import io.tensorlane.runtime.openai.OpenAiJson;
import io.tensorlane.runtime.openai.Prompt;
import io.tensorlane.runtime.openai.RequestParser;
import io.tensorlane.runtime.openai.RequestValidator;
import io.tensorlane.runtime.openai.Responses;
import io.tensorlane.runtime.sched.QueueFullException;
import io.tensorlane.runtime.sched.SamplingPenalties;
import io.tensorlane.runtime.sched.Scheduler;
import io.tensorlane.runtime.sched.SeqRequest;
import io.tensorlane.runtime.serve.http.HttpFront;
import io.tensorlane.runtime.serve.http.Responder;
import io.tensorlane.runtime.structured.GrammarConstraint;
import io.tensorlane.runtime.structured.Grammars;
import io.tensorlane.runtime.structured.SchemaException;
import io.tensorlane.runtime.structured.TokenMasks;
import io.tensorlane.runtime.structured.TokenVocabulary;
import io.tensorlane.runtime.text.ModelTokenizer;
import io.tensorlane.runtime.text.SamplingParams;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.logging.Logger;

/**
 * The OpenAI endpoints over the scheduler: {@code GET /v1/models}, {@code POST /v1/completions},
 * {@code POST /v1/chat/completions}. Requests are parsed and checked ({@link RequestParser}), prompts tokenized (chat
 * through the model's template), every choice submitted as a sequence, and the answer built by a {@link GenerationJob}.
 * A client's mistake is a 4xx with an OpenAI error body; a full queue 429 and a draining server 503, both with
 * Retry-After.
 */
public final class OpenAiService {
    private static final Logger LOG = Logger.getLogger(OpenAiService.class.getName());

    private final ModelInfo info;
    private final ModelTokenizer tok;
    private final ChatTemplates templates;
    private final Scheduler scheduler;
    private final String toolParser;
    private volatile Grammars grammars;
    private final TokenizeEndpoints tokenize;
    private final TokenTexts texts;

    /**
     * @param templates the model's chat templates ({@link ChatTemplates#isEmpty()}: chat answers 400)
     * @param toolParser the model's tool-call format ({@link ToolCallFormat#named}), null: none (tool_choice other than
     *     "none" answers 400)
     */
    public OpenAiService(
            ModelInfo info, ModelTokenizer tok, ChatTemplates templates, Scheduler scheduler, String toolParser) {
        this.toolParser = toolParser;
        if (toolParser != null) {
            ToolCallFormat.named(toolParser); // fail at start-up, not per request
        }
        this.info = info;
        this.tok = tok;
        this.templates = templates;
        this.scheduler = scheduler;
        this.tokenize = new TokenizeEndpoints(info, tok, this::render);
        this.texts = new TokenTexts(tok, info.vocabSize());
    }

    /** Adds the routes (also vLLM's /tokenize and /detokenize). */
    public HttpFront.Routes routes(HttpFront.Routes r) {
        return r.add(
                        HttpMethod.GET,
                        "/v1/models",
                        (req, body, out) -> out.json(200, OpenAiJson.write(Responses.modelList(info))))
                .add(
                        HttpMethod.POST,
                        "/v1/completions",
                        (req, body, out) -> guarded(out, () -> completion(req, body, out)))
                .add(
                        HttpMethod.POST,
                        "/v1/chat/completions",
                        (req, body, out) -> guarded(out, () -> chat(req, body, out)))
                .add(
                        HttpMethod.POST,
                        "/tokenize",
                        (req, body, out) -> guarded(out, () -> out.json(200, tokenize.tokenize(body))))
                .add(
                        HttpMethod.POST,
                        "/detokenize",
                        (req, body, out) -> guarded(out, () -> out.json(200, tokenize.detokenize(body))));
    }

    private interface Work {
        void run();
    }

    private void guarded(Responder out, Work w) {
        try {
            w.run();
        } catch (OpenAiException e) {
            out.json(e.status(), e.toJson());
        } catch (QueueFullException e) {
            out.json(
                    429,
                    error("the server is busy: too many requests are waiting; retry later", "rate_limit_exceeded"),
                    Map.of("Retry-After", Integer.toString(Math.max(1, e.retryAfterSeconds()))));
        } catch (IllegalStateException e) {
            if (scheduler.isDraining()) {
                out.json(503, error("the server is shutting down", "service_unavailable"), Map.of("Retry-After", "5"));
            } else {
                LOG.warning("request failed: " + e.getMessage());
                out.json(
                        503,
                        error("the engine is not available: " + e.getMessage(), "service_unavailable"),
                        Map.of("Retry-After", "5"));
            }
        } catch (IllegalArgumentException e) {
            out.json(400, OpenAiException.badRequest(null, e.getMessage()).toJson());
        }
    }

    private static String error(String message, String code) {
        return new OpenAiException(code.equals("rate_limit_exceeded") ? 429 : 503, code, null, code, message).toJson();
    }

    private void completion(HttpServerRequest req, byte[] body, Responder out) {
        CompletionRequest r = RequestParser.parseCompletion(body, info);
        List<int[]> prompts = new ArrayList<>();
        List<EchoedPrompt> echoes = new ArrayList<>();
        boolean skip = r.params().skipSpecialTokens();
        for (Prompt p : r.prompts()) {
            int[] ids = p.isText()
                    ? tok.encode(p.text(), true)
                    : p.ids().stream().mapToInt(Integer::intValue).toArray();
            if (ids.length == 0) {
                throw OpenAiException.badRequest("prompt", "the prompt is empty after tokenization");
            }
            prompts.add(ids);
            if (r.params().echo()) { // the offsets of its logprobs are found here, off the scheduler thread
                echoes.add(new EchoedPrompt(
                        p.isText() ? p.text() : tok.decode(ids, skip),
                        ids,
                        r.params().promptLogprobs() < 0 ? null : texts.offsets(ids, skip)));
            }
        }
        TokenMasks masks = r.params().responseFormat() == null ? null : jsonMasks(r.params());
        GenerationJob job = new GenerationJob(false, info.id(), r.params(), out, tok, texts);
        if (r.params().echo()) {
            job.echo(echoes);
        }
        submit(job, false, prompts, r.params(), masks, out);
    }

    private void chat(HttpServerRequest req, byte[] body, Responder out) {
        ChatCompletionRequest r = RequestParser.parseChat(body, info);
        String text = render(r);
        ToolCallFormat format = toolFormat(r);
        GenerationJob job = new GenerationJob(
                true, info.id(), r.params(), out, tok, texts, format, r.parallelToolCalls() ? Integer.MAX_VALUE : 1);
        // The template writes the special tokens itself (as transformers' apply_chat_template with tokenize=True).
        submit(job, true, List.of(tok.encode(text, false)), r.params(), constraint(r), out);
    }

    /** The prompt text of a chat request: its messages through the model's template (400 when it cannot). */
    private String render(ChatCompletionRequest r) {
        if (templates.isEmpty()) {
            throw OpenAiException.badRequest(
                    "messages",
                    "this model has no chat template (no chat_template.jinja, no chat_template in "
                            + "tokenizer_config.json); use /v1/completions");
        }
        if (r.continueFinalMessage()) {
            throw OpenAiException.notSupported("continue_final_message", "continue_final_message");
        }
        String text;
        try {
            ChatTemplate template = templates.forRequest(r.tools() != null);
            text = template.render(
                    templateMessages(r.messages()),
                    r.tools(),
                    r.documents(),
                    r.addGenerationPrompt(),
                    r.chatTemplateKwargs() == null ? Map.of() : r.chatTemplateKwargs());
        } catch (ChatTemplateException e) {
            throw OpenAiException.badRequest(
                    "messages", "the chat template refused the conversation: " + e.getMessage());
        }
        return text;
    }

    /** The grammar a chat answer is held to: forced tool calls, a response_format, or none. */
    private TokenMasks constraint(ChatCompletionRequest r) {
        if (r.toolChoice().forced()) {
            if (r.params().responseFormat() != null) {
                throw OpenAiException.badRequest(
                        "response_format",
                        "'response_format' and a forced 'tool_choice' (\"required\" or a named function) cannot be "
                                + "combined");
            }
            List<Grammars.Tool> tools = new ArrayList<>();
            for (int i = 0; i < r.tools().size(); i++) {
                @SuppressWarnings("unchecked")
                Map<String, Object> fn = (Map<String, Object>) r.tools().get(i).get("function");
                String name = (String) fn.get("name");
                if (r.toolChoice().name() == null || r.toolChoice().name().equals(name)) {
                    Object params = fn.get("parameters");
                    tools.add(new Grammars.Tool(name, params == null ? null : OpenAiJson.MAPPER.valueToTree(params)));
                }
            }
            try {
                return checked(grammars().toolCalls(toolParser, tools, r.parallelToolCalls()), "tools");
            } catch (SchemaException e) {
                throw OpenAiException.badRequest(e.at(), "tool parameters cannot be enforced: " + e.getMessage());
            }
        }
        return r.params().responseFormat() == null ? null : jsonMasks(r.params());
    }

    private TokenMasks jsonMasks(GenerationParams p) {
        try {
            return checked(grammars().json(p.responseFormat().schema()), "response_format");
        } catch (SchemaException e) {
            String at = "response_format.json_schema.schema" + e.at().substring(1);
            throw OpenAiException.badRequest(at, "json_schema cannot be enforced: " + at + ": " + e.why());
        }
    }

    /** The masks, once their first one is known to allow something (computed here, off the scheduler thread). */
    private static TokenMasks checked(TokenMasks m, String field) {
        for (int w : m.mask(m.start())) {
            if (w != 0) {
                return m;
            }
        }
        throw OpenAiException.badRequest(field, "'" + field + "' allows no answer this model's vocabulary can write");
    }

    /** The model's vocabulary as bytes, read from tokenizer.json at the first structured request. */
    private Grammars grammars() {
        Grammars g = grammars;
        if (g == null) {
            synchronized (this) {
                if (grammars == null) {
                    grammars = new Grammars(TokenVocabulary.load(
                            tok.modelDir(), info.vocabSize(), new java.util.HashSet<>(tok.eosTokenIds())));
                }
                g = grammars;
            }
        }
        return g;
    }

    /** The format the answer's tool calls are parsed with, null when the answer is text (tool_choice none). */
    private ToolCallFormat toolFormat(ChatCompletionRequest r) {
        if (!r.toolChoice().parses()) {
            return null;
        }
        if (toolParser == null) {
            throw OpenAiException.badRequest(
                    "tool_choice",
                    "tool_choice \"" + r.toolChoice().mode().name().toLowerCase(java.util.Locale.ROOT)
                            + "\" needs a tool-call parser, and none was found for this model: start serve with "
                            + "--tool-call-parser (hermes, llama3_json, mistral)");
        }
        return ToolCallFormat.named(toolParser);
    }

    /** The request's penalties as the scheduler takes them (bad_words tokenized here). */
    private SamplingPenalties penalties(GenerationParams.Penalties p) {
        Map<Integer, Float> bias = new java.util.TreeMap<>();
        p.logitBias().forEach((id, b) -> bias.put(id, (float) (double) b));
        return new SamplingPenalties(
                (float) p.presence(),
                (float) p.frequency(),
                (float) p.repetition(),
                bias,
                p.minTokens(),
                badWordIds(p.badWords()));
    }

    /**
     * vLLM's bad_words as token sequences: each word (leading spaces stripped) as is, and with one leading space when
     * that gives as many tokens and another first token (SamplingParams.update_from_tokenizer).
     */
    private List<int[]> badWordIds(List<String> words) {
        List<int[]> out = new ArrayList<>();
        for (String w : words) {
            int[] plain = tok.encode(w.stripLeading(), false);
            int[] spaced = tok.encode(" " + w.stripLeading(), false);
            if (plain.length > 0) out.add(plain);
            if (spaced.length > 0 && (plain.length == 0 || (spaced.length == plain.length && spaced[0] != plain[0]))) {
                out.add(spaced);
            }
        }
        return out;
    }

    /** The messages as the template gets them (vLLM's shape: the optional keys only where the message has them). */
    static List<Map<String, Object>> templateMessages(List<ChatMessage> ms) {
        List<Map<String, Object>> messages = new ArrayList<>();
        for (ChatMessage m : ms) {
            Map<String, Object> msg = new LinkedHashMap<>();
            msg.put("role", m.role());
            msg.put("content", m.content());
            if (m.toolCalls() != null) msg.put("tool_calls", m.toolCalls());
            if (m.toolCallId() != null) msg.put("tool_call_id", m.toolCallId());
            if (m.name() != null) msg.put("name", m.name());
            messages.add(msg);
        }
        return messages;
    }

    private void submit(
            GenerationJob job, boolean chat, List<int[]> prompts, GenerationParams p, TokenMasks masks, Responder out) {
        List<Integer> maxTokens = new ArrayList<>();
        for (int[] ids : prompts) {
            if (p.scoresOnly()) { // as vLLM: one token is drawn after the prompt and dropped, so it must fit
                RequestValidator.checkLength(info, ids.length, null, chat);
                maxTokens.add(1);
                continue;
            }
            RequestValidator.checkLength(info, ids.length, p.maxTokens(), chat);
            maxTokens.add(RequestValidator.effectiveMaxTokens(info, ids.length, p.maxTokens()));
        }
        long baseSeed =
                p.seed() != null ? p.seed() : ThreadLocalRandom.current().nextLong();
        int logprobs = p.wantsLogprobs() ? Math.max(1, p.logprobs()) : 0;
        List<Runnable> submits = new ArrayList<>();
        for (int i = 0; i < prompts.size(); i++) {
            for (int j = 0; j < p.n(); j++) {
                int index = i * p.n() + j;
                int[] ids = prompts.get(i);
                SamplingParams sp = new SamplingParams(
                        (float) p.temperature(),
                        (float) p.topP(),
                        Math.max(0, p.topK()),
                        (float) p.minP(),
                        baseSeed + index);
                SeqRequest sr = new SeqRequest(
                        Integer.toString(index),
                        ids,
                        maxTokens.get(i),
                        sp,
                        new HashSet<>(p.stopTokenIds()),
                        p.ignoreEos(),
                        logprobs,
                        masks == null ? null : new GrammarConstraint(masks),
                        penalties(p.penalties()),
                        p.promptLogprobs());
                var listener = job.choice(index, ids, j == 0);
                submits.add(() -> job.handle(scheduler.submit(sr, listener, p.speculative())));
            }
        }
        out.onClose(job::cancel);
        try {
            for (Runnable s : submits) {
                s.run();
            }
        } catch (RuntimeException e) {
            job.abandon();
            job.cancel();
            throw e;
        }
        job.begin();
    }
}
