package io.tensorlane.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.testkit.TestTiers;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Every test class of this module is named for its tier ({@link TestTiers}: *Test, *ClusterTest, *E2ETest, *IT). */
class TestTierNamesTest {
    @Test
    void everyTestIsNamedForItsTier() {
        // the scan reads this module's compiled tests: a known cluster-tier class is seen as one
        assertThat(TestTiers.onControlPlane(
                        Path.of("target/test-classes/io/tensorlane/runtime/probe/PublisherClusterTest.class")))
                .isTrue();
        assertThat(TestTiers.violations(Path.of("target/test-classes"))).isEmpty();
    }
}
