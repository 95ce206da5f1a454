package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * scripts/device-prepare.sh on a fresh machine (issue #32 item 4): before it builds or changes anything it names every
 * tool it needs that is not on the PATH, and exits 2. Run with a PATH of stand-ins that exit 97 if called, so a broken
 * check cannot reach the real build.
 */
class DevicePrepareScriptTest {
    static final Path SCRIPT = Path.of("scripts/device-prepare.sh");
    static final List<String> TOOLS = List.of("git", "mvn", "jlink", "tar", "xz", "zip", "unzip");

    record Result(int exit, String output) {}

    static Path bash() {
        return Stream.of("/bin/bash", "/usr/bin/bash")
                .map(Path::of)
                .filter(Files::isExecutable)
                .findFirst()
                .orElse(null);
    }

    /** Runs the script with only {@code bin} on the PATH. */
    static Result run(Path bin) throws IOException, InterruptedException {
        Path bash = bash();
        assumeTrue(bash != null, "no bash");
        ProcessBuilder pb = new ProcessBuilder(bash.toString(), SCRIPT.toString()).redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().put("PATH", bin.toString());
        Process p = pb.start();
        boolean done = p.waitFor(30, TimeUnit.SECONDS);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(done).as("device-prepare.sh finished: %s", out).isTrue();
        return new Result(p.exitValue(), out);
    }

    /** A stand-in for each tool: found by {@code command -v}, exits 97 when run. */
    static void standIns(Path bin, List<String> tools) throws IOException {
        for (String t : tools) {
            Path f = bin.resolve(t);
            Files.writeString(f, "#!/bin/sh\nexit 97\n");
            Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
    }

    @Test
    void onAnEmptyPathItNamesEveryToolAndStops(@TempDir Path bin) throws Exception {
        Result r = run(bin);
        assertThat(r.exit()).as(r.output()).isEqualTo(2);
        assertThat(r.output())
                .startsWith("device-prepare: missing " + String.join(" ", TOOLS) + " (Debian: apt-get install");
    }

    static Stream<String> tools() {
        return TOOLS.stream();
    }

    @ParameterizedTest
    @MethodSource("tools")
    void withOneToolMissingItNamesThatOneOnly(String absent, @TempDir Path bin) throws Exception {
        standIns(bin, TOOLS.stream().filter(t -> !t.equals(absent)).toList());
        Result r = run(bin);
        assertThat(r.exit()).as(r.output()).isEqualTo(2);
        assertThat(r.output()).startsWith("device-prepare: missing " + absent + " (");
        assertThat(r.output().lines().count()).as(r.output()).isEqualTo(1);
    }
}
