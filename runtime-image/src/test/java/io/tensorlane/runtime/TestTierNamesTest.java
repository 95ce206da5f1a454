package io.tensorlane.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.testkit.TestTiers;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Every test class of this module is named for its tier ({@link TestTiers}: *Test, *ClusterTest, *E2ETest, *IT). */
class TestTierNamesTest {
    @Test
    void everyTestIsNamedForItsTier() {
        assertThat(TestTiers.violations(Path.of("target/test-classes"))).isEmpty();
    }
}
