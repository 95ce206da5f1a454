package io.tensorlane.runtime.serve.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.http.HttpMethod;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class HttpFrontTest {
    private HttpFront front;
    private final HttpClient client =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final CountDownLatch closed = new CountDownLatch(1);

    @BeforeEach
    void start() {
        HttpFront.Routes routes = new HttpFront.Routes()
                .add(HttpMethod.POST, "/echo", (req, body, r) -> r.json(200, "{\"bytes\":" + body.length + "}"))
                .add(HttpMethod.GET, "/boom", (req, body, r) -> {
                    throw new IllegalStateException("kaput");
                })
                .add(HttpMethod.GET, "/stream", (req, body, r) -> {
                    r.startEvents();
                    Thread t = new Thread(() -> {
                        for (int i = 0; i < 3; i++) {
                            r.event("{\"i\":" + i + "}");
                        }
                        r.endEvents();
                    });
                    t.start();
                })
                .add(HttpMethod.GET, "/forever", (req, body, r) -> {
                    r.onClose(closed::countDown);
                    r.startEvents();
                    r.event("{\"hello\":1}");
                });
        front = HttpFront.start("127.0.0.1", 0, routes, 1024);
    }

    @AfterEach
    void stop() {
        front.close();
    }

    private HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
        return client.send(b.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + front.port() + path);
    }

    @Test
    void routesBodiesAndErrors() throws Exception {
        HttpResponse<String> ok =
                send(HttpRequest.newBuilder(uri("/echo")).POST(HttpRequest.BodyPublishers.ofString("x".repeat(1000))));
        assertThat(ok.statusCode()).isEqualTo(200);
        assertThat(ok.body()).isEqualTo("{\"bytes\":1000}");
        HttpResponse<String> big =
                send(HttpRequest.newBuilder(uri("/echo")).POST(HttpRequest.BodyPublishers.ofString("x".repeat(5000))));
        assertThat(big.statusCode()).isEqualTo(413);
        assertThat(big.body()).contains("\"error\"").contains("larger than 1024 bytes");
        assertThat(send(HttpRequest.newBuilder(uri("/nope"))).statusCode()).isEqualTo(404);
        HttpResponse<String> wrong = send(HttpRequest.newBuilder(uri("/echo")).GET());
        assertThat(wrong.statusCode()).isEqualTo(405);
        HttpResponse<String> boom = send(HttpRequest.newBuilder(uri("/boom")));
        assertThat(boom.statusCode()).isEqualTo(500);
        assertThat(boom.body()).contains("kaput");
        // the server still answers after all of that
        assertThat(send(HttpRequest.newBuilder(uri("/echo")).POST(HttpRequest.BodyPublishers.ofString("{}")))
                        .statusCode())
                .isEqualTo(200);
    }

    @Test
    void serverSentEventsFromAnotherThread() throws Exception {
        HttpResponse<String> r = send(HttpRequest.newBuilder(uri("/stream")));
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type"))
                .hasValueSatisfying(v -> assertThat(v).startsWith("text/event-stream"));
        assertThat(r.body()).isEqualTo("data: {\"i\":0}\n\ndata: {\"i\":1}\n\ndata: {\"i\":2}\n\ndata: [DONE]\n\n");
    }

    @Test
    void aClientThatLeavesIsNoticed() throws Exception {
        try (Socket s = new Socket("127.0.0.1", front.port())) {
            OutputStream out = s.getOutputStream();
            out.write("GET /forever HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            byte[] buf = new byte[4096];
            String got = "";
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!got.contains("hello") && System.nanoTime() < end) {
                int n = in.read(buf);
                if (n < 0) {
                    break;
                }
                got += new String(buf, 0, n, StandardCharsets.US_ASCII);
            }
            assertThat(got).contains("200").contains("data: {\"hello\":1}");
        }
        assertThat(closed.await(10, TimeUnit.SECONDS))
                .as("onClose ran after the client closed the socket")
                .isTrue();
    }
}
