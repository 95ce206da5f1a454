package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.runtime.structured.GrammarConstraint;
import io.tensorlane.runtime.structured.Grammars;
import io.tensorlane.runtime.structured.TokenMasks;
import io.tensorlane.runtime.structured.TokenVocabulary;
import io.tensorlane.runtime.text.ModelTokenizer;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The schema {@code bench-model --mask-cost} walks: it compiles on a real tokenizer, and walks that draw a random allowed
 * token at every step (as a masked sampler with random logits does) end in complete texts that parse and carry the
 * required fields, so the bench's walks restart instead of running into a dead state.
 */
class ModelBenchMasksTest {
    @Test
    void randomMaskedWalksOfTheBenchSchemaEndInValidJson() throws Exception {
        Path dir = Path.of("src/test/resources/tokenizers/tiny-bpe");
        try (ModelTokenizer tok = ModelTokenizer.load(dir)) {
            Set<Integer> eos = new HashSet<>(tok.eosTokenIds());
            TokenVocabulary v = TokenVocabulary.load(dir, 288, eos);
            JsonNode schema = new ObjectMapper().readTree(ModelBenchMasks.SCHEMA);
            TokenMasks masks = new Grammars(v).json(schema);
            SplittableRandom rng = new SplittableRandom(7);
            for (int walk = 0; walk < 20; walk++) {
                GrammarConstraint c = new GrammarConstraint(masks);
                int[] drawn = new int[50_000];
                int n = 0;
                while (true) {
                    int[] mask = c.mask(drawn, 0, n); // walks the tokens drawn so far
                    if (c.complete()) {
                        break;
                    }
                    List<Integer> allowed = new ArrayList<>();
                    for (int id = 0; id < v.size(); id++) {
                        if ((mask[id >>> 5] >>> (id & 31) & 1) != 0 && !eos.contains(id)) {
                            allowed.add(id);
                        }
                    }
                    assertThat(allowed)
                            .as("walk %d after %d tokens: a dead state", walk, n)
                            .isNotEmpty();
                    drawn[n++] = allowed.get(rng.nextInt(allowed.size()));
                    assertThat(n).as("walk %d ends", walk).isLessThan(drawn.length);
                }
                ByteArrayOutputStream text = new ByteArrayOutputStream();
                for (int i = 0; i < n; i++) {
                    text.writeBytes(v.bytes(drawn[i]));
                }
                JsonNode answer = new ObjectMapper().readTree(text.toString(StandardCharsets.UTF_8));
                assertThat(answer.has("name") && answer.has("city") && answer.has("age"))
                        .as(answer.toString())
                        .isTrue();
                assertThat(answer.get("city").asText()).isIn("Paris", "Lyon", "Nice");
                assertThat(answer.get("age").isIntegralNumber())
                        .as(answer.toString())
                        .isTrue();
                assertThat(answer.get("tags") == null || answer.get("tags").size() <= 4)
                        .isTrue();
            }
        }
    }

    @Test
    void theJsonCarriesWhatDeviceMaskBenchJudges(@org.junit.jupiter.api.io.TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("masks.json");
        ModelBenchJson report = new ModelBenchJson(file, 512, System.nanoTime());
        report.header(ModelBenchJson.JSON.createObjectNode().put("model", "m"));
        report.masks(new ModelBenchMasks.Row(32, 10.0, 10.5, 9.0, 9.2, 50, 50, 50, 3), 12.5);
        report.write(true);
        JsonNode m = new ObjectMapper().readTree(file.toFile()).get("masks");
        assertThat(m.get("compile_ms").asDouble()).isEqualTo(12.5);
        JsonNode r = m.get("rows").get(0);
        // the keys device-mask-bench.sh reads
        for (String k : List.of(
                "batch",
                "plainWallMs",
                "maskedWallMs",
                "plainReplayed",
                "maskedReplayed",
                "steps",
                "restarts",
                "x_plain_wall",
                "x_plain_gpu")) {
            assertThat(r.has(k)).as(k).isTrue();
        }
        assertThat(r.get("x_plain_wall").asDouble()).isEqualTo(1.05);
    }
}
