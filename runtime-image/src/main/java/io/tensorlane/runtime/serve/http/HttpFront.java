package io.tensorlane.runtime.serve.http;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The HTTP/1.1 front of {@code serve} on Vert.x: routes by method and path, reads request bodies up to a limit (413
 * past it, without reading the rest), and hands each request to its {@link Endpoint} with a {@link Responder} that may
 * be used from any thread (the scheduler's, for streamed tokens). Handlers never see a half-read body, and an exception
 * in a handler becomes a 500 with an OpenAI-style error, not a stuck connection.
 */
public final class HttpFront implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(HttpFront.class.getName());

    /** One route's handler. */
    @FunctionalInterface
    public interface Endpoint {
        void handle(HttpServerRequest request, byte[] body, Responder responder) throws Exception;
    }

    private final Vertx vertx;
    private final HttpServer server;
    private final Map<String, Endpoint> routes;
    private final long maxBodyBytes;

    private HttpFront(Vertx vertx, HttpServer server, Map<String, Endpoint> routes, long maxBodyBytes) {
        this.vertx = vertx;
        this.server = server;
        this.routes = routes;
        this.maxBodyBytes = maxBodyBytes;
    }

    /** Routes: {@code "POST /v1/completions"} → endpoint. */
    public static final class Routes {
        private final Map<String, Endpoint> map = new LinkedHashMap<>();

        public Routes add(HttpMethod method, String path, Endpoint e) {
            map.put(method.name() + " " + path, e);
            return this;
        }
    }

    /** Starts listening on {@code host:port} (0 = any free port). */
    public static HttpFront start(String host, int port, Routes routes, long maxBodyBytes) {
        Vertx vertx = Vertx.vertx(
                new VertxOptions().setEventLoopPoolSize(2).setWorkerPoolSize(2).setBlockedThreadCheckInterval(10_000));
        HttpServerOptions opts = new HttpServerOptions()
                .setHost(host)
                .setPort(port)
                .setIdleTimeout(0)
                .setCompressionSupported(false)
                .setHttp2ClearTextEnabled(false)
                .setMaxInitialLineLength(16 * 1024)
                .setMaxHeaderSize(64 * 1024);
        HttpServer server = vertx.createHttpServer(opts);
        HttpFront front = new HttpFront(vertx, server, Map.copyOf(routes.map), maxBodyBytes);
        server.requestHandler(front::dispatch);
        try {
            server.listen().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            vertx.close();
            throw new IllegalStateException(
                    "cannot listen on " + host + ":" + port + ": "
                            + (e.getCause() != null ? e.getCause().getMessage() : e),
                    e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            vertx.close();
            throw new IllegalStateException("interrupted while starting the HTTP server", e);
        }
        return front;
    }

    public int port() {
        return server.actualPort();
    }

    private void dispatch(HttpServerRequest req) {
        Context ctx = Vertx.currentContext();
        Responder r = new Responder(req, ctx);
        String path = req.path();
        Endpoint e = routes.get(req.method().name() + " " + path);
        if (e == null) {
            boolean known = routes.keySet().stream()
                    .anyMatch(k -> k.substring(k.indexOf(' ') + 1).equals(path));
            r.error(
                    known ? 405 : 404,
                    known ? "method_not_allowed" : "not_found",
                    known
                            ? "Method " + req.method() + " is not allowed on " + path
                            : "No route for " + req.method() + " " + path);
            return;
        }
        String len = req.getHeader("Content-Length");
        if (len != null) {
            try {
                if (Long.parseLong(len.trim()) > maxBodyBytes) {
                    tooLarge(req, r);
                    return;
                }
            } catch (NumberFormatException ex) {
                r.error(400, "invalid_request_error", "Content-Length is not a number");
                return;
            }
        }
        Buffer body = Buffer.buffer();
        boolean[] over = {false};
        req.handler(chunk -> {
            if (over[0]) {
                return;
            }
            if (body.length() + chunk.length() > maxBodyBytes) {
                over[0] = true;
                tooLarge(req, r);
                return;
            }
            body.appendBuffer(chunk);
        });
        req.exceptionHandler(ex -> LOG.log(Level.FINE, "request " + path + " failed while reading: " + ex));
        req.endHandler(v -> {
            if (over[0]) {
                return;
            }
            try {
                e.handle(req, body.getBytes(), r);
            } catch (Exception ex) {
                LOG.log(Level.WARNING, "handler of " + req.method() + " " + path + " failed", ex);
                r.error(
                        500,
                        "internal_error",
                        "internal error: " + ex.getClass().getSimpleName()
                                + (ex.getMessage() == null ? "" : ": " + ex.getMessage()));
            }
        });
    }

    private void tooLarge(HttpServerRequest req, Responder r) {
        r.closeAfter();
        r.error(413, "invalid_request_error", "request body is larger than " + maxBodyBytes + " bytes");
    }

    @Override
    public void close() {
        try {
            server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.fine("closing the HTTP server: " + e);
        }
        try {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.fine("closing Vert.x: " + e);
        }
    }
}
