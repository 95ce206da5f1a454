package io.tensorlane.runtime.serve;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * {@code /health/live} (200 while the process serves), {@code /health/ready} (200 once the communicator is up, 503
 * before) and {@code /metrics} (Prometheus text) on one port, with the JDK's HTTP server.
 */
public final class HealthServer implements AutoCloseable {
    public static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";
    private final HttpServer server;

    private HealthServer(HttpServer server) {
        this.server = server;
    }

    /** Binds {@code port} on all interfaces (0: any free port) and starts serving. */
    public static HealthServer start(int port, BooleanSupplier ready, Supplier<String> metrics) throws IOException {
        HttpServer s = HttpServer.create(new InetSocketAddress(port), 16);
        s.createContext("/health/live", ex -> reply(ex, 200, "text/plain", "live\n"));
        s.createContext("/health/ready", ex -> {
            boolean r = ready.getAsBoolean();
            reply(ex, r ? 200 : 503, "text/plain", r ? "ready\n" : "not ready: the communicator is starting\n");
        });
        s.createContext("/metrics", ex -> reply(ex, 200, PROMETHEUS_TEXT, metrics.get()));
        s.createContext(
                "/",
                ex -> reply(
                        ex,
                        404,
                        "text/plain",
                        "not found: " + ex.getRequestURI().getPath() + "\n"));
        s.setExecutor(Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "tensorlane-http");
            t.setDaemon(true);
            return t;
        }));
        s.start();
        return new HealthServer(s);
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private static void reply(HttpExchange ex, int code, String type, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        boolean head = "HEAD".equals(ex.getRequestMethod());
        ex.sendResponseHeaders(code, head ? -1 : b.length);
        if (!head) {
            try (OutputStream o = ex.getResponseBody()) {
                o.write(b);
            }
        }
        ex.close();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
