package io.tensorlane.runtime.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.modelfacts.ModelDirectory;
import io.tensorlane.modelfacts.ModelFactsException;
import io.tensorlane.modelfacts.UnsupportedArchitectureException;
import io.tensorlane.runtime.common.ExitCodes;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * What the operator's inspection Job runs for pvc:// and file:// sources: reads config.json and the safetensors
 * headers of a model directory (no weights) and prints the facts as the JSON of status.model, on stdout and as the
 * container's termination message, which the operator reads. A model that cannot be read exits 2 with
 * {@code <Reason>: <message>} there instead (Reason: InvalidModel or UnsupportedArchitecture).
 */
@Command(
        name = "inspect-model",
        mixinStandardHelpOptions = true,
        description =
                "Print a model directory's facts (architecture, geometry, weight bytes per dtype, digest) as JSON; "
                        + "reads config.json and the safetensors headers only.")
public final class InspectModelCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Spec
    CommandSpec spec;

    @Option(names = "--dir", required = true, description = "The model directory.")
    Path dir;

    @Option(names = "--source", description = "The source URI to record in the facts (e.g. pvc://claim/path).")
    String source;

    @Option(
            names = "--termination-log",
            defaultValue = "/dev/termination-log",
            description = "Also write the result here when the file's directory exists (default: ${DEFAULT-VALUE}).")
    Path terminationLog;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        String result;
        int code;
        try {
            ModelDirectory.Read r = ModelDirectory.read(dir);
            ModelStatus s = r.facts()
                    .toStatus(
                            source,
                            r.digest(),
                            Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
            result = JSON.writeValueAsString(s);
            out.println(result);
            code = ExitCodes.OK;
        } catch (UnsupportedArchitectureException e) {
            result = "UnsupportedArchitecture: " + e.getMessage();
            err.println(result);
            code = ExitCodes.USAGE;
        } catch (ModelFactsException e) {
            result = "InvalidModel: " + e.getMessage();
            err.println(result);
            code = ExitCodes.USAGE;
        }
        out.flush();
        err.flush();
        if (terminationLog != null
                && terminationLog.getParent() != null
                && Files.isDirectory(terminationLog.getParent())) {
            // the kubelet keeps at most 4096 bytes of it; the facts are well under 1 KiB
            Files.writeString(terminationLog, result, StandardCharsets.UTF_8);
        }
        return code;
    }
}
