package io.tensorlane.runtime.loadgen;

import java.util.List;

/**
 * The results of one level (pure aggregation of its records, as vLLM's benchmark computes them): throughputs count
 * successful requests only and divide by the level's wall-clock {@code durationS}; TTFT, TPOT and E2E have one sample
 * per successful request, ITL one per gap between content chunks of all successful requests. The prefix-cache hit
 * rate is the cached prompt tokens over the prompt tokens of the successful requests that reported cached tokens
 * ({@code usage.prompt_tokens_details.cached_tokens}); NaN when none did.
 */
public record LevelSummary(
        String label,
        int concurrency,
        double requestRate,
        int completed,
        int failed,
        double durationS,
        long inputTokens,
        long outputTokens,
        double requestThroughput,
        double outputThroughput,
        double totalTokenThroughput,
        Stats.Dist ttft,
        Stats.Dist tpot,
        Stats.Dist itl,
        Stats.Dist e2e,
        String firstError,
        long cachedTokens,
        double cacheHitRate) {

    public static LevelSummary of(LoadgenConfig.Level level, List<RequestRecord> records, double durationS) {
        List<RequestRecord> ok = records.stream().filter(RequestRecord::success).toList();
        long in = ok.stream().mapToLong(RequestRecord::inputTokens).sum();
        long out = ok.stream().mapToLong(RequestRecord::outputTokens).sum();
        double d = durationS > 0 ? durationS : Double.NaN;
        double[] itl = ok.stream()
                .flatMapToDouble(r -> java.util.Arrays.stream(r.itlMs()))
                .toArray();
        List<RequestRecord> reported =
                ok.stream().filter(r -> r.cachedTokens() >= 0).toList();
        long reportedIn =
                reported.stream().mapToLong(RequestRecord::inputTokens).sum();
        String firstError = records.stream()
                .filter(r -> !r.success())
                .map(RequestRecord::error)
                .findFirst()
                .orElse(null);
        return new LevelSummary(
                level.label(),
                level.concurrency(),
                level.rate(),
                ok.size(),
                records.size() - ok.size(),
                durationS,
                in,
                out,
                ok.size() / d,
                out / d,
                (in + out) / d,
                Stats.of(ok.stream().mapToDouble(RequestRecord::ttftMs).toArray()),
                Stats.of(ok.stream().mapToDouble(RequestRecord::tpotMs).toArray()),
                Stats.of(itl),
                Stats.of(ok.stream().mapToDouble(RequestRecord::e2eMs).toArray()),
                firstError,
                reported.stream().mapToLong(RequestRecord::cachedTokens).sum(),
                reportedIn > 0
                        ? reported.stream()
                                        .mapToLong(RequestRecord::cachedTokens)
                                        .sum()
                                / (double) reportedIn
                        : Double.NaN);
    }
}
