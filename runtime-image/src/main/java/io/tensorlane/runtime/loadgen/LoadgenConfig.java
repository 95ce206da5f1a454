package io.tensorlane.runtime.loadgen;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One load run: where to send, what to send and how (closed loop at each of {@code concurrencies}, or open loop with
 * Poisson arrivals at each of {@code requestRates}).
 *
 * @param concurrencies closed-loop levels (N clients, each sends its next request when the previous finished); empty
 *     for an open-loop run
 * @param requestRates open-loop levels in requests/s ({@code +Infinity}: all at once); empty for a closed-loop run
 * @param maxConcurrency open loop: at most this many requests in flight (0: unbounded)
 * @param numRequests requests per level; 0 with {@code duration}: until the duration ends
 * @param duration per level, stop sending new requests after this long (null: run {@code numRequests})
 * @param inputLenRange and {@code outputLenRange}: lengths are uniform in [len·(1−r), len·(1+r)] like vLLM's random
 *     dataset
 * @param tokenIds send the prompt as a list of token ids (completions only) so that its length is exact
 * @param vocabSize token ids are drawn from [min(1000, vocab/2), vocab)
 * @param warmup requests sent (and not recorded) before the first level; a failed warmup stops the run
 * @param prefix the shared-prefix workload ({@link PrefixWorkload#NONE}: random prompts); with multi-turn,
 *     {@code numRequests} counts conversations
 */
public record LoadgenConfig(
        URI baseUrl,
        String model,
        Endpoint endpoint,
        List<Integer> concurrencies,
        List<Double> requestRates,
        int maxConcurrency,
        int numRequests,
        Duration duration,
        int inputLen,
        double inputLenRange,
        int outputLen,
        double outputLenRange,
        boolean tokenIds,
        int vocabSize,
        boolean ignoreEos,
        long seed,
        Duration timeout,
        int warmup,
        Path outDir,
        PrefixWorkload prefix) {

    public static final int MAX_CLIENTS = 4096;

    public LoadgenConfig {
        concurrencies = List.copyOf(concurrencies);
        requestRates = List.copyOf(requestRates);
        prefix = prefix == null ? PrefixWorkload.NONE : prefix;
    }

    /** A run of random prompts ({@link PrefixWorkload#NONE}). */
    public LoadgenConfig(
            URI baseUrl,
            String model,
            Endpoint endpoint,
            List<Integer> concurrencies,
            List<Double> requestRates,
            int maxConcurrency,
            int numRequests,
            Duration duration,
            int inputLen,
            double inputLenRange,
            int outputLen,
            double outputLenRange,
            boolean tokenIds,
            int vocabSize,
            boolean ignoreEos,
            long seed,
            Duration timeout,
            int warmup,
            Path outDir) {
        this(
                baseUrl,
                model,
                endpoint,
                concurrencies,
                requestRates,
                maxConcurrency,
                numRequests,
                duration,
                inputLen,
                inputLenRange,
                outputLen,
                outputLenRange,
                tokenIds,
                vocabSize,
                ignoreEos,
                seed,
                timeout,
                warmup,
                outDir,
                PrefixWorkload.NONE);
    }

    public boolean openLoop() {
        return !requestRates.isEmpty();
    }

    /** The problems with this configuration, one message each (empty when it is valid). */
    public List<String> problems() {
        List<String> p = new ArrayList<>();
        if (baseUrl == null
                || baseUrl.getScheme() == null
                || !(baseUrl.getScheme().equals("http") || baseUrl.getScheme().equals("https"))
                || baseUrl.getHost() == null) {
            p.add("--url must be an http(s) URL such as http://127.0.0.1:8080, not '" + baseUrl + "'");
        }
        if (model == null || model.isBlank()) {
            p.add("--model must not be empty");
        }
        if (concurrencies.isEmpty() == requestRates.isEmpty()) {
            p.add("give either --concurrency (closed loop) or --request-rate (open loop), not both or neither");
        }
        for (int c : concurrencies) {
            if (c < 1 || c > MAX_CLIENTS) {
                p.add("--concurrency values must be in 1.." + MAX_CLIENTS + ", not " + c);
            }
        }
        for (double r : requestRates) {
            if (!(r > 0)) {
                p.add("--request-rate values must be > 0 (or inf), not " + r);
            }
        }
        if (numRequests == 0 && requestRates.stream().anyMatch(r -> Double.isInfinite(r))) {
            p.add("--request-rate inf sends everything at once: it needs --num-requests >= 1");
        }
        if (maxConcurrency < 0 || maxConcurrency > MAX_CLIENTS) {
            p.add("--max-concurrency must be in 0.." + MAX_CLIENTS + " (0: unbounded), not " + maxConcurrency);
        }
        if (maxConcurrency > 0 && !openLoop()) {
            p.add(
                    "--max-concurrency applies to --request-rate (open loop); with --concurrency the level is the concurrency");
        }
        if (numRequests < 0 || (numRequests == 0 && duration == null)) {
            p.add("--num-requests must be >= 1 (or 0 with --duration), not " + numRequests);
        }
        if (duration != null && (duration.isNegative() || duration.isZero())) {
            p.add("--duration must be > 0");
        }
        if (inputLen < 1) {
            p.add("--input-len must be >= 1, not " + inputLen);
        }
        if (outputLen < 1) {
            p.add("--output-len must be >= 1, not " + outputLen);
        }
        if (!(inputLenRange >= 0 && inputLenRange < 1)) {
            p.add("--input-len-range must be in [0, 1), not " + inputLenRange);
        }
        if (!(outputLenRange >= 0 && outputLenRange < 1)) {
            p.add("--output-len-range must be in [0, 1), not " + outputLenRange);
        }
        if (tokenIds && endpoint == Endpoint.CHAT) {
            p.add("--token-ids needs --endpoint completions (chat messages are text)");
        }
        if (vocabSize < 2) {
            p.add("--vocab-size must be >= 2, not " + vocabSize);
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            p.add("--timeout must be > 0");
        }
        if (warmup < 0) {
            p.add("--warmup must be >= 0, not " + warmup);
        }
        p.addAll(prefix.problems(this));
        return p;
    }

    /** Throws {@link IllegalArgumentException} with every problem, one per line. */
    public LoadgenConfig validated() {
        List<String> p = problems();
        if (!p.isEmpty()) {
            throw new IllegalArgumentException(String.join("\n", p));
        }
        return this;
    }

    /** The levels in run order. */
    public List<Level> levels() {
        List<Level> l = new ArrayList<>();
        concurrencies.forEach(c -> l.add(Level.closed(c)));
        requestRates.forEach(r -> l.add(Level.open(r, maxConcurrency)));
        return l;
    }

    /** Parses {@code 1,8,32} (for --concurrency). */
    public static List<Integer> parseInts(String s, String option) {
        List<Integer> out = new ArrayList<>();
        for (String part : s.split(",")) {
            try {
                out.add(Integer.parseInt(part.trim()));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(option + " takes integers separated by commas, not '" + s + "'");
            }
        }
        return out;
    }

    /** Parses {@code 0.5,4,inf} (for --request-rate). */
    public static List<Double> parseRates(String s) {
        List<Double> out = new ArrayList<>();
        for (String part : s.split(",")) {
            String t = part.trim().toLowerCase(Locale.ROOT);
            if (t.equals("inf") || t.equals("infinity")) {
                out.add(Double.POSITIVE_INFINITY);
                continue;
            }
            try {
                out.add(Double.parseDouble(t));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        "--request-rate takes numbers (requests/s) or inf separated by commas, not '" + s + "'");
            }
        }
        return out;
    }

    /**
     * One level of the run: a closed loop of {@code concurrency} clients (rate NaN), or an open loop at {@code rate}
     * requests/s with at most {@code concurrency} in flight (0: unbounded).
     */
    public record Level(int concurrency, double rate) {
        public static Level closed(int concurrency) {
            return new Level(concurrency, Double.NaN);
        }

        public static Level open(double rate, int maxConcurrency) {
            return new Level(maxConcurrency, rate);
        }

        public boolean open() {
            return !Double.isNaN(rate);
        }

        public String label() {
            if (!open()) {
                return "c=" + concurrency;
            }
            String r = Double.isInfinite(rate)
                    ? "inf"
                    : java.math.BigDecimal.valueOf(rate).stripTrailingZeros().toPlainString();
            return "rate=" + r + (concurrency > 0 ? " max=" + concurrency : "");
        }
    }
}
