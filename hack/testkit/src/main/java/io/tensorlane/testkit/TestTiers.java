package io.tensorlane.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The test tiers, told by the class name, so a reader (and {@code -Dtest=}) knows what a test needs before opening it:
 *
 * <ul>
 *   <li>{@code *Test}: a unit test; it starts no control plane (it may open a loopback socket in-process);
 *   <li>{@code *ClusterTest}: one component against the real local control plane;
 *   <li>{@code *E2ETest}: the operator reconciling on the local control plane with simulated GPU nodes;
 *   <li>{@code *IT}: the packaged artifacts (manifests, RBAC, images), run by failsafe after {@code package}.
 * </ul>
 *
 * A test runs on the local control plane when its class file refers to {@link WithLocalCluster},
 * {@link LocalClusterExtension} or {@link LocalControlPlane}. {@link #violations} checks a module's compiled tests;
 * every module with tests on the local control plane runs it in a {@code TestTierNamesTest}.
 */
public final class TestTiers {
    public static final String CLUSTER = "ClusterTest";
    public static final String E2E = "E2ETest";
    public static final String PACKAGED = "IT";
    private static final List<String> CONTROL_PLANE = Stream.of(
                    WithLocalCluster.class, LocalClusterExtension.class, LocalControlPlane.class)
            .map(c -> c.getName().replace('.', '/'))
            .toList();

    private TestTiers() {}

    /** What is wrong with the name of the test class {@code name}, or null. */
    public static String violation(String name, boolean onControlPlane) {
        String simple = name.substring(name.lastIndexOf('.') + 1);
        boolean clusterTier = simple.endsWith(CLUSTER) || simple.endsWith(E2E);
        if (onControlPlane && !clusterTier && !simple.endsWith(PACKAGED)) {
            return name + " runs on the local control plane: name it *" + CLUSTER + " (one component), *" + E2E
                    + " (the operator end to end) or *" + PACKAGED + " (packaged artifacts)";
        }
        if (!onControlPlane && clusterTier) {
            return name + " does not run on the local control plane: a unit test is named *Test";
        }
        return null;
    }

    /** Whether the compiled class {@code classFile} refers to the local control plane (its constant pool names it). */
    public static boolean onControlPlane(Path classFile) {
        try {
            // class names in the constant pool are modified UTF-8, which is plain ASCII for these names
            String pool = new String(Files.readAllBytes(classFile), StandardCharsets.ISO_8859_1);
            return CONTROL_PLANE.stream().anyMatch(pool::contains);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The misnamed top-level test classes under {@code testClasses} (a module's target/test-classes). */
    public static List<String> violations(Path testClasses) {
        List<String> out = new ArrayList<>();
        try (Stream<Path> files = Files.walk(testClasses)) {
            for (Path f :
                    files.filter(p -> p.toString().endsWith(".class")).sorted().toList()) {
                String rel = testClasses.relativize(f).toString();
                String name = rel.substring(0, rel.length() - ".class".length())
                        .replace(f.getFileSystem().getSeparator(), ".");
                String simple = name.substring(name.lastIndexOf('.') + 1);
                boolean test = simple.endsWith("Test") || simple.endsWith(PACKAGED);
                if (!name.contains("$") && test) {
                    String v = violation(name, onControlPlane(f));
                    if (v != null) {
                        out.add(v);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }
}
