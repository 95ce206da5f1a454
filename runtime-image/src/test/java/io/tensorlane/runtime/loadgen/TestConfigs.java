package io.tensorlane.runtime.loadgen;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** Configurations for tests (closed loop unless rates are given). */
final class TestConfigs {
    private TestConfigs() {}

    static LoadgenConfig closed(URI url, List<Integer> levels, int n) {
        return new LoadgenConfig(
                url,
                "fake",
                Endpoint.COMPLETIONS,
                levels,
                List.of(),
                0,
                n,
                null,
                16,
                0,
                8,
                0,
                false,
                32000,
                true,
                1,
                Duration.ofSeconds(10),
                0,
                Path.of("unused"));
    }

    static LoadgenConfig with(
            LoadgenConfig c, Endpoint endpoint, boolean tokenIds, Duration timeout, Duration duration, int n) {
        return new LoadgenConfig(
                c.baseUrl(),
                c.model(),
                endpoint,
                c.concurrencies(),
                c.requestRates(),
                c.maxConcurrency(),
                n,
                duration,
                c.inputLen(),
                c.inputLenRange(),
                c.outputLen(),
                c.outputLenRange(),
                tokenIds,
                c.vocabSize(),
                c.ignoreEos(),
                c.seed(),
                timeout,
                c.warmup(),
                c.outDir());
    }

    static LoadgenConfig open(URI url, List<Double> rates, int maxConcurrency, int n) {
        return new LoadgenConfig(
                url,
                "fake",
                Endpoint.COMPLETIONS,
                List.of(),
                rates,
                maxConcurrency,
                n,
                null,
                16,
                0,
                8,
                0,
                false,
                32000,
                true,
                1,
                Duration.ofSeconds(10),
                0,
                Path.of("unused"));
    }
}
