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
class ControlPlaneLifecycleTest {
  @Test
  void warmStartIsUnderAMinuteAndStopLeavesNothingBehind() {
    LocalControlPlane plane = LocalControlPlane.start();
    List<ManagedProcess> procs = plane.processes();
    try {
      Duration t = plane.startupTime();
      System.out.printf("[testkit] local control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler "
          + "%s) warm start: %.1f s%n", KubeBinaries.VERSION, t.toMillis() / 1000.0);
      assertThat(t).isLessThan(Duration.ofSeconds(60));
      assertThat(procs).extracting(ManagedProcess::name)
          .containsExactly("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler");
      assertThat(procs).allMatch(ManagedProcess::isAlive);
      try (KubernetesClient c = plane.cluster().newClient()) {
        assertThat(c.getKubernetesVersion().getGitVersion()).isEqualTo("v" + KubeBinaries.VERSION);
        assertThat(c.namespaces().withName("kube-system").get()).isNotNull();
      }
    } finally {
      plane.stop();
    }
    assertThat(procs).noneMatch(ManagedProcess::isAlive);
    assertThat(procs).allSatisfy(p -> assertThat(ProcessHandle.of(p.pid())).isEmpty());
    assertThat(Files.exists(plane.stateDir())).isFalse();
    assertThat(Files.exists(plane.etcdData())).isFalse();
  }
}
