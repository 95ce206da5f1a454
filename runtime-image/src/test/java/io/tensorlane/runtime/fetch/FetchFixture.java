package io.tensorlane.runtime.fetch;

import io.tensorlane.runtime.cli.Main;
import io.tensorlane.runtime.model.SafetensorsWriter;
import io.tensorlane.runtime.model.SafetensorsWriter.T;
import io.tensorlane.testkit.hub.LocalHub;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import picocli.CommandLine;

/** The small checkpoint the fetch tests serve, and a way to run {@code fetch-model} with a chosen environment. */
final class FetchFixture {
    static final String ID = "acme/tiny-llama";
    static final String SHA = "0123456789abcdef0123456789abcdef01234567";
    /** A token with a shape no other output has, so a leak is found by a plain search. */
    static final String TOKEN = "hf_TESTsecretTOKEN0000leakcheck";

    static final String CONFIG = """
      {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
       "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 300,
       "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "max_position_embeddings": 256, "tie_word_embeddings": false,
       "torch_dtype": "bfloat16", "bos_token_id": 274, "eos_token_id": 275}
      """;

    record Result(int code, String out, String err, String termination) {
        String all() {
            return out + err + termination;
        }
    }

    private FetchFixture() {}

    /**
     * The repository: config, tokenizer files, two safetensors shards with real headers and random data (about 200 KiB
     * each), their index, plus files an engine does not need (a README, a .bin, a safetensors file in a sub-folder).
     */
    static void fill(LocalHub hub, Path scratch) throws IOException {
        Random rnd = new Random(16);
        Map<String, byte[]> files = Collections.synchronizedMap(new LinkedHashMap<>());
        hub.put(ID, new LocalHub.Repo(SHA, files, null, false));
        files.put(".gitattributes", "*.safetensors filter=lfs\n".getBytes());
        files.put("README.md", "# tiny\n".getBytes());
        files.put("config.json", CONFIG.getBytes());
        Path fixture = Path.of("src/test/resources/tokenizers/tiny-bpe");
        for (String f : List.of("tokenizer.json", "tokenizer_config.json", "generation_config.json")) {
            files.put(f, Files.readAllBytes(fixture.resolve(f)));
        }
        for (int shard = 1; shard <= 2; shard++) {
            List<T> tensors = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                byte[] data = new byte[2 * 128 * 256];
                rnd.nextBytes(data);
                tensors.add(new T("layer" + shard + "." + t + ".weight", "BF16", new long[] {128, 256}, data));
            }
            Path f = SafetensorsWriter.write(scratch.resolve("shard" + shard), tensors);
            files.put(shard(shard), Files.readAllBytes(f));
        }
        StringBuilder map = new StringBuilder("{\"metadata\": {}, \"weight_map\": {");
        for (int shard = 1; shard <= 2; shard++) {
            for (int t = 0; t < 3; t++) {
                map.append(shard + t > 1 ? ", " : "")
                        .append("\"layer")
                        .append(shard)
                        .append('.')
                        .append(t)
                        .append(".weight\": \"")
                        .append(shard(shard))
                        .append('"');
            }
        }
        files.put("model.safetensors.index.json", map.append("}}").toString().getBytes());
        files.put("pytorch_model.bin", new byte[1000]);
        files.put("original/consolidated.safetensors", files.get(shard(1)));
    }

    /** The files of {@link #ID} as the hub serves them (changes take effect at once). */
    static Map<String, byte[]> files(LocalHub hub) {
        return hub.repo(ID).files();
    }

    /** {@link #ID} requires {@code token}. */
    static void requireToken(LocalHub hub, String token) {
        hub.put(ID, hub.repo(ID).withToken(token));
    }

    static String shard(int i) {
        return "model-0000" + i + "-of-00002.safetensors";
    }

    /** The files fetch-model fetches by default from {@link #fill}'s repository. */
    static List<String> engineFiles() {
        return List.of(
                "config.json",
                "tokenizer.json",
                "tokenizer_config.json",
                "generation_config.json",
                shard(1),
                shard(2),
                "model.safetensors.index.json");
    }

    /** Runs {@code tensorlane-runtime <args>} with {@code env} (and a termination-log file under {@code tmp}). */
    static Result run(Path tmp, Map<String, String> env, String... args) throws IOException {
        Path termination = tmp.resolve("termination-log");
        Files.deleteIfExists(termination);
        Map<String, String> e = new HashMap<>(env);
        e.put("TENSORLANE_TERMINATION_LOG", termination.toString());
        CommandLine cl = Main.commandLine();
        ((FetchModelCommand) cl.getSubcommands().get("fetch-model").getCommand()).env = e;
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        int code = cl.execute(args);
        String term = Files.exists(termination) ? Files.readString(termination) : "";
        return new Result(code, out.toString(), err.toString(), term);
    }
}
