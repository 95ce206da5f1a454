package io.tensorlane.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The control-plane binaries: {@code $TENSORLANE_K8S_BIN} when set, otherwise whatever {@code hack/k8s-binaries.sh}
 * prints (it verifies its cache, and builds once per machine when the cache is missing or broken).
 */
public record KubeBinaries(Path dir) {
    public static final String VERSION = "1.20.2";
    static final List<String> NAMES = List.of("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler");

    public Path etcd() {
        return dir.resolve("etcd");
    }

    public Path apiserver() {
        return dir.resolve("kube-apiserver");
    }

    public Path controllerManager() {
        return dir.resolve("kube-controller-manager");
    }

    public Path scheduler() {
        return dir.resolve("kube-scheduler");
    }

    /** Locates (and if needed builds) the binaries; the script's output goes to {@code buildLog}. */
    public static KubeBinaries locate(Path buildLog) {
        String env = System.getenv("TENSORLANE_K8S_BIN");
        KubeBinaries bins = env != null && !env.isBlank()
                ? new KubeBinaries(Path.of(env))
                : new KubeBinaries(viaScript(RepoRoot.MARKER, buildLog));
        for (String n : NAMES) {
            if (!Files.isExecutable(bins.dir.resolve(n))) {
                throw new IllegalStateException("missing executable " + bins.dir.resolve(n)
                        + (env != null ? " (from TENSORLANE_K8S_BIN)" : "") + "; run hack/k8s-binaries.sh");
            }
        }
        return bins;
    }

    /**
     * Runs a cache script of {@code hack/} ({@code relativeScript}, from the repository root) that verifies or builds
     * binaries and prints their directory on its last line of stdout; its stderr goes to {@code buildLog}.
     */
    static Path viaScript(String relativeScript, Path buildLog) {
        Path script = RepoRoot.require().resolve(relativeScript);
        try {
            Files.createDirectories(buildLog.getParent());
            Process p = new ProcessBuilder("bash", script.toString())
                    .redirectError(buildLog.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .start();
            byte[] out = p.getInputStream().readAllBytes();
            // first run on a machine builds from source: 10-15 minutes on 2 cores
            if (!p.waitFor(60, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new IllegalStateException(script + " did not finish in 60 minutes; log: " + buildLog);
            }
            List<String> lines = new String(out, StandardCharsets.UTF_8)
                    .lines()
                    .filter(l -> !l.isBlank())
                    .toList();
            if (p.exitValue() != 0 || lines.isEmpty()) {
                throw new IllegalStateException(
                        script + " failed (exit " + p.exitValue() + "):\n" + tail(buildLog, 15));
            }
            return Path.of(lines.get(lines.size() - 1).trim());
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + script + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + script, e);
        }
    }

    static String tail(Path file, int lines) {
        try {
            List<String> all = new String(Files.readAllBytes(file), StandardCharsets.UTF_8)
                    .lines()
                    .toList();
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(cannot read " + file + ": " + e.getMessage() + ")";
        }
    }
}
