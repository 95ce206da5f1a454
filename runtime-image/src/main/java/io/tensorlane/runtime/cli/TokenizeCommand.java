package io.tensorlane.runtime.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.text.ModelTokenizer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Encodes and decodes JSON-lines input with a model's tokenizer.json, for comparison with Python {@code tokenizers}.
 * No GPU needed.
 */
@Command(
        name = "tokenize",
        mixinStandardHelpOptions = true,
        description =
                "Tokenize JSON lines {\"text\": ...} with the model's tokenizer.json; write one JSON line per input: "
                        + "{\"ids\": encode(text, special tokens), \"ids_plain\": encode(text, no special tokens), "
                        + "\"decoded\": decode(ids_plain), \"decoded_skip\": decode(ids, skipping special tokens)}. No GPU needed.")
public final class TokenizeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--model", required = true, paramLabel = "DIR", description = "Model folder with tokenizer.json.")
    Path model;

    @Option(
            names = "--input",
            paramLabel = "FILE",
            description = "JSON lines, each {\"text\": \"...\"} (default: standard input).")
    Path input;

    @Option(
            names = "--output",
            paramLabel = "FILE",
            description = "Where the JSON lines go (default: standard output).")
    Path output;

    @Override
    public Integer call() throws IOException {
        PrintWriter err = spec.commandLine().getErr();
        if (input != null && !Files.isRegularFile(input)) {
            err.println("error: --input " + input + " does not exist");
            err.flush();
            return ExitCodes.USAGE;
        }
        ObjectMapper json = new ObjectMapper();
        try (ModelTokenizer tokenizer = ModelTokenizer.load(model);
                BufferedReader in = input != null
                        ? Files.newBufferedReader(input, StandardCharsets.UTF_8)
                        : new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            Writer out = output != null
                    ? Files.newBufferedWriter(output, StandardCharsets.UTF_8)
                    : spec.commandLine().getOut();
            try {
                String line;
                int lineNo = 0;
                while ((line = in.readLine()) != null) {
                    lineNo++;
                    if (line.isBlank()) {
                        continue;
                    }
                    String text = text(json, line, lineNo);
                    int[] ids = tokenizer.encode(text, true);
                    int[] plain = tokenizer.encode(text, false);
                    Map<String, Object> row = new LinkedHashMap<>();
                    row.put("ids", ids);
                    row.put("ids_plain", plain);
                    row.put("decoded", tokenizer.decode(plain, false));
                    row.put("decoded_skip", tokenizer.decode(ids, true));
                    out.write(json.writeValueAsString(row));
                    out.write('\n');
                }
            } finally {
                if (output != null) {
                    out.close();
                } else {
                    out.flush();
                }
            }
        } catch (IllegalArgumentException e) {
            err.println("error: " + e.getMessage());
            err.flush();
            return ExitCodes.USAGE;
        }
        return ExitCodes.OK;
    }

    private static String text(ObjectMapper json, String line, int lineNo) {
        JsonNode node;
        try {
            node = json.readTree(line);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("input line " + lineNo + " is not JSON: " + e.getOriginalMessage());
        }
        JsonNode text = node == null ? null : node.get("text");
        if (text == null || !text.isTextual()) {
            throw new IllegalArgumentException("input line " + lineNo + " has no string field \"text\"");
        }
        return text.asText();
    }
}
