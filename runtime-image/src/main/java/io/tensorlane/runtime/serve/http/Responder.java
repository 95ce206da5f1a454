package io.tensorlane.runtime.serve.http;

import io.vertx.core.Context;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The answer to one request, usable from any thread: every call hops onto the connection's Vert.x context. A plain
 * reply ({@link #json}, {@link #text}, {@link #error}) or a stream of Server-Sent Events ({@link #startEvents},
 * {@link #event}, {@link #endEvents}). {@link #onClose} runs when the client goes away before the end (a disconnect
 * frees the request's sequence at once).
 */
public final class Responder {
    private final HttpServerRequest req;
    private final HttpServerResponse resp;
    private final Context ctx;
    private final AtomicBoolean finished = new AtomicBoolean();
    private volatile boolean closeAfter;

    Responder(HttpServerRequest req, Context ctx) {
        this.req = req;
        this.resp = req.response();
        this.ctx = ctx;
    }

    private void on(Runnable r) {
        if (ctx == null || io.vertx.core.Vertx.currentContext() == ctx) {
            r.run();
        } else {
            ctx.runOnContext(v -> r.run());
        }
    }

    /** Closes the connection after the reply (a body that was not read). */
    void closeAfter() {
        closeAfter = true;
    }

    /** Whether the reply is complete (or the client left). */
    public boolean finished() {
        return finished.get();
    }

    /** Runs {@code r} once if the connection closes before the reply ended. */
    public void onClose(Runnable r) {
        on(() -> {
            resp.closeHandler(v -> {
                if (finished.compareAndSet(false, true)) {
                    r.run();
                }
            });
            if (resp.closed() && finished.compareAndSet(false, true)) {
                r.run();
            }
        });
    }

    public void json(int status, String json) {
        send(status, "application/json", json, Map.of());
    }

    public void json(int status, String json, Map<String, String> headers) {
        send(status, "application/json", json, headers);
    }

    public void text(int status, String contentType, String body) {
        send(status, contentType, body, Map.of());
    }

    /** An OpenAI-style error: {@code {"error": {"message", "type", "param", "code"}}}. */
    public void error(int status, String type, String message) {
        json(status, ErrorJson.of(message, type, null, status));
    }

    private void send(int status, String contentType, String body, Map<String, String> headers) {
        if (!finished.compareAndSet(false, true)) {
            return;
        }
        on(() -> {
            if (resp.closed() || resp.ended()) {
                return;
            }
            resp.setStatusCode(status).putHeader("Content-Type", contentType);
            headers.forEach(resp::putHeader);
            if (closeAfter) {
                resp.putHeader("Connection", "close");
            }
            resp.end(Buffer.buffer(body.getBytes(StandardCharsets.UTF_8)));
            if (closeAfter) {
                req.connection().close();
            }
        });
    }

    /** Starts a 200 {@code text/event-stream} response. */
    public void startEvents() {
        on(() -> {
            if (resp.closed() || resp.ended()) {
                return;
            }
            resp.setStatusCode(200)
                    .setChunked(true)
                    .putHeader("Content-Type", "text/event-stream; charset=utf-8")
                    .putHeader("Cache-Control", "no-cache")
                    .putHeader("X-Accel-Buffering", "no");
            resp.write(Buffer.buffer());
        });
    }

    /** One {@code data: <payload>\n\n} event. */
    public void event(String payload) {
        if (finished.get()) {
            return;
        }
        String frame = "data: " + payload + "\n\n";
        on(() -> {
            if (!resp.closed() && !resp.ended()) {
                resp.write(Buffer.buffer(frame.getBytes(StandardCharsets.UTF_8)));
            }
        });
    }

    /** {@code data: [DONE]\n\n} and the end of the response. */
    public void endEvents() {
        if (!finished.compareAndSet(false, true)) {
            return;
        }
        on(() -> {
            if (!resp.closed() && !resp.ended()) {
                resp.end(Buffer.buffer("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8)));
            }
        });
    }
}
