package io.tensorlane.runtime.loadgen;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodySubscribers;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Sends one streamed request ({@code stream: true}, {@code stream_options.include_usage}) to an OpenAI-compatible
 * server with {@link HttpClient} and measures it. Every request is bounded by {@code timeout} from the moment it is
 * sent to the end of its stream; at the deadline the stream is cancelled (its connection closed) and the request
 * fails. Thread-safe: one instance serves all clients of a run.
 */
public final class OpenAiClient implements LoadRunner.Sender {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final LoadgenConfig config;
    private final URI uri;
    private final HttpClient http;

    public OpenAiClient(LoadgenConfig config) {
        this.config = config;
        String base = config.baseUrl().toString().replaceAll("/+$", "");
        if (base.endsWith("/v1")) {
            base = base.substring(0, base.length() - 3);
        }
        this.uri = URI.create(base + config.endpoint().path());
        Duration connect =
                config.timeout().compareTo(Duration.ofSeconds(10)) < 0 ? config.timeout() : Duration.ofSeconds(10);
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(connect)
                .build();
    }

    public URI uri() {
        return uri;
    }

    /** The JSON request body for {@code p}. */
    public static String body(LoadgenConfig config, Workload.Prompt p) {
        ObjectNode b = JSON.createObjectNode();
        b.put("model", config.model());
        if (config.endpoint() == Endpoint.CHAT) {
            ArrayNode messages = b.putArray("messages");
            if (p.system() != null) {
                messages.addObject().put("role", "system").put("content", p.system());
            }
            for (int i = 0; i < p.history().size(); i++) {
                messages.addObject()
                        .put("role", i % 2 == 0 ? "user" : "assistant")
                        .put("content", p.history().get(i));
            }
            messages.addObject().put("role", "user").put("content", p.text());
        } else if (p.system() != null || !p.history().isEmpty()) {
            b.put("prompt", conversationText(p));
        } else if (p.tokenIds() != null) {
            ArrayNode ids = b.putArray("prompt");
            for (int id : p.tokenIds()) {
                ids.add(id);
            }
        } else {
            b.put("prompt", p.text());
        }
        b.put("max_tokens", p.maxTokens());
        b.put("temperature", 0.0);
        b.put("stream", true);
        b.putObject("stream_options").put("include_usage", true);
        if (config.ignoreEos()) {
            b.put("ignore_eos", true);
        }
        return b.toString();
    }

    /** A conversation as one completions prompt: the system prompt, then {@code User:} / {@code Assistant:} turns. */
    static String conversationText(Workload.Prompt p) {
        StringBuilder t = new StringBuilder();
        if (p.system() != null) {
            t.append(p.system()).append("\n\n");
        }
        for (int i = 0; i < p.history().size(); i++) {
            t.append(i % 2 == 0 ? "User: " : "Assistant: ")
                    .append(p.history().get(i))
                    .append('\n');
        }
        return t.append("User: ").append(p.text()).append("\nAssistant:").toString();
    }

    @Override
    public RequestRecord send(Workload.Prompt p, String level, long levelStartNanos) {
        HttpRequest req = HttpRequest.newBuilder(uri)
                .timeout(config.timeout())
                .header("Content-Type", "application/json")
                .header("Accept", "text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body(config, p)))
                .build();
        long start = System.nanoTime();
        StreamAccumulator acc = new StreamAccumulator(start);
        LineSink sink = new LineSink(acc);
        CompletableFuture<HttpResponse<Void>> f = http.sendAsync(req, info -> {
            synchronized (acc) {
                acc.status(info.statusCode());
            }
            return BodySubscribers.fromLineSubscriber(sink);
        });
        String failure = null;
        try {
            f.get(config.timeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            failure = "timed out after " + config.timeout().toMillis() + " ms";
        } catch (ExecutionException e) {
            Throwable c = e.getCause() != null ? e.getCause() : e;
            failure = c.getMessage() != null ? c.getClass().getSimpleName() + ": " + c.getMessage() : c.toString();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = "interrupted";
        }
        long end = System.nanoTime();
        if (failure != null) {
            sink.cancel();
            f.cancel(true);
        }
        synchronized (acc) {
            return acc.finish(level, p, (start - levelStartNanos) / 1e6, end, failure);
        }
    }

    /** Response lines → SSE events → the accumulator, timestamped on arrival. */
    static final class LineSink implements Flow.Subscriber<String> {
        private final StreamAccumulator acc;
        private final SseParser sse = new SseParser();
        private Flow.Subscription subscription;
        private boolean cancelled;

        LineSink(StreamAccumulator acc) {
            this.acc = acc;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            synchronized (acc) {
                subscription = s;
                if (cancelled) {
                    s.cancel();
                    return;
                }
            }
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(String line) {
            long now = System.nanoTime();
            synchronized (acc) {
                if (cancelled) {
                    return;
                }
                if (!acc.ok()) {
                    acc.errorLine(line);
                    return;
                }
                String data = sse.line(line);
                if (data != null) {
                    acc.event(data, now);
                }
            }
        }

        @Override
        public void onError(Throwable t) {
            // surfaces through the response future
        }

        @Override
        public void onComplete() {
            long now = System.nanoTime();
            synchronized (acc) {
                if (!cancelled && acc.ok()) {
                    String data = sse.finish();
                    if (data != null) {
                        acc.event(data, now);
                    }
                }
            }
        }

        void cancel() {
            Flow.Subscription s;
            synchronized (acc) {
                cancelled = true;
                s = subscription;
            }
            if (s != null) {
                s.cancel();
            }
        }
    }
}
