package io.tensorlane.runtime.cli;

import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.loadgen.Endpoint;
import io.tensorlane.runtime.loadgen.LevelSummary;
import io.tensorlane.runtime.loadgen.LoadRunner;
import io.tensorlane.runtime.loadgen.LoadgenConfig;
import io.tensorlane.runtime.loadgen.LoadgenReport;
import io.tensorlane.runtime.loadgen.OpenAiClient;
import io.tensorlane.runtime.loadgen.PrefixWorkload;
import io.tensorlane.runtime.loadgen.RequestRecord;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code loadgen}: drives an OpenAI-compatible server (streamed completions or chat completions) in the manner of
 * vLLM's {@code benchmark_serving.py} and reports TTFT, TPOT, ITL, E2E latency and throughput per level. No GPU needed.
 */
@Command(
        name = "loadgen",
        mixinStandardHelpOptions = true,
        description = {
            "Load generator for an OpenAI-compatible server (POST /v1/completions or /v1/chat/completions, streamed).",
            "Closed loop (--concurrency 1,8,32: N clients, each sends its next request when the previous finished) or open loop "
                    + "(--request-rate R: Poisson arrivals, inf = all at once, optionally --max-concurrency). Per level: completed/failed, "
                    + "throughputs and TTFT/TPOT/ITL/E2E mean, median, p90, p99 (ms), printed and written to --out-dir as loadgen.csv, "
                    + "loadgen-requests.csv, loadgen.json and loadgen.svg.",
            "Exit codes: 0 done, 1 a level had no successful request, 2 bad options, 5 the warmup request failed."
        })
public final class LoadgenCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--url",
            required = true,
            paramLabel = "URL",
            description = "Server base URL, e.g. http://127.0.0.1:8080 (a trailing /v1 is fine).")
    String url;

    @Option(names = "--model", required = true, paramLabel = "NAME", description = "Model name sent in the requests.")
    String model;

    @Option(
            names = "--endpoint",
            defaultValue = "completions",
            paramLabel = "completions|chat",
            description = "completions (/v1/completions) or chat (/v1/chat/completions). Default: ${DEFAULT-VALUE}.")
    String endpoint;

    @Option(names = "--concurrency", paramLabel = "N[,N...]", description = "Closed-loop levels, e.g. 1,8,32,128.")
    String concurrency;

    @Option(
            names = "--request-rate",
            paramLabel = "R[,R...]",
            description = "Open-loop levels in requests/s (Poisson arrivals); inf: all at once.")
    String requestRate;

    @Option(
            names = "--max-concurrency",
            defaultValue = "0",
            paramLabel = "N",
            description = "Open loop: at most N requests in flight (0: unbounded).")
    int maxConcurrency;

    @Option(
            names = "--num-requests",
            paramLabel = "N",
            description = "Requests per level (default 100; with --duration: unlimited unless given).")
    Integer numRequests;

    @Option(
            names = "--duration",
            paramLabel = "TIME",
            description =
                    "Per level, stop sending new requests after this long (e.g. 60s, 2m, 500ms; plain number: seconds).")
    String duration;

    @Option(
            names = "--input-len",
            defaultValue = "512",
            paramLabel = "TOKENS",
            description = "Prompt length. Default: ${DEFAULT-VALUE}.")
    int inputLen;

    @Option(
            names = "--input-len-range",
            defaultValue = "0",
            paramLabel = "R",
            description = "Prompt lengths uniform in input-len·[1−R, 1+R]. Default: ${DEFAULT-VALUE}.")
    double inputLenRange;

    @Option(
            names = "--output-len",
            defaultValue = "128",
            paramLabel = "TOKENS",
            description = "max_tokens per request. Default: ${DEFAULT-VALUE}.")
    int outputLen;

    @Option(
            names = "--output-len-range",
            defaultValue = "0",
            paramLabel = "R",
            description = "max_tokens uniform in output-len·[1−R, 1+R]. Default: ${DEFAULT-VALUE}.")
    double outputLenRange;

    @Option(
            names = "--token-ids",
            description =
                    "Send prompts as lists of random token ids (completions only; exact prompt length) instead of random words.")
    boolean tokenIds;

    @Option(
            names = "--vocab-size",
            defaultValue = "32000",
            paramLabel = "N",
            description = "With --token-ids: ids are drawn below this. Default: ${DEFAULT-VALUE}.")
    int vocabSize;

    @Option(names = "--ignore-eos", description = "Send ignore_eos: true so that every output reaches max_tokens.")
    boolean ignoreEos;

    @Option(
            names = "--seed",
            defaultValue = "0",
            paramLabel = "N",
            description = "Seed of prompts, lengths and arrivals. Default: ${DEFAULT-VALUE}.")
    long seed;

    @Option(
            names = "--timeout",
            defaultValue = "300s",
            paramLabel = "TIME",
            description = "Per request, from send to end of stream. Default: ${DEFAULT-VALUE}.")
    String timeout;

    @Option(
            names = "--warmup",
            defaultValue = "1",
            paramLabel = "N",
            description =
                    "Unrecorded requests before the first level; a failure stops the run. Default: ${DEFAULT-VALUE}.")
    int warmup;

    @Option(
            names = "--workload",
            defaultValue = "random",
            paramLabel = "random|shared-prompt|multi-turn",
            description = "random: vLLM's random prompts; shared-prompt: one long system prompt (--system-prompt-len "
                    + "words) before every request's own question (--input-len words); multi-turn: --num-requests "
                    + "conversations of --turns turns, --concurrency at a time, each turn resending the system prompt "
                    + "and the history with the server's answers. Default: ${DEFAULT-VALUE}.")
    String workload;

    @Option(
            names = "--system-prompt-len",
            defaultValue = "2000",
            paramLabel = "WORDS",
            description = "Shared system prompt of the shared-prompt and multi-turn workloads, in words (about one "
                    + "token each). Default: ${DEFAULT-VALUE}.")
    int systemPromptLen;

    @Option(
            names = "--turns",
            defaultValue = "4",
            paramLabel = "N",
            description = "Turns per conversation (multi-turn). Default: ${DEFAULT-VALUE}.")
    int turns;

    @Option(
            names = "--out-dir",
            defaultValue = "loadgen-out",
            paramLabel = "DIR",
            description = "Where the CSV, JSON and SVG files go. Default: ${DEFAULT-VALUE}.")
    Path outDir;

    /** Builds the configuration; {@link IllegalArgumentException} lists every problem, one per line. */
    LoadgenConfig config() {
        List<String> problems = new ArrayList<>();
        URI base = null;
        try {
            base = URI.create(url.trim());
        } catch (IllegalArgumentException e) {
            problems.add("--url is not a URL: '" + url + "'");
        }
        Endpoint ep = Endpoint.COMPLETIONS;
        List<Integer> levels = List.of();
        List<Double> rates = List.of();
        Duration d = null;
        Duration t = null;
        PrefixWorkload.Mode mode = PrefixWorkload.Mode.RANDOM;
        try {
            ep = Endpoint.parse(endpoint);
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
        }
        try {
            mode = PrefixWorkload.Mode.parse(workload);
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
        }
        try {
            levels = concurrency == null ? List.of() : LoadgenConfig.parseInts(concurrency, "--concurrency");
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
        }
        try {
            rates = requestRate == null ? List.of() : LoadgenConfig.parseRates(requestRate);
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
        }
        try {
            d = duration == null ? null : parseDuration(duration, "--duration");
            t = parseDuration(timeout, "--timeout");
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(String.join("\n", problems));
        }
        int n = numRequests != null ? numRequests : d != null ? 0 : 100;
        return new LoadgenConfig(
                        base,
                        model,
                        ep,
                        levels,
                        rates,
                        maxConcurrency,
                        n,
                        d,
                        inputLen,
                        inputLenRange,
                        outputLen,
                        outputLenRange,
                        tokenIds,
                        vocabSize,
                        ignoreEos,
                        seed,
                        t,
                        warmup,
                        outDir,
                        new PrefixWorkload(mode, systemPromptLen, turns))
                .validated();
    }

    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h)?");

    /** {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h}, or a plain number of seconds. */
    static Duration parseDuration(String s, String option) {
        Matcher m = DURATION.matcher(s.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException(option + " takes a time such as 500ms, 30s, 2m or 1h, not '" + s + "'");
        }
        double v = Double.parseDouble(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        double millis = v
                * switch (unit) {
                    case "ms" -> 1;
                    case "m" -> 60_000;
                    case "h" -> 3_600_000;
                    default -> 1000;
                };
        return Duration.ofNanos((long) (millis * 1e6));
    }

    @Override
    public Integer call() throws IOException, InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        LoadgenConfig c;
        try {
            c = config();
        } catch (IllegalArgumentException e) {
            for (String line : e.getMessage().split("\n")) {
                err.println("error: " + line);
            }
            err.flush();
            return ExitCodes.USAGE;
        }
        OpenAiClient client = new OpenAiClient(c);
        LoadRunner runner = new LoadRunner(c, client);
        out.printf(
                Locale.ROOT,
                "loadgen: %s, model %s, %s, %s, workload %s%n",
                client.uri(),
                c.model(),
                c.openLoop() ? "open loop" : "closed loop",
                c.numRequests() > 0
                        ? c.numRequests()
                                + (mode(c) == PrefixWorkload.Mode.MULTI_TURN
                                        ? " conversations of " + c.prefix().turns() + " turns"
                                        : " requests")
                                + " per level"
                        : "for " + duration + " per level",
                c.prefix().mode().label()
                        + (mode(c) == PrefixWorkload.Mode.RANDOM
                                ? ""
                                : " (system prompt of " + c.prefix().systemPromptLen() + " words)"));
        out.flush();
        RequestRecord failedWarmup = runner.warmup(c.warmup());
        if (failedWarmup != null) {
            err.println("error: warmup request to " + client.uri() + " failed: " + failedWarmup.error());
            err.flush();
            return ExitCodes.RUNTIME;
        }
        List<LevelSummary> summaries = new ArrayList<>();
        List<RequestRecord> all = new ArrayList<>();
        for (LoadgenConfig.Level level : c.levels()) {
            LoadRunner.LevelResult r = runner.run(level, null);
            LevelSummary s = r.summary();
            summaries.add(s);
            all.addAll(r.records());
            out.printf(
                    Locale.ROOT,
                    "%s: %d ok, %d failed in %.2f s (%.1f output tok/s)%n",
                    s.label(),
                    s.completed(),
                    s.failed(),
                    s.durationS(),
                    s.outputThroughput());
            out.flush();
        }
        out.println();
        out.print(LoadgenReport.table(summaries));
        Files.createDirectories(c.outDir());
        write(c.outDir().resolve("loadgen.csv"), LoadgenReport.levelCsv(summaries));
        write(c.outDir().resolve("loadgen-requests.csv"), LoadgenReport.requestCsv(all));
        write(c.outDir().resolve("loadgen.json"), LoadgenReport.json(c, summaries));
        write(
                c.outDir().resolve("loadgen.svg"),
                LoadgenReport.svg(
                        summaries,
                        "loadgen: " + c.model() + " (" + c.endpoint().label() + ", in " + c.inputLen() + ", out "
                                + c.outputLen() + ")"));
        out.println("wrote loadgen.csv, loadgen-requests.csv, loadgen.json, loadgen.svg to " + c.outDir());
        out.flush();
        return summaries.stream().anyMatch(s -> s.completed() == 0) ? ExitCodes.CHECK_FAILED : ExitCodes.OK;
    }

    private static PrefixWorkload.Mode mode(LoadgenConfig c) {
        return c.prefix().mode();
    }

    private static void write(Path p, String text) throws IOException {
        Files.writeString(p, text, StandardCharsets.UTF_8);
    }
}
