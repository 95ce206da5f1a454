package io.tensorlane.testkit.sim;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The simulated kubelet's status writes while the API server cannot take them (a restart): a write the client gave up
 * on is tried again, as a kubelet does, and a retry never overwrites a newer status. A loopback HTTP server plays the
 * API server; the client does not retry by itself, so what the test sees is the simulator's retry.
 */
class SimPodPlayerRetryTest {
    private HttpServer server;
    private KubernetesClient client;
    private SimPodPlayer player;
    private final AtomicInteger failNext = new AtomicInteger();
    private final List<String> patches = new CopyOnWriteArrayList<>(); // bodies of the status PATCHes taken

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", this::serve);
        server.start();
        client = new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder()
                        .withMasterUrl("http://127.0.0.1:" + server.getAddress().getPort())
                        .withRequestRetryBackoffLimit(0)
                        .build())
                .build();
    }

    private SimPodPlayer player(GpuNodeSimulator.Options options) {
        Map<String, String> nodeIps = new ConcurrentHashMap<>(Map.of("node-0", "10.99.0.1"));
        player = new SimPodPlayer(client, options, new SimRules("ns/none"), nodeIps, new ConcurrentHashMap<>());
        return player;
    }

    @AfterEach
    void stop() {
        if (player != null) {
            player.close();
        }
        client.close();
        server.stop(0);
    }

    private void serve(HttpExchange ex) throws IOException {
        try (ex) {
            String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            if ("PATCH".equals(ex.getRequestMethod()) && failNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                byte[] out = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":503}"
                        .getBytes(StandardCharsets.UTF_8);
                ex.sendResponseHeaders(503, out.length);
                ex.getResponseBody().write(out);
                return;
            }
            if ("PATCH".equals(ex.getRequestMethod())) {
                patches.add(body);
            }
            byte[] out = Serialization.asJson(pod()).getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(200, out.length);
            ex.getResponseBody().write(out);
        }
    }

    static Pod pod() {
        return new PodBuilder()
                .withNewMetadata()
                .withName("p")
                .withNamespace("ns")
                .withUid("u1")
                .endMetadata()
                .withNewSpec()
                .withNodeName("node-0")
                .withRestartPolicy("Always")
                .addNewContainer()
                .withName("server")
                .withImage("img")
                .endContainer()
                .endSpec()
                .build();
    }

    @Test
    void aStatusTheApiServerDidNotTakeIsWrittenAgain() throws InterruptedException {
        SimPodPlayer player = player(GpuNodeSimulator.Options.defaults());
        failNext.set(3);
        player.act(pod(), SimAction.run());
        for (int i = 0; i < 100 && player.applied("u1") == null; i++) {
            Thread.sleep(100);
        }
        assertThat(player.applied("u1")).isNotNull();
        assertThat(player.applied("u1").type()).isEqualTo(SimAction.Type.Run);
        assertThat(patches).hasSize(1);
        assertThat(patches.get(0)).contains("\"ready\":true");
    }

    @Test
    void aRetryNeverOverwritesANewerStatus() throws InterruptedException {
        SimPodPlayer player = player(GpuNodeSimulator.Options.defaults().withCrashLoopAfter(Duration.ofMillis(100)));
        failNext.set(1);
        // the terminated status is not taken (its retry is due in 500 ms); CrashLoopBackOff follows after 100 ms
        player.act(pod(), SimAction.cudaOom());
        Thread.sleep(2_000);
        assertThat(patches).hasSize(1);
        assertThat(patches.get(0)).contains("CrashLoopBackOff");
        assertThat(player.applied("u1").type()).isEqualTo(SimAction.Type.CrashLoopBackOff);
    }
}
