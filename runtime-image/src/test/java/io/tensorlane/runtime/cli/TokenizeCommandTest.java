package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.runtime.common.ExitCodes;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class TokenizeCommandTest {
    static final ObjectMapper JSON = new ObjectMapper();

    record Result(int code, String out, String err) {}

    static Path model() throws URISyntaxException {
        return Path.of(TokenizeCommandTest.class
                        .getResource("/tokenizers/tiny-bpe/tokenizer.json")
                        .toURI())
                .getParent();
    }

    static Result run(String... args) {
        CommandLine cl = new CommandLine(new TokenizeCommand());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        int code = cl.execute(args);
        return new Result(code, out.toString(), err.toString());
    }

    @Test
    void writesOneJsonLinePerInput(@TempDir Path dir) throws Exception {
        Path input = dir.resolve("in.jsonl");
        Files.writeString(
                input,
                "{\"text\": \"hello world\"}\n\n{\"text\": \"<|begin_of_text|>a€<|eot_id|>\"}\n{\"text\": \"\"}\n",
                StandardCharsets.UTF_8);
        Path output = dir.resolve("out.jsonl");
        Result r = run("--model", model().toString(), "--input", input.toString(), "--output", output.toString());
        assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
        List<String> lines = Files.readAllLines(output, StandardCharsets.UTF_8);
        assertThat(lines)
                .containsExactly(
                        "{\"ids\":[274,264,273],\"ids_plain\":[264,273],\"decoded\":\"hello world\",\"decoded_skip\":\"hello world\"}",
                        "{\"ids\":[274,274,97,268,172,276],\"ids_plain\":[274,97,268,172,276],"
                                + "\"decoded\":\"<|begin_of_text|>a€<|eot_id|>\",\"decoded_skip\":\"a€\"}",
                        "{\"ids\":[274],\"ids_plain\":[],\"decoded\":\"\",\"decoded_skip\":\"\"}");
    }

    @Test
    void writesToStandardOutputByDefault(@TempDir Path dir) throws Exception {
        Path input = dir.resolve("in.jsonl");
        Files.writeString(input, "{\"text\": \"  the\\tworld\\n\"}\n", StandardCharsets.UTF_8);
        Result r = run("--model", model().toString(), "--input", input.toString());
        assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
        JsonNode row = JSON.readTree(r.out().strip());
        assertThat(row.get("decoded").asText()).isEqualTo("  the\tworld\n");
        assertThat(row.get("decoded_skip").asText()).isEqualTo("  the\tworld\n");
        assertThat(row.get("ids").get(0).asInt()).isEqualTo(274);
        assertThat(row.get("ids").size()).isEqualTo(row.get("ids_plain").size() + 1);
    }

    @Test
    void missingTokenizerIsAUsageError(@TempDir Path dir) throws IOException {
        Path input = dir.resolve("in.jsonl");
        Files.writeString(input, "{\"text\": \"x\"}\n");
        Result r = run("--model", dir.toString(), "--input", input.toString());
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains(dir.resolve("tokenizer.json").toString());
    }

    @Test
    void badInputLineNamesItsNumber(@TempDir Path dir) throws Exception {
        Path input = dir.resolve("in.jsonl");
        Files.writeString(input, "{\"text\": \"x\"}\n{\"txt\": 1}\n");
        Result r = run(
                "--model",
                model().toString(),
                "--input",
                input.toString(),
                "--output",
                dir.resolve("o").toString());
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("input line 2 has no string field \"text\"");
        Result missing =
                run("--model", model().toString(), "--input", input.toString().replace("in.jsonl", "nope.jsonl"));
        assertThat(missing.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(missing.err()).contains("does not exist");
    }

    @Test
    void modelIsRequired() {
        Result r = run();
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("--model");
    }
}
