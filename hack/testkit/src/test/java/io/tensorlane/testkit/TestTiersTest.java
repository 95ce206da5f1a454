package io.tensorlane.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** The naming rule of {@link TestTiers}, its detection on compiled classes, and this module's own tests. */
class TestTiersTest {
    static final Path CLASSES = Path.of("target/test-classes/io/tensorlane/testkit");

    @WithLocalCluster
    static class Annotated {}

    @ExtendWith(LocalClusterExtension.class)
    static class Extended {}

    static class StartsItsOwn {
        void run() {
            LocalControlPlane.start().close();
        }
    }

    static class Plain {}

    static Stream<Arguments> classFiles() {
        return Stream.of(
                Arguments.of("Annotated", true),
                Arguments.of("Extended", true),
                Arguments.of("StartsItsOwn", true),
                Arguments.of("Plain", false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("classFiles")
    void detectsTheControlPlaneInTheClassFile(String nested, boolean expected) {
        assertThat(TestTiers.onControlPlane(CLASSES.resolve("TestTiersTest$" + nested + ".class")))
                .isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0} on the control plane: {1}")
    @CsvSource(
            nullValues = "ok",
            value = {
                "a.SchemaTest, true, runs on the local control plane",
                "a.SchemaClusterTest, true, ok",
                "a.RolloutE2ETest, true, ok",
                "a.ManifestsIT, true, ok",
                "a.ManifestsIT, false, ok",
                "a.PlannerTest, false, ok",
                "a.LonelyClusterTest, false, does not run on the local control plane",
                "a.LonelyE2ETest, false, does not run on the local control plane"
            })
    void rule(String name, boolean onControlPlane, String problem) {
        String v = TestTiers.violation(name, onControlPlane);
        if (problem == null) {
            assertThat(v).isNull();
        } else {
            assertThat(v).startsWith(name + " ").contains(problem);
        }
    }

    @Test
    void everyTestOfThisModuleIsNamedForItsTier() {
        assertThat(TestTiers.violations(Path.of("target/test-classes"))).isEmpty();
    }
}
