package io.tensorlane.runtime.loadgen;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A fake OpenAI-compatible server on 127.0.0.1 (ephemeral port) for the load generator's tests: streams one chunk per
 * requested token ({@code max_tokens}, capped by {@link #maxChunks}) after {@link #ttftMs}, {@link #itlMs} apart, then
 * the usage chunk (when asked for) and {@code [DONE]}. Every {@link #failEvery}-th request (1-based) fails, with 429
 * and 500 alternately. {@link #hangMs} stalls after the first chunk (for timeouts).
 */
public final class FakeOpenAiServer implements AutoCloseable {
    static final ObjectMapper JSON = new ObjectMapper();

    static {
        // Without TCP_NODELAY, Nagle's algorithm and the client's delayed ACK hold small chunks back by ~40 ms, which
        // would
        // show up as TTFT/ITL (read once, when the JDK's server configuration loads: harmless if another test came
        // first).
        System.setProperty("sun.net.httpserver.nodelay", "true");
    }

    public volatile long ttftMs = 30;
    public volatile long itlMs = 10;
    public volatile int maxChunks = Integer.MAX_VALUE;
    public volatile int failEvery;
    public volatile long hangMs;
    public volatile boolean usage = true;

    public final AtomicInteger requests = new AtomicInteger();
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger maxInFlight = new AtomicInteger();
    public final List<JsonNode> bodies = new CopyOnWriteArrayList<>();
    final List<String> paths = new CopyOnWriteArrayList<>();
    private final HttpServer server;
    private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "fake-openai");
        t.setDaemon(true);
        return t;
    });

    public FakeOpenAiServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/v1/", this::handle);
        server.setExecutor(pool);
        server.start();
    }

    public URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    private void handle(HttpExchange ex) throws IOException {
        int n = requests.incrementAndGet();
        int now = inFlight.incrementAndGet();
        maxInFlight.accumulateAndGet(now, Math::max);
        try (ex) {
            JsonNode body = JSON.readTree(ex.getRequestBody());
            bodies.add(body);
            String path = ex.getRequestURI().getPath();
            paths.add(path);
            if (failEvery > 0 && n % failEvery == 0) {
                int status = (n / failEvery) % 2 == 1 ? 429 : 500;
                byte[] err = ("{\"error\":{\"message\":\"" + (status == 429 ? "too many requests" : "engine exploded")
                                + "\"}}")
                        .getBytes(StandardCharsets.UTF_8);
                ex.getResponseHeaders().add("Content-Type", "application/json");
                ex.sendResponseHeaders(status, err.length);
                ex.getResponseBody().write(err);
                return;
            }
            boolean chat = path.endsWith("/chat/completions");
            int tokens = Math.min(body.path("max_tokens").asInt(16), maxChunks);
            int promptTokens =
                    body.path("prompt").isArray() ? body.path("prompt").size() : 7;
            boolean includeUsage =
                    usage && body.path("stream_options").path("include_usage").asBoolean(false);
            ex.getResponseHeaders().add("Content-Type", "text/event-stream");
            ex.sendResponseHeaders(200, 0);
            OutputStream out = ex.getResponseBody();
            if (chat) {
                send(
                        out,
                        "{\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}");
            }
            sleep(ttftMs);
            for (int i = 0; i < tokens; i++) {
                if (i > 0) {
                    sleep(itlMs);
                }
                String piece = " tok" + i;
                send(
                        out,
                        chat
                                ? "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + piece
                                        + "\"},\"finish_reason\":null}]}"
                                : "{\"choices\":[{\"index\":0,\"text\":\"" + piece + "\",\"finish_reason\":null}]}");
                if (i == 0 && hangMs > 0) {
                    sleep(hangMs);
                }
            }
            if (includeUsage) {
                send(
                        out,
                        "{\"choices\":[],\"usage\":{\"prompt_tokens\":" + promptTokens + ",\"completion_tokens\":"
                                + tokens + ",\"total_tokens\":" + (promptTokens + tokens) + "}}");
            }
            send(out, "[DONE]");
        } catch (IOException e) {
            // the client went away (timeout tests)
        } finally {
            inFlight.decrementAndGet();
        }
    }

    private static void send(OutputStream out, String data) throws IOException {
        out.write(("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        server.stop(0);
        pool.shutdownNow();
    }
}
