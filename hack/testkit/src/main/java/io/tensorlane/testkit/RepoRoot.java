package io.tensorlane.testkit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** Finds the repository root: system property {@code tensorlane.repo.root}, env {@code TENSORLANE_REPO}, or upwards. */
public final class RepoRoot {
    static final String MARKER = "hack/k8s-binaries.sh";

    private RepoRoot() {}

    /** The repository root, or empty when this JVM runs outside a checkout (e.g. from a copied jar). */
    public static Optional<Path> find() {
        for (String candidate :
                new String[] {System.getProperty("tensorlane.repo.root"), System.getenv("TENSORLANE_REPO")}) {
            if (candidate != null
                    && !candidate.isBlank()
                    && Files.isRegularFile(Path.of(candidate).resolve(MARKER))) {
                return Optional.of(Path.of(candidate).toAbsolutePath().normalize());
            }
        }
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve(MARKER))) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /** The repository root or a clear error. */
    public static Path require() {
        return find().orElseThrow(() ->
                new IllegalStateException("cannot find the Tensorlane checkout (a directory with " + MARKER + ") above "
                        + Path.of("").toAbsolutePath() + "; set -Dtensorlane.repo.root or TENSORLANE_REPO"));
    }
}
