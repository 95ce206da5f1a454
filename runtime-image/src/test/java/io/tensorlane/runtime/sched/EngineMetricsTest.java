package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class EngineMetricsTest {
    static final String L = "{model_name=\"m\",engine=\"0\"";

    @Test
    void rendersVllmShapedFamiliesAfterRequests() throws Exception {
        PrometheusMeterRegistry reg = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        EngineMetrics m = new EngineMetrics(reg, "m", 4, 64);
        FakeExecutor exec = new FakeExecutor(97, 64, 4);
        try (Scheduler s =
                new Scheduler(exec, new BlockAllocator(64, 4), new SchedulerConfig(4, 64, 10, 256, 64), Set.of(), m)) {
            Collector a = new Collector();
            Collector b = new Collector(2);
            s.submit(SeqRequest.greedy("a", new int[] {1, 2, 3}, 5), a);
            s.submit(SeqRequest.greedy("b", new int[] {4, 5}, 5), b);
            a.await();
            b.await();
            assertThat(s.awaitIdle(Duration.ofSeconds(5))).isTrue();
            String text = m.render();
            List<String> lines = Arrays.asList(text.split("\n"));
            for (String f : List.of(
                    "num_requests_running gauge",
                    "num_requests_waiting gauge",
                    "kv_cache_usage_perc gauge",
                    "gpu_cache_usage_perc gauge",
                    "cache_config_info gauge",
                    "num_preemptions_total counter",
                    "prompt_tokens_total counter",
                    "generation_tokens_total counter",
                    "request_success_total counter",
                    "time_to_first_token_seconds histogram",
                    "inter_token_latency_seconds histogram",
                    "time_per_output_token_seconds histogram",
                    "e2e_request_latency_seconds histogram",
                    "request_queue_time_seconds histogram")) {
                assertThat(lines).contains("# TYPE tensorlane:" + f);
            }
            assertThat(lines)
                    .contains(
                            "tensorlane:cache_config_info{block_size=\"4\",num_gpu_blocks=\"64\",engine=\"0\"} 1.0",
                            "tensorlane:num_requests_running" + L + "} 0.0",
                            "tensorlane:kv_cache_usage_perc" + L + "} 0.0",
                            "tensorlane:prompt_tokens_total" + L + "} 5.0",
                            "tensorlane:generation_tokens_total" + L + "} 7.0",
                            "tensorlane:request_success_total" + L + ",finished_reason=\"length\"} 1.0",
                            "tensorlane:request_success_total" + L + ",finished_reason=\"stop\"} 1.0",
                            "tensorlane:request_success_total" + L + ",finished_reason=\"abort\"} 0.0",
                            "tensorlane:time_to_first_token_seconds_count" + L + "} 2.0",
                            "tensorlane:time_to_first_token_seconds_bucket" + L + ",le=\"+Inf\"} 2.0",
                            "tensorlane:inter_token_latency_seconds_count" + L + "} 5.0",
                            "tensorlane:time_per_output_token_seconds_count" + L + "} 5.0",
                            "tensorlane:e2e_request_latency_seconds_count" + L + "} 2.0",
                            "tensorlane:request_queue_time_seconds_count" + L + "} 2.0",
                            "tensorlane:num_preemptions_total" + L + "} 0.0");
            assertThat(text)
                    .contains("tensorlane:time_to_first_token_seconds_bucket" + L + ",le=\"0.001\"}")
                    .contains("tensorlane:e2e_request_latency_seconds_bucket" + L + ",le=\"7680.0\"}");
            assertThat(lines.stream().filter(l -> l.startsWith("tensorlane:time_to_first_token_seconds_bucket")))
                    .hasSize(23);
            String scrape = m.scrape();
            assertThat(scrape)
                    .startsWith(text)
                    .contains("tensorlane_scheduler_steps_total")
                    .contains("tensorlane_scheduler_failed 0.0");
        }
    }

    @Test
    void histogramBucketsAreInclusiveAndCumulative() {
        Histogram h = new Histogram(0.1, 1.0);
        h.observe(0.1);
        h.observe(0.5);
        h.observe(1.0);
        h.observe(3.0);
        String t =
                new PromText().histogram("x", java.util.Map.of(), h.snapshot()).toString();
        assertThat(t)
                .isEqualTo(
                        "x_bucket{le=\"0.1\"} 1.0\nx_bucket{le=\"1.0\"} 3.0\nx_bucket{le=\"+Inf\"} 4.0\nx_count 4.0\nx_sum 4.6\n");
        assertThat(PromText.escape("a\"b\\c\nd")).isEqualTo("a\\\"b\\\\c\\nd");
    }
}
