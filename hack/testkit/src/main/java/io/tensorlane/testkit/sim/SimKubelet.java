package io.tensorlane.testkit.sim;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * The one kubelet endpoint the simulator serves: container logs ({@code GET /containerLogs/{ns}/{pod}/{container}},
 * {@code tailLines}), over HTTPS on 127.0.0.1 with a self-signed certificate made by the JDK's keytool. Simulated
 * nodes name it as their kubelet (address {@code InternalDNS 127.0.0.1}, {@code daemonEndpoints.kubeletEndpoint.port}),
 * so {@code kubectl logs} and the API server's pods/log reach it (the local API server prefers InternalDNS and, with no
 * kubelet CA configured, does not verify the kubelet's certificate, as on a default cluster).
 */
public final class SimKubelet implements AutoCloseable {
    private final HttpsServer server;
    private final Map<String, List<String>> logs = new ConcurrentHashMap<>();

    public SimKubelet() {
        try {
            Path dir = Files.createTempDirectory("tensorlane-sim-kubelet");
            Path store = dir.resolve("kubelet.p12");
            char[] pass = "simulated".toCharArray();
            String keytool =
                    Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
            Process p = new ProcessBuilder(
                            keytool,
                            "-genkeypair",
                            "-alias",
                            "kubelet",
                            "-keyalg",
                            "EC",
                            "-groupname",
                            "secp256r1",
                            "-dname",
                            "CN=tensorlane-sim-kubelet",
                            "-ext",
                            "SAN=ip:127.0.0.1",
                            "-validity",
                            "30",
                            "-storetype",
                            "PKCS12",
                            "-keystore",
                            store.toString(),
                            "-storepass",
                            new String(pass))
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("keytool could not make the simulated kubelet's certificate: " + out);
            }
            KeyStore ks = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(store)) {
                ks.load(in, pass);
            }
            Files.delete(store);
            Files.delete(dir);
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, pass);
            SSLContext tls = SSLContext.getInstance("TLS");
            tls.init(kmf.getKeyManagers(), null, null);
            server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            server.setHttpsConfigurator(new HttpsConfigurator(tls));
            server.createContext("/containerLogs/", this::containerLogs);
            server.start();
        } catch (IOException | java.security.GeneralSecurityException e) {
            throw new IllegalStateException("cannot start the simulated kubelet endpoint: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting the simulated kubelet endpoint", e);
        }
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** Appends a line to a container's log. */
    public void append(String ns, String pod, String container, String line) {
        logs.computeIfAbsent(
                        ns + "/" + pod + "/" + container,
                        k -> java.util.Collections.synchronizedList(new ArrayList<>()))
                .add(line);
    }

    /** Forgets the logs of a pod. */
    public void forget(String ns, String pod) {
        logs.keySet().removeIf(k -> k.startsWith(ns + "/" + pod + "/"));
    }

    private void containerLogs(HttpExchange ex) throws IOException {
        try (ex) {
            String[] parts = ex.getRequestURI()
                    .getPath()
                    .substring("/containerLogs/".length())
                    .split("/");
            List<String> lines = parts.length == 3 ? logs.get(parts[0] + "/" + parts[1] + "/" + parts[2]) : null;
            if (!"GET".equals(ex.getRequestMethod()) || lines == null) {
                byte[] body = ("no log for " + ex.getRequestURI().getPath() + "\n").getBytes(StandardCharsets.UTF_8);
                ex.sendResponseHeaders(404, body.length);
                ex.getResponseBody().write(body);
                return;
            }
            List<String> copy;
            synchronized (lines) {
                copy = new ArrayList<>(lines);
            }
            int tail = tailLines(ex.getRequestURI().getRawQuery());
            if (tail >= 0 && tail < copy.size()) {
                copy = copy.subList(copy.size() - tail, copy.size());
            }
            byte[] body =
                    copy.isEmpty() ? new byte[0] : (String.join("\n", copy) + "\n").getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", "text/plain");
            ex.sendResponseHeaders(200, body.length == 0 ? -1 : body.length);
            try (OutputStream os = ex.getResponseBody()) {
                os.write(body);
            }
        }
    }

    static int tailLines(String query) {
        if (query == null) {
            return -1;
        }
        for (String kv : query.split("&")) {
            if (kv.startsWith("tailLines=")) {
                try {
                    return Integer.parseInt(kv.substring("tailLines=".length()));
                } catch (NumberFormatException e) {
                    return -1;
                }
            }
        }
        return -1;
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
