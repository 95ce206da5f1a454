package io.tensorlane.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A second, independent control plane in the same JVM: the binaries are cached, so it must be up in under a minute
 * (the figure is printed), serve requests, and leave no process and no state behind after stop.
 */
class ControlPlaneLifecycleClusterTest {
    @Test
    void warmStartIsUnderAMinuteAndStopLeavesNothingBehind() {
        LocalControlPlane plane = LocalControlPlane.start();
        List<ManagedProcess> procs = plane.processes();
        try {
            Duration t = plane.startupTime();
            System.out.printf(
                    "[testkit] local control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler "
                            + "%s) warm start: %.1f s%n",
                    KubeBinaries.VERSION, t.toMillis() / 1000.0);
            assertThat(t).isLessThan(Duration.ofSeconds(60));
            assertThat(procs)
                    .extracting(ManagedProcess::name)
                    .containsExactly("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler");
            assertThat(procs).allMatch(ManagedProcess::isAlive);
            try (KubernetesClient c = plane.cluster().newClient()) {
                assertThat(c.getKubernetesVersion().getGitVersion()).isEqualTo("v" + KubeBinaries.VERSION);
                assertThat(c.namespaces().withName("kube-system").get()).isNotNull();

                // restartApiServerAndEtcd: same ports, same data, same kubeconfig and client; objects survive
                c.configMaps()
                        .inNamespace("default")
                        .resource(new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                                .withNewMetadata()
                                .withName("survives")
                                .endMetadata()
                                .addToData("k", "v")
                                .build())
                        .create();
                long apiPid = procs.get(1).pid();
                Duration restart = plane.restartApiServerAndEtcd(Duration.ofMillis(500));
                System.out.printf("[testkit] API server and etcd restarted in %.1f s%n", restart.toMillis() / 1000.0);
                assertThat(plane.processes().get(1).pid()).isNotEqualTo(apiPid);
                assertThat(ProcessHandle.of(apiPid)).isEmpty();
                assertThat(c.configMaps()
                                .inNamespace("default")
                                .withName("survives")
                                .get()
                                .getData())
                        .containsEntry("k", "v");
                assertThat(ClusterState.read(plane.stateDir()).pids())
                        .containsEntry(
                                "kube-apiserver", plane.processes().get(1).pid());
            }
            procs = plane.processes();
        } finally {
            plane.stop();
        }
        assertThat(procs).noneMatch(ManagedProcess::isAlive);
        assertThat(procs).allSatisfy(p -> assertThat(ProcessHandle.of(p.pid())).isEmpty());
        assertThat(Files.exists(plane.stateDir())).isFalse();
        assertThat(Files.exists(plane.etcdData())).isFalse();
    }
}
