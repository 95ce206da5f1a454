package io.tensorlane.runtime.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class WorkloadTest {
    static LoadgenConfig config(int in, double inRange, int out, double outRange, boolean ids, long seed) {
        return new LoadgenConfig(
                URI.create("http://127.0.0.1:1"),
                "m",
                Endpoint.COMPLETIONS,
                List.of(1),
                List.of(),
                0,
                10,
                null,
                in,
                inRange,
                out,
                outRange,
                ids,
                5000,
                false,
                seed,
                Duration.ofSeconds(1),
                0,
                Path.of("x"));
    }

    @Test
    void lengthsAreUniformWithinTheRangeBothEndsIncluded() {
        SplittableRandom rng = new SplittableRandom(1);
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (int i = 0; i < 5000; i++) {
            int l = Workload.sampleLength(rng, 512, 0.1);
            min = Math.min(min, l);
            max = Math.max(max, l);
        }
        assertThat(min).isEqualTo(460); // floor(512·0.9)
        assertThat(max).isEqualTo(563); // floor(512·1.1)
        assertThat(Workload.sampleLength(rng, 512, 0)).isEqualTo(512);
        assertThat(Workload.sampleLength(rng, 1, 0.5)).isEqualTo(1);
    }

    @Test
    void tokenIdPromptsHaveExactLengthsAndIdsInTheVocabulary() {
        Workload w = new Workload(config(64, 0.25, 32, 0.5, true, 7));
        for (Workload.Prompt p : w.prompts(50)) {
            assertThat(p.text()).isNull();
            assertThat(p.tokenIds()).hasSize(p.inputLen());
            assertThat(p.inputLen()).isBetween(48, 80);
            assertThat(p.maxTokens()).isBetween(16, 48);
            for (int id : p.tokenIds()) {
                assertThat(id).isBetween(1000, 4999);
            }
        }
    }

    @Test
    void wordPromptsHaveTheRequestedWordCount() {
        Workload w = new Workload(config(20, 0, 8, 0, false, 7));
        Workload.Prompt p = w.prompt(4);
        assertThat(p.tokenIds()).isNull();
        assertThat(p.text().split(" ")).hasSize(20);
        assertThat(p.maxTokens()).isEqualTo(8);
        assertThat(p.index()).isEqualTo(4);
    }

    @Test
    void deterministicPerSeedAndIndex() {
        Workload a = new Workload(config(32, 0.5, 8, 0.5, false, 3));
        Workload b = new Workload(config(32, 0.5, 8, 0.5, false, 3));
        Workload c = new Workload(config(32, 0.5, 8, 0.5, false, 4));
        assertThat(a.prompt(9).text()).isEqualTo(b.prompt(9).text());
        assertThat(a.prompt(9).maxTokens()).isEqualTo(b.prompt(9).maxTokens());
        assertThat(a.prompt(9).text()).isNotEqualTo(a.prompt(10).text());
        assertThat(a.prompt(9).text()).isNotEqualTo(c.prompt(9).text());
    }
}
