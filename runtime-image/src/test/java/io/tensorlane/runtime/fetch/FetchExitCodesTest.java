package io.tensorlane.runtime.fetch;

import static io.tensorlane.runtime.fetch.FetchFixture.ID;
import static io.tensorlane.runtime.fetch.FetchFixture.SHA;
import static io.tensorlane.runtime.fetch.FetchFixture.TOKEN;
import static io.tensorlane.runtime.fetch.FetchFixture.shard;
import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.contract.TerminationMessage;
import io.tensorlane.runtime.fetch.FetchFixture.Result;
import io.tensorlane.testkit.hub.LocalHub;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every way fetch-model ends, one row each: the exit code, the one-line message on stderr, the same message in the
 * termination message (with its reason), and the token in none of the output.
 */
class FetchExitCodesTest {
    @TempDir
    Path tmp;

    LocalHub hub;

    @BeforeEach
    void start() throws IOException {
        hub = new LocalHub();
        FetchFixture.fill(hub, Files.createDirectories(tmp.resolve("scratch")));
    }

    @AfterEach
    void stop() {
        hub.close();
    }

    /** A row: what to do to the hub, the source, extra arguments, whether HF_TOKEN is set, the outcome. */
    record Row(
            String name,
            Consumer<LocalHub> setup,
            String source,
            List<String> args,
            String token,
            int code,
            String fragment) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static Row row(
            String name,
            Consumer<LocalHub> setup,
            String source,
            String token,
            int code,
            String fragment,
            String... args) {
        return new Row(name, setup, source, Arrays.asList(args), token, code, fragment);
    }

    static Stream<Row> rows() {
        Consumer<LocalHub> none = h -> {};
        String src = "hf://" + ID;
        return Stream.of(
                row("ok", none, src, TOKEN, 0, null),
                row("ok at a commit", none, src + "@" + SHA, null, 0, null),
                row("ok after two server errors", h -> h.failures.set(2), src, TOKEN, 0, null),
                row(
                        "ok with the token the hub requires",
                        h -> FetchFixture.requireToken(h, TOKEN),
                        src,
                        TOKEN,
                        0,
                        null),
                row("not an hf uri", none, "s3://acme/tiny", TOKEN, 2, "expected hf://ORG/NAME[@REVISION]"),
                row("three path parts", none, "hf://acme/tiny/x", TOKEN, 2, "expected [ORG/]NAME"),
                row("empty revision", none, src + "@", TOKEN, 2, "the revision '' is not a branch, tag or commit name"),
                row(
                        "bad name",
                        none,
                        "hf://acme/tiny llama",
                        TOKEN,
                        2,
                        "'tiny llama' is not a valid organization or model name"),
                row(
                        "bad endpoint",
                        none,
                        src,
                        TOKEN,
                        2,
                        "--endpoint 'ftp://x' is not an http(s)",
                        "--endpoint",
                        "ftp://x"),
                row("bad glob", none, src, TOKEN, 2, "--files: '../x' is not a file name pattern", "--files", "../x"),
                row(
                        "token with a line break inside",
                        none,
                        src,
                        TOKEN + "\nx",
                        2,
                        "HF_TOKEN holds characters a token cannot have"),
                row(
                        "token with a trailing line break (a Secret made from a file)",
                        h -> FetchFixture.requireToken(h, TOKEN),
                        src,
                        TOKEN + "\n",
                        0,
                        null),
                row("unknown model", none, "hf://acme/other", TOKEN, 4, "model acme/other (revision 'main') at http"),
                row("unknown revision", none, src + "@v9", TOKEN, 4, "HTTP 404, the revision does not exist"),
                row(
                        "nothing matches --files",
                        none,
                        src,
                        TOKEN,
                        4,
                        "has no file matching [*.gguf]",
                        "--files",
                        "*.gguf"),
                row(
                        "no safetensors",
                        h -> {
                            FetchFixture.files(h).remove(shard(1));
                            FetchFixture.files(h).remove(shard(2));
                        },
                        src,
                        TOKEN,
                        4,
                        "has no *.safetensors file"),
                row(
                        "token required, none given",
                        h -> FetchFixture.requireToken(h, TOKEN),
                        src,
                        null,
                        5,
                        "HTTP 401; no token was given: set the model's token Secret"),
                row(
                        "gated files, no token",
                        h -> {
                            FetchFixture.requireToken(h, TOKEN);
                            h.gatedFilesOnly = true;
                        },
                        src,
                        null,
                        5,
                        "not allowed to read file config.json of " + ID + " at commit " + SHA),
                row(
                        "token refused",
                        h -> FetchFixture.requireToken(h, TOKEN + "x"),
                        src,
                        TOKEN,
                        5,
                        "the token in HF_TOKEN was refused: check the model's token Secret"),
                row(
                        "forbidden",
                        h -> {
                            h.failures.set(1);
                            h.failStatus = 403;
                        },
                        src,
                        TOKEN,
                        5,
                        "HTTP 403"),
                row(
                        "private repository",
                        h -> {
                            h.failures.set(1);
                            h.failStatus = 401;
                            h.failErrorCode = "RepoNotFound";
                        },
                        src,
                        TOKEN,
                        5,
                        "the Hub says the repository does not exist or is private"),
                row(
                        "truncated safetensors",
                        h -> FetchFixture.files(h)
                                .put(
                                        shard(2),
                                        Arrays.copyOf(FetchFixture.files(h).get(shard(2)), 150_000)),
                        src,
                        TOKEN,
                        6,
                        "verification failed: " + shard(2) + ": 150000 bytes on disk but its header declares 196896"),
                row(
                        "trailing bytes",
                        h -> FetchFixture.files(h)
                                .put(
                                        shard(1),
                                        Arrays.copyOf(FetchFixture.files(h).get(shard(1)), 196_900)),
                        src,
                        TOKEN,
                        6,
                        "verification failed: " + shard(1) + ": 196900 bytes on disk but its header declares 196896"),
                row(
                        "served shorter than listed",
                        h -> {
                            h.listedSizes.put(shard(1), 200_000L);
                        },
                        src,
                        TOKEN,
                        6,
                        "verification failed: " + shard(1) + " is 196896 bytes, the Hub lists 200000"),
                row(
                        "config.json is not JSON",
                        h -> FetchFixture.files(h).put("config.json", "{\"architectures\": [".getBytes()),
                        src,
                        TOKEN,
                        6,
                        "verification failed: config.json is not valid JSON"),
                row(
                        "index names a shard not fetched",
                        none,
                        src,
                        TOKEN,
                        6,
                        "model.safetensors.index.json names " + shard(2) + ", which was not downloaded",
                        "--files",
                        "config.json,model.safetensors.index.json,model-00001-*"),
                row(
                        "server errors",
                        h -> h.failures.set(100),
                        src,
                        TOKEN,
                        7,
                        "HTTP 500 (after 2 retries)",
                        "--retries",
                        "2"),
                row(
                        "nothing listens",
                        h -> h.close(),
                        src,
                        TOKEN,
                        7,
                        "network error: the revision of acme/tiny-llama: cannot connect to http://127.0.0.1:"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void endsWithTheRightCodeAndMessage(Row row) throws IOException {
        row.setup().accept(hub);
        Path dest = tmp.resolve("model");
        List<String> args = new ArrayList<>(
                List.of("fetch-model", "--source", row.source(), "--dest", dest.toString(), "--retry-backoff-ms", "1"));
        if (!row.args().contains("--retries")) {
            args.addAll(List.of("--retries", "3"));
        }
        if (!row.args().contains("--endpoint")) {
            args.addAll(List.of("--endpoint", hub.endpoint()));
        }
        args.addAll(row.args());
        Map<String, String> env = new HashMap<>();
        if (row.token() != null) {
            env.put("HF_TOKEN", row.token());
        }
        Result r = FetchFixture.run(tmp, env, args.toArray(String[]::new));

        assertThat(r.all()).doesNotContain(TOKEN);
        assertThat(r.code()).as(r.err()).isEqualTo(row.code());
        if (row.code() == 0) {
            assertThat(r.err()).isEmpty();
            assertThat(r.termination()).isEmpty();
            assertThat(dest.resolve(ModelMarker.NAME)).exists();
            return;
        }
        assertThat(r.err().lines()).hasSize(1);
        assertThat(r.err()).startsWith("fetch-model: ").contains(row.fragment());
        TerminationMessage tm = TerminationMessage.parse(r.termination());
        assertThat(tm.phase()).isEqualTo(FetchFailure.PHASE);
        assertThat(tm.reason())
                .isEqualTo(Arrays.stream(FetchFailure.Kind.values())
                        .filter(k -> k.exitCode == row.code())
                        .findFirst()
                        .orElseThrow()
                        .reason);
        assertThat("fetch-model: " + tm.message()).isEqualTo(r.err().strip());
        assertThat(dest.resolve(ModelMarker.NAME)).doesNotExist();
    }
}
