package io.tensorlane.runtime.serve;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.contract.Allreduce;
import io.tensorlane.contract.TerminationMessage;
import io.tensorlane.runtime.engine.CudaOutOfMemoryException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** serve's HTTP endpoints and metrics with a fake step source (no GPU). */
class ServeHttpTest {
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** Starts when released; each step reports the 42 KiB allreduce twice (OneStage) and one 2.6 MiB (TwoStage). */
    static final class FakeSteps implements StepSource {
        final CountDownLatch release = new CountDownLatch(1);
        /** Step 6 waits for this, so the server is still up while the test reads its metrics. */
        final CountDownLatch finish = new CountDownLatch(1);

        final AtomicInteger steps = new AtomicInteger();
        volatile boolean closed;
        final RuntimeException failStart;

        FakeSteps(RuntimeException failStart) {
            this.failStart = failStart;
        }

        @Override
        public void start() {
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (failStart != null) {
                throw failStart;
            }
        }

        @Override
        public long ipcBufferBytes() {
            return 8 * 18L * 1024 * 1024;
        }

        @Override
        public long localBufferBytes() {
            return 8 * 4096L;
        }

        @Override
        public long staticPoolBytes() {
            return 100L << 30;
        }

        @Override
        public List<AllreduceSample> step() {
            int n = steps.incrementAndGet();
            try {
                if (n == 6) {
                    finish.await(30, TimeUnit.SECONDS);
                }
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return List.of(
                    new AllreduceSample(43008, "OneStage", 21_000),
                    new AllreduceSample(43008, "OneStage", 23_000),
                    new AllreduceSample(2752512, "TwoStage", 410_000));
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .timeout(Duration.ofSeconds(5))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    ServeConfig config(int port) {
        return new ServeConfig(8, Allreduce.Custom, null, 8L << 20, 0.8, port);
    }

    @Test
    void readyOnlyAfterTheCommunicatorIsUpThenMetrics() throws Exception {
        int port = freePort();
        FakeSteps steps = new FakeSteps(null);
        StringWriter log = new StringWriter();
        CompletableFuture<Integer> serve = CompletableFuture.supplyAsync(() -> {
            try {
                return ServeCommand.run(config(port), steps, 20, Duration.ofSeconds(20), new PrintWriter(log));
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        awaitHttp(port);
        assertThat(get(port, "/health/live").statusCode()).isEqualTo(200);
        HttpResponse<String> notReady = get(port, "/health/ready");
        assertThat(notReady.statusCode()).isEqualTo(503);
        assertThat(notReady.body()).contains("communicator is starting");
        assertThat(get(port, "/metrics").body()).contains("tensorlane_ready 0.0");
        assertThat(get(port, "/nope").statusCode()).isEqualTo(404);

        steps.release.countDown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (get(port, "/health/ready").statusCode() != 200 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(get(port, "/health/ready").statusCode()).isEqualTo(200);
        while (steps.steps.get() < 5 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        HttpResponse<String> m = get(port, "/metrics");
        assertThat(m.headers().firstValue("Content-Type"))
                .hasValueSatisfying(t -> assertThat(t).startsWith("text/plain"));
        String body = m.body();
        assertThat(body)
                .contains("tensorlane_ready 1.0")
                .contains("tensorlane_allreduce_calls_total{algorithm=\"OneStage\",bytes=\"43008\"}")
                .contains("tensorlane_allreduce_calls_total{algorithm=\"TwoStage\",bytes=\"2752512\"}")
                .contains("tensorlane_allreduce_latency_seconds_bucket{algorithm=\"OneStage\",bytes=\"43008\",le=")
                .contains("tensorlane_allreduce_latency_seconds_count{algorithm=\"OneStage\",bytes=\"43008\"}")
                .contains("tensorlane_allreduce_buffer_bytes{visibility=\"peer\"} 1.50994944E8")
                .contains("tensorlane_static_pool_bytes 1.073741824E11")
                .contains("tensorlane_serve_info{allreduce=\"Custom\",mode=\"synthetic\",world_size=\"8\"} 1")
                .contains("tensorlane_steps_total");
        steps.finish.countDown();
        assertThat(serve.get(30, TimeUnit.SECONDS)).isZero();
        assertThat(steps.steps.get()).isEqualTo(20);
        assertThat(steps.closed).isTrue();
        assertThat(log.toString()).contains("serve: ready").contains("20 steps done");
        // the count of the 42 KiB OneStage calls is exact: 2 per step
        assertThat(new ServeMetrics(config(port)).scrape()).doesNotContain("tensorlane_allreduce_calls_total{");
    }

    @Test
    void cudaOomAtStartNeverTurnsReadyAndPropagates() throws Exception {
        int port = freePort();
        FakeSteps steps = new FakeSteps(new CudaOutOfMemoryException(TerminationMessage.cudaOom(
                TerminationMessage.PHASE_STATIC_POOL, 140L << 30, 139L << 30, 141L << 30, 0, null, "static-pool")));
        steps.release.countDown();
        StringWriter log = new StringWriter();
        Throwable thrown = null;
        try {
            ServeCommand.run(config(port), steps, 0, null, new PrintWriter(log));
        } catch (CudaOutOfMemoryException e) {
            thrown = e;
        }
        assertThat(thrown).isInstanceOf(CudaOutOfMemoryException.class);
        assertThat(((CudaOutOfMemoryException) thrown).termination().phase()).isEqualTo("static-pool");
        assertThat(steps.closed).isTrue();
        assertThat(steps.steps.get()).isZero();
        assertThat(log.toString()).doesNotContain("serve: ready");
    }

    private void awaitHttp(int port) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            try {
                get(port, "/health/live");
                return;
            } catch (java.io.IOException e) {
                Thread.sleep(20);
            }
        }
    }
}
