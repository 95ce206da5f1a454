package io.tensorlane.testkit;

import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Bounded readiness waits for loopback control-plane processes. Each wait checks a health endpoint every 100 ms and
 * fails at once, with the tail of the process log, when a process it depends on has exited.
 */
final class Readiness {
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .sslContext(loopbackTrustAll())
            .sslParameters(noEndpointIdentification())
            .connectTimeout(Duration.ofSeconds(2))
            .version(HttpClient.Version.HTTP_1_1)
            .build();

    private Readiness() {}

    /** True when {@code GET url} answers 200 (unauthenticated; health endpoints are public on these components). */
    static boolean httpOk(String url) {
        try {
            HttpRequest req = HttpRequest.newBuilder(URI.create(url))
                    .timeout(Duration.ofSeconds(3))
                    .GET()
                    .build();
            return HTTP.send(req, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (java.io.IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Waits until {@code ready} holds; throws with the logs of dead {@code watched} processes, or on timeout. */
    static void await(String what, Duration timeout, BooleanSupplier ready, List<ManagedProcess> watched) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (ready.getAsBoolean()) {
                return;
            }
            for (ManagedProcess p : watched) {
                if (!p.isAlive()) {
                    throw new IllegalStateException("waiting for " + what + ": " + p.name() + " exited"
                            + p.exitCode().map(c -> " with code " + c).orElse("") + "; log " + p.log() + ":\n"
                            + p.logTail(25));
                }
            }
            if (System.nanoTime() > deadline) {
                StringBuilder logs = new StringBuilder();
                watched.forEach(
                        p -> logs.append("\n--- ").append(p).append(":\n").append(p.logTail(10)));
                throw new IllegalStateException(
                        "timed out after " + timeout.toSeconds() + " s waiting for " + what + logs);
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + what, e);
            }
        }
    }

    /**
     * Health checks talk only to 127.0.0.1 ports this JVM just chose, to components whose serving certificates are
     * generated in memory at start-up; nothing secret is sent. The kubeconfig, by contrast, pins the API server's CA.
     */
    private static SSLContext loopbackTrustAll() {
        try {
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(
                    null,
                    new TrustManager[] {
                        new X509ExtendedTrustManager() {
                            @Override
                            public void checkClientTrusted(X509Certificate[] c, String a, Socket s) {}

                            @Override
                            public void checkServerTrusted(X509Certificate[] c, String a, Socket s) {}

                            @Override
                            public void checkClientTrusted(X509Certificate[] c, String a, SSLEngine e) {}

                            @Override
                            public void checkServerTrusted(X509Certificate[] c, String a, SSLEngine e) {}

                            @Override
                            public void checkClientTrusted(X509Certificate[] c, String a) {}

                            @Override
                            public void checkServerTrusted(X509Certificate[] c, String a) {}

                            @Override
                            public X509Certificate[] getAcceptedIssuers() {
                                return new X509Certificate[0];
                            }
                        }
                    },
                    new SecureRandom());
            return ctx;
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static SSLParameters noEndpointIdentification() {
        SSLParameters p = new SSLParameters();
        p.setEndpointIdentificationAlgorithm(null);
        return p;
    }
}
