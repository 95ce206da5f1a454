package io.tensorlane.runtime.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class LevelSummaryTest {
    static RequestRecord ok(int in, int out, double ttft, double e2e, double... itl) {
        return new RequestRecord("c=4", 0, 0, in, out, out, true, 200, null, ttft, e2e, itl, out);
    }

    static RequestRecord failed(int status) {
        return RequestRecord.failed("c=4", 0, 0, 100, 10, status, "HTTP " + status, 5);
    }

    record Case(
            String name,
            List<RequestRecord> records,
            double durationS,
            int completed,
            int failed,
            long in,
            long out,
            double reqPerS,
            double outPerS,
            double totPerS,
            double ttftMean,
            double tpotMedian,
            double itlMean,
            double e2eP99) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of(new Case(
                        "two ok in 2 s",
                        List.of(ok(100, 11, 50, 150, 10, 10), ok(300, 21, 150, 350, 10, 10)),
                        2.0,
                        2,
                        0,
                        400,
                        32,
                        1.0,
                        16.0,
                        216.0,
                        100,
                        10,
                        10,
                        150 + 200 * 0.99)),
                Arguments.of(new Case(
                        "failures excluded from tokens and throughput",
                        List.of(ok(100, 11, 50, 150, 5, 15), failed(429), failed(500)),
                        0.5,
                        1,
                        2,
                        100,
                        11,
                        2.0,
                        22.0,
                        222.0,
                        50,
                        10,
                        10,
                        150)),
                Arguments.of(new Case(
                        "one-token outputs have no TPOT",
                        List.of(ok(10, 1, 20, 20), ok(10, 1, 40, 40)),
                        1.0,
                        2,
                        0,
                        20,
                        2,
                        2.0,
                        2.0,
                        22.0,
                        30,
                        Double.NaN,
                        Double.NaN,
                        20 + 20 * 0.99)),
                Arguments.of(new Case(
                        "all failed",
                        List.of(failed(500)),
                        1.0,
                        0,
                        1,
                        0,
                        0,
                        0.0,
                        0.0,
                        0.0,
                        Double.NaN,
                        Double.NaN,
                        Double.NaN,
                        Double.NaN)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void aggregates(Case c) {
        LevelSummary s = LevelSummary.of(LoadgenConfig.Level.closed(4), c.records(), c.durationS());
        assertThat(s.label()).isEqualTo("c=4");
        assertThat(s.concurrency()).isEqualTo(4);
        assertThat(s.requestRate()).isNaN();
        assertThat(s.completed()).isEqualTo(c.completed());
        assertThat(s.failed()).isEqualTo(c.failed());
        assertThat(s.durationS()).isEqualTo(c.durationS());
        assertThat(s.inputTokens()).isEqualTo(c.in());
        assertThat(s.outputTokens()).isEqualTo(c.out());
        assertThat(s.requestThroughput()).isCloseTo(c.reqPerS(), within(1e-9));
        assertThat(s.outputThroughput()).isCloseTo(c.outPerS(), within(1e-9));
        assertThat(s.totalTokenThroughput()).isCloseTo(c.totPerS(), within(1e-9));
        check(s.ttft().mean(), c.ttftMean());
        check(s.tpot().median(), c.tpotMedian());
        check(s.itl().mean(), c.itlMean());
        check(s.e2e().p99(), c.e2eP99());
        assertThat(s.firstError())
                .isEqualTo(
                        c.failed() > 0
                                ? c.records().stream()
                                        .filter(r -> !r.success())
                                        .findFirst()
                                        .get()
                                        .error()
                                : null);
    }

    static void check(double actual, double expected) {
        if (Double.isNaN(expected)) {
            assertThat(actual).isNaN();
        } else {
            assertThat(actual).isCloseTo(expected, within(1e-9));
        }
    }
}
