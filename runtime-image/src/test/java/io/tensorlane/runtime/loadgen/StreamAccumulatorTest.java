package io.tensorlane.runtime.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** Synthetic timestamps (ns from 0): exact arithmetic. */
class StreamAccumulatorTest {
    static final long MS = 1_000_000;
    static final Workload.Prompt PROMPT = new Workload.Prompt(3, "hello", null, 5, 4);

    static String text(String t) {
        return "{\"choices\":[{\"index\":0,\"text\":\"" + t + "\",\"finish_reason\":null}]}";
    }

    static StreamAccumulator ok() {
        StreamAccumulator a = new StreamAccumulator(0);
        a.status(200);
        return a;
    }

    @Test
    void ttftItlTpotAndUsageFromACompletionsStream() {
        StreamAccumulator a = ok();
        a.event(text("a"), 100 * MS);
        a.event(text("b"), 120 * MS);
        a.event(text(""), 125 * MS); // empty text: not a content chunk
        a.event(text("c"), 150 * MS);
        a.event(text("d"), 160 * MS);
        a.event(
                "{\"choices\":[],\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":4,\"total_tokens\":15}}",
                161 * MS);
        a.event("[DONE]", 170 * MS);
        a.event(text("ignored after DONE"), 180 * MS);
        RequestRecord r = a.finish("c=1", PROMPT, 2.0, 999 * MS, null);
        assertThat(r.success()).isTrue();
        assertThat(r.error()).isNull();
        assertThat(r.index()).isEqualTo(3);
        assertThat(r.startMs()).isEqualTo(2.0);
        assertThat(r.ttftMs()).isCloseTo(100, within(1e-9));
        assertThat(r.e2eMs()).isCloseTo(170, within(1e-9)); // to [DONE], not to the connection's end
        assertThat(r.itlMs()).containsExactly(20, 30, 10);
        assertThat(r.contentChunks()).isEqualTo(4);
        assertThat(r.inputTokens()).isEqualTo(11);
        assertThat(r.outputTokens()).isEqualTo(4);
        assertThat(r.tpotMs()).isCloseTo((170 - 100) / 3.0, within(1e-9));
    }

    @Test
    void usageDecidesTheTokenCountWhenChunksCarrySeveralTokens() {
        StreamAccumulator a = ok();
        a.event(text("ab"), 10 * MS);
        a.event(text("cd"), 30 * MS);
        a.event("{\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":9}}", 31 * MS);
        a.event("[DONE]", 40 * MS);
        RequestRecord r = a.finish("c=1", PROMPT, 0, 40 * MS, null);
        assertThat(r.outputTokens()).isEqualTo(9);
        assertThat(r.tpotMs()).isCloseTo(30 / 8.0, within(1e-9));
    }

    @Test
    void chatDeltasCountContentOnlyAndFallBackToChunkCountWithoutUsage() {
        StreamAccumulator a = ok();
        a.event("{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}", 5 * MS);
        a.event("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}", 50 * MS);
        a.event("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there\"}}]}", 70 * MS);
        a.event("{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}", 71 * MS);
        a.event("[DONE]", 72 * MS);
        RequestRecord r = a.finish("c=1", PROMPT, 0, 80 * MS, null);
        assertThat(r.success()).isTrue();
        assertThat(r.ttftMs()).isCloseTo(50, within(1e-9));
        assertThat(r.outputTokens()).isEqualTo(2);
        assertThat(r.inputTokens()).isEqualTo(5); // planned
        assertThat(r.tpotMs()).isCloseTo(22, within(1e-9));
    }

    @Test
    void oneTokenHasNoTpot() {
        StreamAccumulator a = ok();
        a.event(text("a"), 10 * MS);
        a.event("[DONE]", 12 * MS);
        RequestRecord r = a.finish("c=1", PROMPT, 0, 12 * MS, null);
        assertThat(r.success()).isTrue();
        assertThat(r.tpotMs()).isNaN();
    }

    @Test
    void httpErrorKeepsStatusAndBody() {
        StreamAccumulator a = new StreamAccumulator(0);
        a.status(429);
        a.errorLine("{\"error\": {\"message\": \"slow down\"}}");
        RequestRecord r = a.finish("c=1", PROMPT, 0, 3 * MS, null);
        assertThat(r.success()).isFalse();
        assertThat(r.status()).isEqualTo(429);
        assertThat(r.error()).isEqualTo("HTTP 429: {\"error\": {\"message\": \"slow down\"}}");
        assertThat(r.e2eMs()).isCloseTo(3, within(1e-9));
        assertThat(r.ttftMs()).isNaN();
    }

    @Test
    void streamErrorObjectMissingDoneNoContentAndTransportFailuresFail() {
        StreamAccumulator e = ok();
        e.event(text("a"), MS);
        e.event("{\"error\":{\"message\":\"KV cache full\",\"code\":503}}", 2 * MS);
        e.event("[DONE]", 3 * MS);
        assertThat(e.finish("l", PROMPT, 0, 3 * MS, null).error()).isEqualTo("stream error: KV cache full");

        StreamAccumulator noDone = ok();
        noDone.event(text("a"), MS);
        assertThat(noDone.finish("l", PROMPT, 0, 3 * MS, null).error()).isEqualTo("stream ended without [DONE]");

        StreamAccumulator empty = ok();
        empty.event("[DONE]", MS);
        assertThat(empty.finish("l", PROMPT, 0, 3 * MS, null).error()).isEqualTo("stream had no content chunk");

        StreamAccumulator garbage = ok();
        garbage.event("not json", MS);
        garbage.event(text("a"), MS);
        garbage.event("[DONE]", MS);
        assertThat(garbage.finish("l", PROMPT, 0, 3 * MS, null).error())
                .startsWith("unparseable stream chunk: not json");

        StreamAccumulator timedOut = ok();
        timedOut.event(text("a"), MS);
        RequestRecord r = timedOut.finish("l", PROMPT, 0, 500 * MS, "timed out after 500 ms");
        assertThat(r.success()).isFalse();
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.error()).isEqualTo("timed out after 500 ms");
        assertThat(r.e2eMs()).isCloseTo(500, within(1e-9));
    }
}
