package io.tensorlane.runtime.serve;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tensorlane.runtime.chat.ToolCallFormat;
import io.tensorlane.runtime.chat.ToolCallOutput;
import io.tensorlane.runtime.chat.ToolCallStream;
import io.tensorlane.runtime.openai.ChatResponses;
import io.tensorlane.runtime.openai.CompletionResponses;
import io.tensorlane.runtime.openai.GenerationParams;
import io.tensorlane.runtime.openai.OpenAiException;
import io.tensorlane.runtime.openai.OpenAiJson;
import io.tensorlane.runtime.openai.Responses;
import io.tensorlane.runtime.openai.TokenLogprob;
import io.tensorlane.runtime.openai.Usage;
import io.tensorlane.runtime.sched.FinishReason;
import io.tensorlane.runtime.sched.Scheduler;
import io.tensorlane.runtime.sched.SequenceListener;
import io.tensorlane.runtime.serve.http.Responder;
import io.tensorlane.runtime.text.IncrementalDecoder;
import io.tensorlane.runtime.text.ModelTokenizer;
import io.tensorlane.runtime.text.TopLogprobs;
import java.util.ArrayList;
import java.util.List;

/**
 * One HTTP request's choices in flight: each choice is a sequence in the scheduler; its tokens are detokenized
 * incrementally, checked for stop strings, and streamed as SSE chunks or collected for one response. Listener calls
 * come on the scheduler thread; the {@link Responder} hops onto the connection's thread.
 */
final class GenerationJob {
    private final boolean chat;
    private final String id;
    private final long created;
    private final String model;
    private final GenerationParams params;
    private final Responder out;
    private final ModelTokenizer tok;
    private final TokenTexts texts;
    private final ToolCallFormat tools;
    private final int maxCalls;
    private final List<Choice> choices = new ArrayList<>();
    private final List<Scheduler.Handle> handles = new ArrayList<>();
    private final List<String> pending = new ArrayList<>();
    private int promptTokens;
    private int cachedTokens;
    private int open;
    private boolean failed;
    private boolean begun;
    private boolean ended;

    GenerationJob(
            boolean chat, String model, GenerationParams params, Responder out, ModelTokenizer tok, TokenTexts texts) {
        this(chat, model, params, out, tok, texts, null, 0);
    }

    /**
     * @param tools the format whose tool calls are parsed out of each answer (null: none, the answer is text)
     * @param maxCalls the most calls kept per answer
     */
    GenerationJob(
            boolean chat,
            String model,
            GenerationParams params,
            Responder out,
            ModelTokenizer tok,
            TokenTexts texts,
            ToolCallFormat tools,
            int maxCalls) {
        this.texts = texts;
        this.tools = tools;
        this.maxCalls = maxCalls;
        this.chat = chat;
        this.id = chat ? Responses.chatId() : Responses.completionId();
        this.created = Responses.now();
        this.model = model;
        this.params = params;
        this.out = out;
        this.tok = tok;
    }

    /** Completions' echo: each prompt, whose text starts its choices' text (null: no echo). */
    private List<EchoedPrompt> echoes;

    void echo(List<EchoedPrompt> prompts) {
        echoes = List.copyOf(prompts);
    }

    /** A new choice for a prompt; its listener goes to the scheduler. */
    SequenceListener choice(int index, int[] promptIds, boolean countPrompt) {
        Choice c = new Choice(index, promptIds, countPrompt);
        if (echoes != null && params.promptLogprobs() < 0) { // with logprobs it waits for them (onPromptLogprobs)
            c.echo(TokenTexts.echo(echoes.get(index / params.n())));
        }
        synchronized (this) {
            choices.add(c);
            open++;
            if (countPrompt) {
                promptTokens += promptIds.length;
            }
        }
        return c;
    }

    synchronized void handle(Scheduler.Handle h) {
        handles.add(h);
    }

    /** Cancels every choice (the client went away, or a later submit failed). */
    void cancel() {
        List<Scheduler.Handle> hs;
        synchronized (this) {
            hs = List.copyOf(handles);
        }
        hs.forEach(Scheduler.Handle::cancel);
    }

    /**
     * Every choice was accepted: starts the SSE response (chat sends each choice's role first) and sends what the
     * scheduler produced meanwhile. Until then events wait, so a refused submit can still answer 429 or 503.
     */
    synchronized void begin() {
        if (!params.stream() || failed) {
            begun = true;
            return;
        }
        out.startEvents();
        if (chat) {
            for (Choice c : choices) {
                out.event(OpenAiJson.write(ChatResponses.roleChunk(id, created, model, c.index)));
            }
        }
        begun = true;
        pending.forEach(out::event);
        pending.clear();
        if (ended) {
            out.endEvents();
        }
    }

    /** A submit failed: the caller answers the error; nothing of this job is sent. */
    synchronized void abandon() {
        failed = true;
    }

    private synchronized void sse(String payload) {
        if (failed && payload != null) {
            return;
        }
        if (!begun) {
            if (payload == null) {
                ended = true;
            } else {
                pending.add(payload);
            }
            return;
        }
        if (payload == null) {
            out.endEvents();
        } else {
            out.event(payload);
        }
    }

    private final class Choice implements SequenceListener {
        final int index;
        final boolean countPrompt;
        final IncrementalDecoder decoder;
        final StopMatcher stops;
        final StringBuilder text = new StringBuilder();
        final List<TokenLogprob> logprobs = new ArrayList<>();
        final ToolCallStream toolStream;
        List<ChatResponses.ToolCall> calls = List.of();
        CompletionResponses.Echo echo;
        int textOffset;
        int generated;
        String finish;
        Object stopReason;

        Choice(int index, int[] promptIds, boolean countPrompt) {
            this.index = index;
            this.countPrompt = countPrompt;
            this.toolStream =
                    tools != null && params.stream() ? new ToolCallStream(tools, maxCalls, tools::newId) : null;
            this.decoder = tok.newDecoder(
                    promptIds, params.skipSpecialTokens() && (tools == null || !tools.keepsSpecialTokens()));
            this.stops = new StopMatcher(params.stop(), params.includeStopStrInOutput());
        }

        @Override
        public void onAdmitted(int cached) {
            if (countPrompt) { // the choice whose prompt tokens usage counts reports its cached ones
                synchronized (GenerationJob.this) {
                    cachedTokens += cached;
                }
            }
        }

        @Override
        public void onPromptLogprobs(List<TopLogprobs> lps) {
            if (echoes != null) {
                echo(texts.echo(echoes.get(index / params.n()), lps, params.logprobs()));
            }
        }

        /** The echoed prompt starts the text (before any token; stop strings do not look at it). */
        void echo(CompletionResponses.Echo e) {
            echo = e;
            text.append(e.text());
            if (params.stream() && !failed) {
                sse(OpenAiJson.write(CompletionResponses.echoChunk(id, created, model, index, e)));
            }
            textOffset += e.length();
        }

        @Override
        public boolean onToken(int token, TopLogprobs lp) {
            if (params.scoresOnly()) { // max_tokens 0: the one token drawn after the prompt is dropped
                return false;
            }
            // with special tokens kept for the tool-call marker, EOS still ends the text unseen
            boolean hidden = tools != null
                    && tools.keepsSpecialTokens()
                    && tok.eosTokenIds().contains(token);
            // as vLLM: stop strings are not looked for before min_tokens tokens (EOS and stop ids are banned on the
            // GPU)
            String piece = hidden ? "" : decoder.append(token);
            String delta = ++generated < params.penalties().minTokens() ? stops.flush() + piece : stops.add(piece);
            TokenLogprob tl = lp == null || !params.wantsLogprobs() ? null : texts.map(token, lp, params.logprobs());
            if (tl != null) {
                logprobs.add(tl);
            }
            emit(delta, tl == null ? List.of() : List.of(tl), null);
            if (params.stopTokenIds() != null && params.stopTokenIds().contains(token)) {
                stopReason = token;
            }
            return stops.matched() == null;
        }

        @Override
        public void onFinish(FinishReason reason, int promptTokens, int completionTokens) {
            if (reason == FinishReason.ABORT) {
                done(completionTokens);
                return;
            }
            if (reason == FinishReason.ERROR) {
                fail(OpenAiException.internal("the engine failed while generating this request"));
                done(completionTokens);
                return;
            }
            if (stops.matched() == null) {
                emit(stops.flush(), List.of(), null);
            } else {
                stopReason = stops.matched();
            }
            boolean called = false;
            if (toolStream != null) {
                ToolCallStream.Delta rest = toolStream.finish();
                send(rest.content(), ToolCallAnswers.pieces(rest), List.of(), null);
                called = toolStream.calledTools();
            } else if (tools != null) {
                ToolCallOutput parsed = tools.parse(text.toString());
                List<ChatResponses.ToolCall> cs = ToolCallAnswers.calls(tools, parsed, maxCalls);
                if (!cs.isEmpty()) {
                    calls = cs;
                    text.setLength(0);
                    text.append(parsed.content());
                    called = true;
                }
            }
            boolean length = reason == FinishReason.LENGTH || params.scoresOnly();
            finish = length ? "length" : called ? "tool_calls" : "stop";
            emit("", List.of(), finish);
            done(params.scoresOnly() ? 0 : completionTokens);
        }

        private void emit(String delta, List<TokenLogprob> lps, String finishReason) {
            if (delta.isEmpty() && lps.isEmpty() && finishReason == null) {
                return;
            }
            text.append(delta);
            if (toolStream != null && !delta.isEmpty()) {
                ToolCallStream.Delta d = toolStream.push(delta);
                send(d.content(), ToolCallAnswers.pieces(d), lps, finishReason);
            } else {
                send(delta, List.of(), lps, finishReason);
            }
        }

        /** Sends one chunk when streaming (nothing when there is nothing to say). */
        private void send(
                String delta, List<ChatResponses.ToolCallPiece> pieces, List<TokenLogprob> lps, String finishReason) {
            if (delta.isEmpty() && pieces.isEmpty() && lps.isEmpty() && finishReason == null) {
                return;
            }
            if (params.stream() && !failed) {
                Object reason = finishReason == null ? null : stopReason;
                ObjectNode chunk = chat
                        ? ChatResponses.chunk(
                                id,
                                created,
                                model,
                                index,
                                delta,
                                pieces,
                                lps.isEmpty() ? null : lps,
                                finishReason,
                                reason)
                        : CompletionResponses.chunk(
                                id,
                                created,
                                model,
                                index,
                                delta,
                                lps.isEmpty() ? null : lps,
                                textOffset,
                                finishReason,
                                reason);
                sse(OpenAiJson.write(chunk));
            }
            textOffset += delta.codePointCount(0, delta.length());
        }
    }

    private void fail(OpenAiException e) {
        synchronized (this) {
            if (failed) {
                return;
            }
            if (params.stream()) {
                sse(e.toJson());
            }
            failed = true;
        }
        if (!params.stream()) {
            out.json(e.status(), e.toJson());
        }
    }

    private int completionTokens;

    private void done(int tokens) {
        boolean last;
        synchronized (this) {
            completionTokens += tokens;
            last = --open == 0;
        }
        if (!last || out.finished()) {
            return;
        }
        Usage usage;
        synchronized (this) {
            usage = new Usage(promptTokens, completionTokens, cachedTokens);
        }
        if (params.stream()) {
            if (params.includeUsage()) {
                sse(OpenAiJson.write(Responses.usageChunk(
                        id, chat ? ChatResponses.CHUNK_OBJECT : CompletionResponses.OBJECT, created, model, usage)));
            }
            sse(null);
            return;
        }
        synchronized (this) {
            if (failed) {
                return;
            }
        }
        choices.sort((a, b) -> Integer.compare(a.index, b.index));
        ObjectNode body;
        if (chat) {
            List<ChatResponses.Choice> cs = new ArrayList<>();
            for (Choice c : choices) {
                cs.add(new ChatResponses.Choice(
                        c.index,
                        c.text.toString(),
                        c.calls,
                        c.finish,
                        c.stopReason,
                        c.logprobs.isEmpty() ? null : c.logprobs));
            }
            body = ChatResponses.response(id, created, model, cs, usage);
        } else {
            List<CompletionResponses.Choice> cs = new ArrayList<>();
            for (Choice c : choices) {
                cs.add(new CompletionResponses.Choice(
                        c.index,
                        c.text.toString(),
                        c.finish,
                        c.stopReason,
                        c.logprobs.isEmpty() ? null : c.logprobs,
                        c.echo));
            }
            body = CompletionResponses.response(id, created, model, cs, usage);
        }
        out.json(200, OpenAiJson.write(body));
    }
}
