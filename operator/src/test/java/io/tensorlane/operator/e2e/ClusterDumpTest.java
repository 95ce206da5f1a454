package io.tensorlane.operator.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ClusterDumpTest {
    @Test
    void aWorkloadLineNamesEveryCountAndPrintsNullForWhatTheStatusLacks() {
        var rs = new ReplicaSetBuilder()
                .withNewMetadata()
                .withName("up-1")
                .withGeneration(3L)
                .withAnnotations(Map.of(FaultInvariants.KUBE_REVISION, "2"))
                .endMetadata()
                .build();
        assertThat(ClusterDump.workload(
                        rs,
                        2,
                        Optional.of(1),
                        Optional.empty(),
                        Map.entry("ready", Optional.of(1)),
                        Map.entry("available", Optional.empty())))
                .isEqualTo("  up-1 rev=2 2/1 ready=1 available=null gen=3/null\n");
    }
}
