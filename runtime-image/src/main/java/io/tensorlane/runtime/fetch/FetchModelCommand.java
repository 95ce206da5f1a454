package io.tensorlane.runtime.fetch;

import io.tensorlane.runtime.common.TerminationLog;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code fetch-model}: the init step of a pod whose model comes from a Hugging Face Hub. The operator renders it as
 * {@code tensorlane-runtime fetch-model --source hf://[ORG/]NAME[@REV] --dest DIR}; the token comes from {@value #TOKEN}.
 * A failure ends with one line on stderr, the same line in the termination message (JSON, reason per
 * {@link FetchFailure.Kind}) and the kind's exit code.
 */
@Command(
        name = "fetch-model",
        mixinStandardHelpOptions = true,
        description = {
            "Download a model from a Hugging Face Hub into a directory: the revision pinned to its commit, resumable "
                    + "(DIR/<file>.part), verified (safetensors sizes against their headers, config.json), marked complete with "
                    + "DIR/" + ModelMarker.NAME + " (a second run with the same source and commit returns at once).",
            "Environment: " + FetchModelCommand.TOKEN + " (optional token, sent as a Bearer token, never printed), "
                    + FetchModelCommand.ENDPOINT + " (when --endpoint is not given).",
            "Exit codes: 0 done, 2 bad arguments or source, 4 model/revision/file not found, 5 unauthorized or forbidden "
                    + "(set the token Secret), 6 verification failed, 7 I/O or network error after retries."
        })
public final class FetchModelCommand implements Callable<Integer> {
    public static final String TOKEN = "HF_TOKEN";
    public static final String ENDPOINT = "HF_ENDPOINT";
    public static final String DEFAULT_ENDPOINT = "https://huggingface.co";

    @Spec
    CommandSpec spec;

    @Option(
            names = "--source",
            required = true,
            paramLabel = "hf://[ORG/]NAME[@REV]",
            description = "The model (revision: " + "branch, tag or commit; default main).")
    String source;

    @Option(names = "--dest", required = true, paramLabel = "DIR", description = "The model directory to fill.")
    Path dest;

    @Option(
            names = "--endpoint",
            paramLabel = "URL",
            description = "The Hub (default: " + ENDPOINT + ", else " + DEFAULT_ENDPOINT + ").")
    String endpoint;

    @Option(
            names = "--files",
            split = ",",
            paramLabel = "GLOB",
            description = "Files to fetch (default: the engine's: "
                    + "config, generation config, tokenizer files, the safetensors index and *.safetensors).")
    List<String> files = new ArrayList<>();

    @Option(
            names = "--retries",
            defaultValue = "5",
            description = "Further attempts after a server error or a broken "
                    + "connection, with exponential backoff (default ${DEFAULT-VALUE}).")
    int retries;

    @Option(
            names = "--timeout-seconds",
            defaultValue = "60",
            description = "Connect/response timeout, and how long a "
                    + "transfer may send nothing before it is retried (default ${DEFAULT-VALUE}).")
    int timeoutSeconds;

    @Option(
            names = "--progress-seconds",
            defaultValue = "5",
            description = "Progress line interval (default ${DEFAULT-VALUE}).")
    double progressSeconds;

    @Option(names = "--retry-backoff-ms", defaultValue = "1000", hidden = true)
    long backoffMs;

    /** The environment (tests replace it). */
    Map<String, String> env = System.getenv();

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            try {
                new ModelFetcher(options(), out).run();
            } catch (RuntimeException e) {
                throw new FetchFailure(FetchFailure.Kind.IO, "unexpected error: " + scrub(String.valueOf(e)));
            }
            return 0;
        } catch (FetchFailure f) {
            out.flush();
            err.println("fetch-model: " + f.getMessage());
            TerminationLog.writeFile(TerminationLog.path(env), f.termination().toJson(), err);
            err.flush();
            return f.kind().exitCode;
        }
    }

    /** {@code text} with the token (if any) blanked out: for messages of exceptions this code did not write. */
    String scrub(String text) {
        String token = env.get(TOKEN);
        return token == null || token.isBlank() ? text : text.replace(token.strip(), "***");
    }

    ModelFetcher.Options options() throws FetchFailure {
        HubSource src = HubSource.parse(source);
        String ep = endpoint != null ? endpoint : env.getOrDefault(ENDPOINT, "");
        ep = ep.isBlank() ? DEFAULT_ENDPOINT : ep.trim();
        URI uri;
        try {
            uri = URI.create(ep);
        } catch (IllegalArgumentException e) {
            throw new FetchFailure(FetchFailure.Kind.USAGE, "--endpoint '" + ep + "' is not a URL");
        }
        if (uri.getHost() == null
                || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
                || uri.getQuery() != null) {
            throw new FetchFailure(
                    FetchFailure.Kind.USAGE, "--endpoint '" + ep + "' is not an http(s)://host[:port][/path] URL");
        }
        if (retries < 0 || timeoutSeconds < 1 || progressSeconds < 0 || backoffMs < 0) {
            throw new FetchFailure(
                    FetchFailure.Kind.USAGE, "--retries must be >= 0, --timeout-seconds >= 1, --progress-seconds >= 0");
        }
        String token = env.get(TOKEN);
        token = token == null || token.isBlank() ? null : token.strip();
        if (token != null && !token.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            throw new FetchFailure(
                    FetchFailure.Kind.USAGE,
                    TOKEN + " holds characters a token cannot have (spaces, line breaks "
                            + "or non-ASCII inside it): check the model's token Secret");
        }
        Duration timeout = Duration.ofSeconds(timeoutSeconds);
        return new ModelFetcher.Options(
                src,
                source,
                dest.toAbsolutePath().normalize(),
                uri,
                token,
                FileSelection.of(files),
                retries,
                Duration.ofMillis(backoffMs),
                timeout,
                timeout,
                Duration.ofMillis((long) (progressSeconds * 1000)));
    }
}
