package io.tensorlane.testkit.sim;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code sim}: runs the GPU node simulator until stopped (SIGTERM/Ctrl-C); nodes stay registered. */
@Command(
        name = "sim",
        mixinStandardHelpOptions = true,
        description = "Register simulated GPU nodes from topology fixtures and play the kubelet for their pods.")
public final class SimulatorCommand implements Callable<Integer> {
    @Option(names = "--kubeconfig", description = "kubeconfig (default: $KUBECONFIG)")
    Path kubeconfig;

    @Option(names = "--namespace", description = "namespace of the rules ConfigMap (default: ${DEFAULT-VALUE})")
    String namespace = "tensorlane-sim";

    @Option(
            names = "--node",
            description = "fixture or name=fixture, repeatable, e.g. --node gpu-pcie-0=rtx-pro-6000-pcie-8")
    List<String> nodes = new ArrayList<>();

    @Option(names = "--start-delay-ms", description = "delay from binding to Running (default: ${DEFAULT-VALUE})")
    long startDelayMs = 1000;

    @Option(
            names = "--download-seconds",
            description =
                    "pods with the hf:// download step (init container fetch-model) "
                            + "run it this long first, logging the runtime's progress lines; 0: no download step (default: ${DEFAULT-VALUE})")
    long downloadSeconds = 0;

    @Option(
            names = "--download-bytes",
            description =
                    "model bytes every simulated download step reports; 0: the weight bytes of the pod's"
                            + " InferenceDeployment (spec, else what the operator read from the model) (default: ${DEFAULT-VALUE})")
    long downloadBytes = 0;

    @Override
    public Integer call() throws Exception {
        Path kc = kubeconfig != null
                ? kubeconfig
                : System.getenv("KUBECONFIG") != null ? Path.of(System.getenv("KUBECONFIG")) : null;
        if (kc == null) {
            System.err.println("[gpu-sim] no kubeconfig: pass --kubeconfig or set KUBECONFIG");
            return 2;
        }
        KubernetesClient client = new KubernetesClientBuilder()
                .withConfig(Config.fromKubeconfig(Files.readString(kc)))
                .build();
        var sim = new GpuNodeSimulator(
                        client,
                        GpuNodeSimulator.Options.defaults()
                                .withNamespace(namespace)
                                .withStartDelay(Duration.ofMillis(startDelayMs)))
                .start();
        if (downloadSeconds < 0 || downloadBytes < 0) {
            System.err.println("[gpu-sim] --download-seconds and --download-bytes must be >= 0");
            return 2;
        }
        if (downloadSeconds > 0) {
            sim.simulateDownloads(Duration.ofSeconds(downloadSeconds), downloadBytes);
        }
        for (String spec : nodes) {
            int eq = spec.indexOf('=');
            String name = eq < 0 ? null : spec.substring(0, eq);
            String fixture = eq < 0 ? spec : spec.substring(eq + 1);
            String added = name == null ? sim.addNode(fixture) : sim.addNode(name, fixture, Map.of());
            System.err.println("[gpu-sim] node " + added + " (" + fixture + ") Ready");
        }
        System.err.println(
                "[gpu-sim] running; rules from ConfigMap " + namespace + "/" + GpuNodeSimulator.RULES_CONFIGMAP);
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            sim.close();
            client.close();
            stop.countDown();
        }));
        stop.await();
        return 0;
    }
}
