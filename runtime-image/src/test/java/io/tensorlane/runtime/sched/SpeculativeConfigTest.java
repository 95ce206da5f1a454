package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

class SpeculativeConfigTest {
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "ngram:k=4,n=3|4|3",
                "ngram|4|3",
                "ngram:|4|3",
                "NGRAM:n=2|4|2",
                " ngram : k = 8 , n = 1 |8|1",
                "ngram:k=16,n=16|16|16",
                "ngram:n=5,k=1|1|5"
            })
    void parsesNgram(String spec, int k, int n) {
        SpeculativeConfig c = SpeculativeConfig.parse(spec, "--speculative");
        assertThat(c.method()).isEqualTo(SpeculativeConfig.Method.NGRAM);
        assertThat(c.k()).isEqualTo(k);
        assertThat(c.n()).isEqualTo(n);
        assertThat(c.proposer()).isInstanceOf(NgramProposer.class);
        assertThat(SpeculativeConfig.parse(c.toString(), "x")).isEqualTo(c);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "draft:/models/small,k=4|/models/small|4|1",
                "draft:/m|/m|4|1",
                " DRAFT: /a/b , k = 7 |/a/b|7|1",
                "draft:/m,batch=8,k=2|/m|2|8",
                "draft:/m,batch=1|/m|4|1"
            })
    void parsesDraft(String spec, String dir, int k, int batch) {
        SpeculativeConfig c = SpeculativeConfig.parse(spec, "--speculative");
        assertThat(c.method()).isEqualTo(SpeculativeConfig.Method.DRAFT);
        assertThat(c.draftDir()).isEqualTo(java.nio.file.Path.of(dir));
        assertThat(c.k()).isEqualTo(k);
        assertThat(c.batch()).isEqualTo(batch);
        assertThat(SpeculativeConfig.parse(c.toString(), "x")).isEqualTo(c);
        assertThat(c.logitRows(8)).isEqualTo(8 * (k + 1));
        // its proposer is the loaded draft model's (llm.DraftModel), not one the config can make
        assertThatThrownBy(c::proposer)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("DraftModel");
    }

    @ParameterizedTest
    @NullSource
    @ValueSource(strings = {"", "  ", "off", "OFF", "none"})
    void offMeansNone(String spec) {
        assertThat(SpeculativeConfig.parse(spec, "--speculative")).isNull();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "ngram:k=0|--speculative 'ngram:k=0': k must be 1..16, got 0",
                "ngram:k=17|k must be 1..16, got 17",
                "ngram:n=0|n must be 1..16, got 0",
                "ngram:k=four|k must be a whole number 1..16, got 'four'",
                "ngram:k=4,k=5|field 'k' given twice",
                "ngram:k=4,m=3|unknown field 'm' (allowed: k, n)",
                "ngram:4|expected name=value, got '4'",
                "eagle:k=4|unknown method 'eagle'",
                "draft:|draft needs the draft model's directory first",
                "draft:k=4|draft needs the draft model's directory first",
                "draft:/models/small,n=3|unknown field 'n' (allowed: k, batch)",
                "draft:/models/small,batch=0|batch must be 1..4096, got 0",
                "ngram:batch=2|unknown field 'batch' (allowed: k, n)",
                "draft:/models/small,k=0|k must be 1..16, got 0"
            })
    void badValuesNameTheField(String spec, String message) {
        assertThatThrownBy(() -> SpeculativeConfig.parse(spec, "--speculative"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message)
                .hasMessageStartingWith("--speculative '");
    }

    @Test
    void nGramHasNoBatchLimit() {
        assertThat(SpeculativeConfig.parse("ngram:k=4", "x").batch()).isZero();
    }

    @Test
    void theSourceIsNamed() {
        assertThatThrownBy(() -> SpeculativeConfig.parse("ngram:k=99", "TENSORLANE_SPECULATIVE"))
                .hasMessage("TENSORLANE_SPECULATIVE 'ngram:k=99': k must be 1..16, got 99");
    }

    @Test
    void logitRowsCoverEverySequenceVerifyingK() {
        assertThat(SpeculativeConfig.parse("ngram:k=4", "x").logitRows(64)).isEqualTo(320);
    }
}
