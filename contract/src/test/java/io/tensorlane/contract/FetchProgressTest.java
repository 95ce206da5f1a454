package io.tensorlane.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The fetch-model progress line: printed by the runtime, read by the operator from the init container's log. */
class FetchProgressTest {
    static final String SHA = "0123456789abcdef0123456789abcdef01234567";

    static Stream<Arguments> lines() {
        return Stream.of(
                Arguments.of(
                        new FetchProgress("org/m@" + SHA, "running", 3_200_000_000L, 16_100_000_000L, 1, 4),
                        19,
                        "3.2 of 16.1 GB (19%)"),
                Arguments.of(new FetchProgress("m@main", "running", 0, 0, 0, 3), 0, "0.0 GB (total unknown)"),
                Arguments.of(
                        new FetchProgress("org/m@" + SHA, "running", 16_100_000_000L, 16_100_000_000L, 3, 4),
                        100,
                        "16.1 of 16.1 GB (100%)"),
                Arguments.of(new FetchProgress("org/m@" + SHA, "complete", 5, 10, 4, 4), 100, "0.0 of 0.0 GB (100%)"),
                // more bytes than listed (a server that sent a file again) never shows over 100%
                Arguments.of(new FetchProgress("org/m@" + SHA, "running", 30, 10, 1, 4), 100, "0.0 of 0.0 GB (100%)"));
    }

    @ParameterizedTest
    @MethodSource("lines")
    void aLineParsesBackToWhatWasPrinted(FetchProgress p, int percent, String described) {
        assertThat(FetchProgress.parse(p.toLine())).contains(p);
        assertThat(FetchProgress.parse("  " + p.toLine() + "\r"))
                .as("surrounding blanks")
                .contains(p);
        assertThat(p.percent()).isEqualTo(percent);
        assertThat(p.describe()).isEqualTo(described);
    }

    static Stream<Arguments> malformed() {
        return Stream.of(
                Arguments.of(
                        "tensorlane-fetch-progress model=a@b state=running done=x total=1 files=0/1",
                        "done= must be a whole number"),
                Arguments.of("tensorlane-fetch-progress model=a@b state=running done=1 files=0/1", "missing total="),
                Arguments.of(
                        "tensorlane-fetch-progress model=a@b state=paused done=1 total=1 files=0/1",
                        "state must be running or complete"),
                Arguments.of(
                        "tensorlane-fetch-progress model=a@b state=running done=1 total=1 files=2",
                        "files= must be DONE/TOTAL"),
                Arguments.of(
                        "tensorlane-fetch-progress model=a@b state=running done=1 total=1 files=3/2",
                        "files done <= files"),
                Arguments.of(
                        "tensorlane-fetch-progress model=a@b state=running done=-1 total=1 files=0/2", "must be >= 0"),
                Arguments.of(
                        "tensorlane-fetch-progress model=a@b junk state=running done=1 total=1 files=0/2",
                        "'junk' is not key=value"));
    }

    @ParameterizedTest
    @MethodSource("malformed")
    void aMalformedProgressLineSaysWhatIsWrong(String line, String message) {
        assertThatThrownBy(() -> FetchProgress.parse(line))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }

    @Test
    void otherLinesAreNotProgress() {
        assertThat(FetchProgress.parse("fetch-model: model.safetensors 1.00 GiB/2.00 GiB | total ..."))
                .isEmpty();
        assertThat(FetchProgress.parse("")).isEmpty();
        assertThat(FetchProgress.parse(null)).isEmpty();
    }

    @Test
    void theLastWellFormedLineOfALogTailWins() {
        FetchProgress a = new FetchProgress("org/m@" + SHA, "running", 10, 100, 0, 2);
        FetchProgress b = new FetchProgress("org/m@" + SHA, "running", 60, 100, 1, 2);
        String log = a.toLine().substring(7) + "\n" // the tail cut the first line
                + "fetch-model: done config.json (1 KiB in 0.1 s)\n" + a.toLine() + "\n" + b.toLine() + "\n"
                + "tensorlane-fetch-progress model=org/m state=runn\n" // cut at the end (a write in flight)
                + "fetch-model: model.safetensors ...\n";
        assertThat(FetchProgress.last(log)).contains(b);
        assertThat(FetchProgress.last("fetch-model: resolving\n")).isEmpty();
        assertThat(FetchProgress.last(null)).isEmpty();
    }
}
