package io.tensorlane.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The current CustomResourceDefinition API server binary ({@code apiextensions-apiserver}, Kubernetes 1.36's):
 * {@code $TENSORLANE_CRD_APISERVER_BIN} (a directory) when set, otherwise whatever {@code hack/crd-apiserver.sh}
 * prints (it verifies its cache, and builds once per machine from Debian's Go source packages when it is missing).
 * The script is the one place that names the release; {@link #version} reads what the cached build records.
 */
public record CrdServerBinary(Path dir) {
    static final String SCRIPT = "hack/crd-apiserver.sh";
    static final String NAME = "apiextensions-apiserver";

    public Path server() {
        return dir.resolve(NAME);
    }

    /** The first line of the build's {@code VERSION} file, e.g. {@code golang-k8s-apiextensions-apiserver-dev 0.36.4-1}. */
    public String version() {
        try {
            return Files.readAllLines(dir.resolve("VERSION")).get(0);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + dir.resolve("VERSION"), e);
        }
    }

    /** Locates (and if needed builds) the binary; the script's output goes to {@code buildLog}. */
    public static CrdServerBinary locate(Path buildLog) {
        String env = System.getenv("TENSORLANE_CRD_APISERVER_BIN");
        CrdServerBinary bin = env != null && !env.isBlank()
                ? new CrdServerBinary(Path.of(env))
                : new CrdServerBinary(KubeBinaries.viaScript(SCRIPT, buildLog));
        if (!Files.isExecutable(bin.server())) {
            throw new IllegalStateException("missing executable " + bin.server()
                    + (env != null ? " (from TENSORLANE_CRD_APISERVER_BIN)" : "") + "; run " + SCRIPT);
        }
        return bin;
    }
}
