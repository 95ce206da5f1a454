package io.tensorlane.runtime.fetch;

import static io.tensorlane.runtime.fetch.FetchFixture.ID;
import static io.tensorlane.runtime.fetch.FetchFixture.SHA;
import static io.tensorlane.runtime.fetch.FetchFixture.shard;
import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.contract.FetchProgress;
import io.tensorlane.runtime.fetch.FetchFixture.Result;
import io.tensorlane.testkit.hub.LocalHub;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The machine-readable progress lines fetch-model prints for the operator (which reads them from the init container's
 * log): parsed with the contract's parser, as the operator does, they count up to the whole model and end complete.
 */
class FetchProgressLinesTest {
    @TempDir
    Path tmp;

    LocalHub hub;
    Path dest;
    long totalBytes;

    @BeforeEach
    void start() throws IOException {
        hub = new LocalHub();
        FetchFixture.fill(hub, Files.createDirectories(tmp.resolve("scratch")));
        dest = tmp.resolve("model");
        totalBytes = FetchFixture.engineFiles().stream()
                .mapToLong(f -> FetchFixture.files(hub).get(f).length)
                .sum();
    }

    @AfterEach
    void stop() {
        hub.close();
    }

    private Result fetch(String... more) throws IOException {
        List<String> args = new java.util.ArrayList<>(List.of(
                "fetch-model",
                "--source",
                "hf://" + ID,
                "--dest",
                dest.toString(),
                "--endpoint",
                hub.endpoint(),
                "--retry-backoff-ms",
                "5",
                "--progress-seconds",
                "0"));
        args.addAll(List.of(more));
        return FetchFixture.run(tmp, Map.of(), args.toArray(String[]::new));
    }

    private static List<FetchProgress> progress(Result r) {
        return Arrays.stream(r.out().split("\\R"))
                .map(FetchProgress::parse)
                .flatMap(Optional::stream)
                .toList();
    }

    @Test
    void progressCountsUpToTheWholeModelAndEndsComplete() throws IOException {
        Result r = fetch();
        assertThat(r.code()).as(r.err()).isZero();
        List<FetchProgress> p = progress(r);
        int files = FetchFixture.engineFiles().size();
        assertThat(p).hasSizeGreaterThan(files); // the plan, one per progress print, one per file, the end
        assertThat(p).allSatisfy(x -> {
            assertThat(x.model()).isEqualTo(ID + "@" + SHA);
            assertThat(x.totalBytes()).isEqualTo(totalBytes);
            assertThat(x.files()).isEqualTo(files);
        });
        assertThat(p.get(0))
                .isEqualTo(new FetchProgress(ID + "@" + SHA, FetchProgress.RUNNING, 0, totalBytes, 0, files));
        for (int i = 1; i < p.size(); i++) {
            assertThat(p.get(i).doneBytes())
                    .as("line %d", i)
                    .isGreaterThanOrEqualTo(p.get(i - 1).doneBytes());
            assertThat(p.get(i).filesDone())
                    .as("line %d", i)
                    .isGreaterThanOrEqualTo(p.get(i - 1).filesDone());
        }
        assertThat(p.get(p.size() - 1))
                .isEqualTo(new FetchProgress(
                        ID + "@" + SHA, FetchProgress.COMPLETE, totalBytes, totalBytes, files, files));
        assertThat(p.subList(0, p.size() - 1)).noneMatch(FetchProgress::complete);
        // the operator reads a tail of the log: the last line it finds is the end
        assertThat(FetchProgress.last(r.out())).contains(p.get(p.size() - 1));
    }

    @Test
    void aResumedDownloadStartsFromWhatIsOnDiskAndARunOnACompleteModelSaysCompleteAtOnce() throws IOException {
        hub.cuts.set(1);
        hub.cutAt = 70_000;
        Result first = fetch("--retries", "0");
        assertThat(first.code()).isEqualTo(7);
        long part = Files.size(dest.resolve(shard(1) + ".part"));
        List<FetchProgress> cut = progress(first);
        assertThat(cut).isNotEmpty().noneMatch(FetchProgress::complete);

        Result second = fetch();
        assertThat(second.code()).as(second.err()).isZero();
        FetchProgress resumed = progress(second).get(0);
        assertThat(resumed.doneBytes())
                .as("the part and the files completed before the cut")
                .isGreaterThan(part);
        assertThat(resumed.filesDone()).isPositive();
        assertThat(progress(second).get(progress(second).size() - 1).complete()).isTrue();

        hub.clearRequests();
        Result third = FetchFixture.run(
                tmp,
                Map.of(),
                "fetch-model",
                "--source",
                "hf://" + ID + "@" + SHA,
                "--dest",
                dest.toString(),
                "--endpoint",
                hub.endpoint());
        assertThat(third.code()).as(third.err()).isZero();
        int files = FetchFixture.engineFiles().size();
        assertThat(progress(third))
                .containsExactly(new FetchProgress(
                        ID + "@" + SHA, FetchProgress.COMPLETE, totalBytes, totalBytes, files, files));
        assertThat(hub.requests()).isEmpty();
    }
}
