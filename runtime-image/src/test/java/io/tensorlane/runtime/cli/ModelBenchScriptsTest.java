package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The GPU machine's scripts (run only there) at least parse: every Python script under scripts/oracle compiles (without
 * writing __pycache__ into the tree) and every scripts/*.sh passes {@code bash -n}. Skipped where python3 or bash is
 * missing.
 */
class ModelBenchScriptsTest {
    private static final Path SCRIPTS = Path.of("scripts");

    private static String run(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        boolean done = p.waitFor(60, TimeUnit.SECONDS);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(done).as("%s finished", cmd).isTrue();
        assertThat(p.exitValue()).as("%s: %s", cmd, out).isZero();
        return out;
    }

    private static boolean available(String tool) {
        try {
            Process p = new ProcessBuilder(tool, "--version")
                    .redirectErrorStream(true)
                    .start();
            p.getInputStream().readAllBytes();
            return p.waitFor(20, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    @Test
    void pythonScriptsCompile() throws Exception {
        assumeTrue(available("python3"), "python3 not found");
        List<String> cmd = new ArrayList<>(
                List.of(
                        "python3",
                        "-c",
                        "import sys\nfor f in sys.argv[1:]:\n    compile(open(f, encoding='utf-8').read(), f, 'exec')\nprint('compiled', len(sys.argv) - 1)"));
        List<Path> scripts = files(SCRIPTS.resolve("oracle"), ".py");
        assertThat(scripts)
                .extracting(p -> p.getFileName().toString())
                .contains("bench_make_8b.py", "bench_transformers.py", "bench_summary.py", "make_models.py");
        scripts.forEach(p -> cmd.add(p.toString()));
        assertThat(run(cmd)).contains("compiled " + scripts.size());
    }

    @Test
    void shellScriptsParse() throws Exception {
        assumeTrue(available("bash"), "bash not found");
        List<Path> scripts = files(SCRIPTS, ".sh");
        assertThat(scripts)
                .extracting(p -> p.getFileName().toString())
                .contains("device-model-bench.sh", "device-models.sh", "device-sanitize.sh", "device-prepare.sh");
        for (Path sh : scripts) {
            run(List.of("bash", "-n", sh.toString()));
        }
        assertThat(Files.readString(SCRIPTS.resolve("device-model-bench.sh")))
                .contains("BUDGET")
                .contains("bench-model");
    }

    private static List<Path> files(Path dir, String suffix) throws IOException {
        try (var s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(suffix))
                    .sorted()
                    .toList();
        }
    }
}
