package io.tensorlane.runtime.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;
import picocli.CommandLine.TypeConversionException;

class ProbeCommandTest {

    @ParameterizedTest
    @CsvSource({"30s, PT30S", "10m, PT10M", "1h, PT1H", "PT2M, PT2M"})
    void intervals(String text, Duration expected) {
        assertThat(new ProbeCommand.IntervalConverter().convert(text)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource({"5x", "0s", "ten minutes"})
    void badIntervals(String text) {
        assertThatThrownBy(() -> new ProbeCommand.IntervalConverter().convert(text))
                .isInstanceOf(TypeConversionException.class);
    }

    /** Argument errors end as one line and exit 2, before any GPU or cluster access. */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "--publish | --publish needs the node name: pass --node or set NODE_NAME (downward API spec.nodeName)",
                "--interval=1m | --interval only makes sense with --publish",
                "--measure-bytes=10 | --measure-bytes must be between 1048576 and 1073741824, got 10"
            })
    void argumentErrors(String arg, String message) {
        ProbeCommand cmd = new ProbeCommand();
        cmd.env = name -> null;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        cmd.err = new PrintStream(err, true, StandardCharsets.UTF_8);
        int rc = new CommandLine(cmd).execute(arg);
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("probe: " + message + System.lineSeparator());
    }
}
