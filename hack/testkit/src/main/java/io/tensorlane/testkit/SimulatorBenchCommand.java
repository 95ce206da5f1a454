package io.tensorlane.testkit;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.testkit.sim.SimNodes;
import io.tensorlane.topology.TopologyFixtures;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code sim-bench}: how fast the local control plane and the simulator carry a fleet — registers N GPU nodes, rolls
 * out one pod per node, and prints the figures. A benchmark, not a test: it asserts nothing. Here rather than in
 * {@code sim}: the cluster classes of this package start the simulator, so its package does not use them.
 */
@Command(
        name = "sim-bench",
        mixinStandardHelpOptions = true,
        description = "Register N simulated GPU nodes, run one 8-GPU pod on each, print timings.")
public final class SimulatorBenchCommand implements Callable<Integer> {
    @Option(names = "--nodes", description = "number of nodes (default: ${DEFAULT-VALUE})")
    int nodes = 200;

    @Option(names = "--fixture", description = "topology fixture (default: ${DEFAULT-VALUE})")
    String fixture = TopologyFixtures.H200_SXM_8;

    @Option(names = "--kubeconfig", description = "an existing cluster (default: start a private control plane)")
    Path kubeconfig;

    @Override
    public Integer call() {
        LocalControlPlane plane = kubeconfig == null ? LocalControlPlane.start() : null;
        try {
            LocalCluster cluster = plane != null ? plane.cluster() : LocalCluster.fromKubeconfig(kubeconfig);
            if (plane != null) {
                System.out.printf(
                        "control plane start: %.1f s%n", plane.startupTime().toMillis() / 1000.0);
            }
            try (KubernetesClient c = cluster.newClient()) {
                Crds.install(c);
                var sim = new GpuNodeSimulator(
                                c, GpuNodeSimulator.Options.defaults().withNamePrefix("bench-"))
                        .start();
                try {
                    run(c, sim);
                } finally {
                    sim.nodes().forEach(sim::removeNode);
                    sim.close();
                }
            }
            return 0;
        } finally {
            if (plane != null) {
                plane.stop();
            }
        }
    }

    private void run(KubernetesClient c, GpuNodeSimulator sim) {
        long t0 = System.nanoTime();
        for (int i = 0; i < nodes; i++) {
            sim.addNode(fixture);
        }
        System.out.printf(
                "%d %s nodes registered (Node, taint lifted, GpuTopology with status): %.1f s%n",
                nodes, fixture, (System.nanoTime() - t0) / 1e9);
        String ns = "sim-bench";
        c.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName(ns)
                        .endMetadata()
                        .build())
                .create();
        c.serviceAccounts()
                .inNamespace(ns)
                .withName("default")
                .waitUntilCondition(
                        s -> s != null
                                && s.getSecrets() != null
                                && !s.getSecrets().isEmpty(),
                        60,
                        TimeUnit.SECONDS);
        int gpus = TopologyFixtures.load(fixture).gpus.size();
        long t1 = System.nanoTime();
        c.apps()
                .deployments()
                .inNamespace(ns)
                .resource(new DeploymentBuilder()
                        .withNewMetadata()
                        .withName("fleet")
                        .endMetadata()
                        .withNewSpec()
                        .withReplicas(nodes)
                        .withNewSelector()
                        .addToMatchLabels("app", "fleet")
                        .endSelector()
                        .withNewTemplate()
                        .withNewMetadata()
                        .addToLabels("app", "fleet")
                        .endMetadata()
                        .withNewSpec()
                        .addNewContainer()
                        .withName("server")
                        .withImage("bench")
                        .withNewResources()
                        .addToLimits(SimNodes.GPU_RESOURCE, new Quantity(Integer.toString(gpus)))
                        .endResources()
                        .endContainer()
                        .endSpec()
                        .endTemplate()
                        .endSpec()
                        .build())
                .create();
        c.apps()
                .deployments()
                .inNamespace(ns)
                .withName("fleet")
                .waitUntilCondition(
                        d -> d != null
                                && d.getStatus() != null
                                && d.getStatus().getReadyReplicas() != null
                                && d.getStatus().getReadyReplicas() == nodes,
                        10,
                        TimeUnit.MINUTES);
        System.out.printf(
                "%d pods x %d GPUs created, scheduled and Ready (Deployment readyReplicas): %.1f s%n",
                nodes, gpus, (System.nanoTime() - t1) / 1e9);
        c.namespaces().withName(ns).delete();
    }
}
