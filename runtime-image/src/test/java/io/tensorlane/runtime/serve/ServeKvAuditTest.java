package io.tensorlane.runtime.serve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.runtime.cli.Main;
import io.tensorlane.runtime.common.EngineSettings;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/** serve's debug switch for the block allocator's self-audit: the flag wins, then the variable, off by default. */
class ServeKvAuditTest {
    static Stream<Arguments> rows() {
        String v = EngineSettings.KV_AUDIT;
        return Stream.of(
                Arguments.of(false, Map.of(), false),
                Arguments.of(true, Map.of(), true),
                Arguments.of(false, Map.of(v, "true"), true),
                Arguments.of(false, Map.of(v, "false"), false),
                Arguments.of(true, Map.of(v, "false"), true));
    }

    @ParameterizedTest(name = "flag {0}, env {1}: {2}")
    @MethodSource("rows")
    void theFlagThenTheVariableThenOff(boolean flag, Map<String, String> env, boolean want) {
        assertThat(ServeCommand.kvAudit(flag, env)).isEqualTo(want);
    }

    @Test
    void aBadValueNamesTheVariable() {
        assertThatThrownBy(() -> ServeCommand.kvAudit(false, Map.of(EngineSettings.KV_AUDIT, "yes")))
                .hasMessage("TENSORLANE_KV_AUDIT must be true or false, got 'yes'");
    }

    @Test
    void serveParsesTheFlag() {
        CommandLine.ParseResult parsed = Main.commandLine().parseArgs("serve", "--model", "/m", "--kv-audit");
        CommandLine serve = parsed.subcommand().commandSpec().commandLine();
        ServeCommand cmd = serve.getCommand();
        assertThat(cmd.kvAudit).isTrue();
        assertThat(serve.getCommandSpec().findOption("--kv-audit").description()[0])
                .contains("audit the KV block allocator");
    }
}
