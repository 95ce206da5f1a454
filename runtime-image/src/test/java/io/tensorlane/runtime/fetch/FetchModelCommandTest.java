package io.tensorlane.runtime.fetch;

import static io.tensorlane.runtime.fetch.FetchFixture.ID;
import static io.tensorlane.runtime.fetch.FetchFixture.SHA;
import static io.tensorlane.runtime.fetch.FetchFixture.TOKEN;
import static io.tensorlane.runtime.fetch.FetchFixture.shard;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.runtime.fetch.FetchFixture.Result;
import io.tensorlane.testkit.hub.LocalHub;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code fetch-model} against a loopback Hub: the whole download, restarts, resumes and the token's whereabouts. */
class FetchModelCommandTest {
    @TempDir
    Path tmp;

    LocalHub hub;
    Path dest;

    @BeforeEach
    void start() throws IOException {
        hub = new LocalHub();
        FetchFixture.fill(hub, Files.createDirectories(tmp.resolve("scratch")));
        dest = tmp.resolve("model");
    }

    @AfterEach
    void stop() {
        hub.close();
    }

    private Result fetch(String source, String... more) throws IOException {
        List<String> args = new ArrayList<>(List.of(
                "fetch-model",
                "--source",
                source,
                "--dest",
                dest.toString(),
                "--endpoint",
                hub.endpoint(),
                "--retry-backoff-ms",
                "5",
                "--progress-seconds",
                "0"));
        args.addAll(List.of(more));
        Result r = FetchFixture.run(tmp, Map.of("HF_TOKEN", TOKEN), args.toArray(String[]::new));
        assertThat(r.all()).doesNotContain(TOKEN);
        return r;
    }

    private void assertComplete() throws IOException {
        for (String f : FetchFixture.engineFiles()) {
            assertThat(dest.resolve(f))
                    .as(f)
                    .hasBinaryContent(FetchFixture.files(hub).get(f));
        }
        try (var files = Files.list(dest)) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .containsExactlyInAnyOrderElementsOf(concat(FetchFixture.engineFiles(), ModelMarker.NAME));
        }
    }

    private static List<String> concat(List<String> a, String b) {
        List<String> l = new ArrayList<>(a);
        l.add(b);
        return l;
    }

    @Test
    void downloadsTheEngineFilesVerifiesAndWritesTheMarker() throws IOException {
        FetchFixture.requireToken(hub, TOKEN);
        hub.redirectAllFiles = true;
        Result r = fetch("hf://" + ID);
        assertThat(r.code()).as(r.err()).isZero();
        assertComplete();
        assertThat(dest.resolve("README.md")).doesNotExist();
        assertThat(dest.resolve("original")).doesNotExist();

        JsonNode m = new ObjectMapper().readTree(dest.resolve(ModelMarker.NAME).toFile());
        assertThat(m.get("source").asText()).isEqualTo("hf://" + ID);
        assertThat(m.get("id").asText()).isEqualTo(ID);
        assertThat(m.get("revision").asText()).isEqualTo(SHA);
        assertThat(Instant.parse(m.get("completedAt").asText()))
                .isBefore(Instant.now().plusSeconds(1));
        assertThat(m.get("files")).hasSize(7);
        for (JsonNode f : m.get("files")) {
            assertThat(f.get("size").asLong())
                    .isEqualTo(FetchFixture.files(hub).get(f.get("name").asText()).length);
        }

        assertThat(r.out())
                .contains("main resolved to commit " + SHA)
                .contains("(with a token)")
                .containsPattern("fetch-model: " + shard(1)
                        + " [0-9.]+ KiB/[0-9.]+ KiB \\| total [0-9.]+ KiB/[0-9.]+ KiB \\(\\d+%\\) \\| [0-9.]+ MB/s")
                .contains("fetch-model: done " + shard(2))
                .contains("fetch-model: complete: " + ID + " at " + SHA + ", 7 file(s)");
        // files were fetched at the pinned commit; the token went to the Hub only, never to the host a redirect named
        assertThat(hub.fileRequests()).allSatisfy(s -> assertThat(s.path()).contains("/resolve/" + SHA + "/"));
        assertThat(hub.requests())
                .filteredOn(LocalHub.Request::cdn)
                .hasSize(7)
                .allSatisfy(s -> assertThat(s.authorization()).isNull());
        assertThat(hub.requests())
                .filteredOn(s -> !s.cdn())
                .hasSize(8)
                .allSatisfy(s -> assertThat(s.authorization()).isEqualTo("Bearer " + TOKEN));
    }

    @Test
    void aSecondRunWithTheSameCommitReturnsAtOnce() throws IOException {
        assertThat(fetch("hf://" + ID).code()).isZero();
        hub.clearRequests();
        Result pinned = fetch("hf://" + ID + "@" + SHA);
        assertThat(pinned.code()).isZero();
        assertThat(pinned.out()).contains("already complete");
        assertThat(hub.requests()).isEmpty();

        Result branch = fetch("hf://" + ID + "@main");
        assertThat(branch.code()).isZero();
        assertThat(hub.apiRequests()).hasSize(1);
        assertThat(hub.fileRequests()).isEmpty();

        // a file that changed on disk is fetched again, and only that one
        try (RandomAccessFile f = new RandomAccessFile(dest.resolve(shard(2)).toFile(), "rw")) {
            f.setLength(100);
        }
        hub.clearRequests();
        Result again = fetch("hf://" + ID);
        assertThat(again.code()).as(again.err()).isZero();
        assertThat(hub.fileRequests())
                .extracting(LocalHub.Request::path)
                .containsExactly("/" + ID + "/resolve/" + SHA + "/" + shard(2));
        assertComplete();
    }

    @Test
    void aCutConnectionIsResumedWithARangeRequest() throws IOException {
        hub.cuts.set(1);
        hub.cutAt = 50_000;
        Result r = fetch("hf://" + ID);
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("retry 1 of 5");
        assertThat(resumedAt(shard(1))).isBetween(1L, 50_000L);
        assertComplete();
    }

    @Test
    void anInterruptedDownloadResumesInTheNextRunAndServeRefusesItMeanwhile() throws IOException {
        hub.cuts.set(1);
        hub.cutAt = 70_000;
        Result first = fetch("hf://" + ID, "--retries", "0");
        assertThat(first.code()).isEqualTo(7);
        assertThat(first.err()).startsWith("fetch-model: network error: " + shard(1) + ":");
        // what arrived before the connection dropped (at most what the server sent)
        long part = Files.size(dest.resolve(shard(1) + ".part"));
        assertThat(part).isBetween(1L, 70_000L);
        assertThat(dest.resolve(ModelMarker.IN_PROGRESS)).exists();
        assertThat(dest.resolve(ModelMarker.NAME)).doesNotExist();

        Result serve = FetchFixture.run(tmp, Map.of(), "serve", "--model", dest.toString());
        assertThat(serve.code()).isEqualTo(2);
        assertThat(serve.err()).contains("holds an incomplete download").contains("fetch-model has not finished");

        hub.clearRequests();
        Result second = fetch("hf://" + ID);
        assertThat(second.code()).as(second.err()).isZero();
        assertThat(second.out()).contains("done " + shard(1) + " (192.28 KiB, resumed at ");
        assertThat(hub.fileRequests())
                .filteredOn(s -> s.path().endsWith(shard(1)))
                .extracting(LocalHub.Request::range)
                .containsExactly("bytes=" + part + "-");
        // files completed before the cut are not fetched again
        assertThat(hub.fileRequests()).extracting(LocalHub.Request::path).noneMatch(p -> p.endsWith("/config.json"));
        assertComplete();
    }

    @Test
    void serveRefusesShardsWhoseSizesDoNotMatch() throws IOException {
        assertThat(fetch("hf://" + ID).code()).isZero();
        Files.write(dest.resolve(shard(2)), new byte[] {0, 0, 0}, java.nio.file.StandardOpenOption.APPEND);
        Result withMarker = FetchFixture.run(tmp, Map.of(), "serve", "--model", dest.toString());
        assertThat(withMarker.code()).isEqualTo(2);
        assertThat(withMarker.err())
                .contains("does not match its download record " + ModelMarker.NAME + ": " + shard(2)
                        + " is 196899 bytes, the download recorded 196896");
        // without the record, the checkpoint's own check (before any GPU work) names the file and both sizes
        Files.delete(dest.resolve(ModelMarker.NAME));
        Result plain = FetchFixture.run(tmp, Map.of(), "serve", "--model", dest.toString(), "--memory-fraction", "0.9");
        assertThat(plain.code()).isEqualTo(2);
        assertThat(plain.err())
                .contains(shard(2) + ": 196899 bytes on disk but its header declares 196896")
                .doesNotContain("CUDA");
    }

    @Test
    void aServerThatIgnoresRangeSendsTheWholeFileAgain() throws IOException {
        hub.cuts.set(1);
        hub.cutAt = 50_000;
        hub.ignoreRange = true;
        Result r = fetch("hf://" + ID);
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("ignored the Range request");
        assertComplete();
    }

    @Test
    void aStalledTransferIsCutAndResumed() throws IOException {
        hub.stalls.set(1);
        hub.cutAt = 30_000;
        hub.stallMillis = 4_000;
        Result r = fetch("hf://" + ID, "--timeout-seconds", "1");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("no data for 1 s");
        assertThat(resumedAt(shard(1))).isBetween(1L, 30_000L);
        assertComplete();
    }

    /** The start of the one Range request made for {@code file}. */
    private long resumedAt(String file) {
        List<String> ranges = hub.fileRequests().stream()
                .filter(s -> s.path().endsWith("/" + file) && s.range() != null)
                .map(LocalHub.Request::range)
                .toList();
        assertThat(ranges).hasSize(1);
        assertThat(ranges.get(0)).matches("bytes=\\d+-");
        return Long.parseLong(ranges.get(0).replaceAll("\\D", ""));
    }

    @Test
    void filesCanBeChosen() throws IOException {
        Result r = fetch("hf://" + ID, "--files", "config.json,original/*.safetensors");
        assertThat(r.code()).as(r.err()).isZero();
        try (var files = Files.walk(dest)) {
            assertThat(files.filter(Files::isRegularFile)
                            .map(p -> dest.relativize(p).toString()))
                    .containsExactlyInAnyOrder("config.json", "original/consolidated.safetensors", ModelMarker.NAME);
        }
    }
}
