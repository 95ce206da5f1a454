package io.tensorlane.runtime.loadgen;

import java.util.List;

/**
 * The results of one level (pure aggregation of its records, as vLLM's benchmark computes them): throughputs count
 * successful requests only and divide by the level's wall-clock {@code durationS}; TTFT, TPOT and E2E have one sample
 * per successful request, ITL one per gap between content chunks of all successful requests.
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
        String firstError) {

    public static LevelSummary of(LoadgenConfig.Level level, List<RequestRecord> records, double durationS) {
        List<RequestRecord> ok = records.stream().filter(RequestRecord::success).toList();
        long in = ok.stream().mapToLong(RequestRecord::inputTokens).sum();
        long out = ok.stream().mapToLong(RequestRecord::outputTokens).sum();
        double d = durationS > 0 ? durationS : Double.NaN;
        double[] itl = ok.stream()
                .flatMapToDouble(r -> java.util.Arrays.stream(r.itlMs()))
                .toArray();
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
                firstError);
    }
}
