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
 * The 8B benchmark's scripts (run only on the GPU machine) at least parse: the Python ones compile (without writing
 * __pycache__ into the tree) and the shell script passes {@code bash -n}. Skipped where python3 or bash is missing.
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
        for (String f : List.of("bench_make_8b.py", "bench_transformers.py", "bench_summary.py")) {
            Path p = SCRIPTS.resolve("oracle").resolve(f);
            assertThat(p).exists();
            cmd.add(p.toString());
        }
        assertThat(run(cmd)).contains("compiled 3");
    }

    @Test
    void shellScriptParses() throws Exception {
        assumeTrue(available("bash"), "bash not found");
        Path sh = SCRIPTS.resolve("device-model-bench.sh");
        assertThat(Files.readString(sh)).contains("BUDGET").contains("bench-model");
        run(List.of("bash", "-n", sh.toString()));
    }
}
