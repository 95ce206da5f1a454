package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.runtime.common.ExitCodes;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class InspectModelCommandTest {
    record Result(int code, String out, String err) {}

    static Result run(String... args) {
        CommandLine cl = Main.commandLine();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        return new Result(cl.execute(args), out.toString(), err.toString());
    }

    static void model(Path dir, String config) throws IOException {
        try (InputStream in = InspectModelCommandTest.class.getResourceAsStream("/model/" + config)) {
            Files.write(dir.resolve("config.json"), in.readAllBytes());
        }
        byte[] h = "{\"w\": {\"dtype\": \"BF16\", \"shape\": [2, 3], \"data_offsets\": [0, 12]}}"
                .getBytes(StandardCharsets.UTF_8);
        Files.write(
                dir.resolve("model.safetensors"),
                ByteBuffer.allocate(8 + h.length + 12)
                        .order(ByteOrder.LITTLE_ENDIAN)
                        .putLong(h.length)
                        .put(h)
                        .array());
    }

    @Test
    void printsTheFactsAsStatusModelJsonAlsoToTheTerminationLog(@TempDir Path dir, @TempDir Path dev)
            throws IOException {
        model(dir, "llama-3.2-1b.json");
        Path log = dev.resolve("termination-log");
        Result r = run(
                "inspect-model",
                "--dir",
                dir.toString(),
                "--source",
                "pvc://models/llama",
                "--termination-log",
                log.toString());
        assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
        ModelStatus s = new ObjectMapper().readValue(r.out(), ModelStatus.class);
        assertThat(s.source).isEqualTo("pvc://models/llama");
        assertThat(s.architecture).isEqualTo("LlamaForCausalLM");
        assertThat(s.geometry.layers).isEqualTo(16);
        assertThat(s.geometry.headDim).isEqualTo(64);
        assertThat(s.weightBytes).isEqualTo(12);
        assertThat(s.revision).startsWith("sha256:");
        assertThat(Files.readString(log).trim()).isEqualTo(r.out().trim());
    }

    @Test
    void anUnsupportedArchitectureSaysSoAndExits2(@TempDir Path dir, @TempDir Path dev) throws IOException {
        model(dir, "llama-3.2-1b.json");
        Files.writeString(
                dir.resolve("config.json"),
                Files.readString(dir.resolve("config.json")).replace("LlamaForCausalLM", "GPT2LMHeadModel"));
        Path log = dev.resolve("termination-log");
        Result r = run("inspect-model", "--dir", dir.toString(), "--termination-log", log.toString());
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(Files.readString(log))
                .startsWith("UnsupportedArchitecture: ")
                .contains("GPT2LMHeadModel");
        Files.delete(dir.resolve("config.json"));
        r = run("inspect-model", "--dir", dir.toString(), "--termination-log", log.toString());
        assertThat(Files.readString(log)).startsWith("InvalidModel: ").contains("config.json does not exist");
    }
}
