package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.llm.GraphPlan.Run;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GraphPlanTest {
    @ParameterizedTest(name = "decode={0} plain={1} timed={2} sample={3} timing={4} -> {5}")
    @CsvSource({
        // decode, hasPlain, hasTimed, sample, timingPossible -> run, timeEager, capturePlain, captureTimed
        // a prefill (or graphs off): eager, its allreduces timed when sampled, nothing captured
        "false, false, false, false, true,  EAGER,        false, false, false",
        "false, false, false, true,  true,  EAGER,        true,  false, false",
        // a bucket's first decode step: eager, then both graphs (the timed one only where timing is possible)
        "true,  false, false, false, true,  EAGER,        false, true,  true",
        "true,  false, false, true,  true,  EAGER,        true,  true,  true",
        "true,  false, false, false, false, EAGER,        false, true,  false",
        // later decode steps replay; a sampled one replays the timed graph
        "true,  true,  true,  false, true,  REPLAY_PLAIN, false, false, false",
        "true,  true,  true,  true,  true,  REPLAY_TIMED, false, false, false",
        // timing became impossible after the capture (or one rank): the plain graph, and no capture
        "true,  true,  false, true,  false, REPLAY_PLAIN, false, false, false",
        "true,  true,  false, false, false, REPLAY_PLAIN, false, false, false",
    })
    void table(
            boolean decode,
            boolean hasPlain,
            boolean hasTimed,
            boolean sample,
            boolean timingPossible,
            Run run,
            boolean timeEager,
            boolean capturePlain,
            boolean captureTimed) {
        assertThat(GraphPlan.of(decode, hasPlain, hasTimed, sample, timingPossible))
                .isEqualTo(new GraphPlan(run, timeEager, capturePlain, captureTimed));
    }

    /**
     * The rule behind the batch-32 watchdog fix, over every input: a graph is captured only at a step that ran eagerly
     * (never beside a replay), a timed graph only together with its plain one, and a replay times nothing eagerly.
     */
    @Test
    void capturesOnlyAfterAnEagerRunAndTheTimedGraphOnlyWithThePlainOne() {
        for (int bits = 0; bits < 32; bits++) {
            boolean decode = (bits & 1) != 0;
            boolean hasPlain = (bits & 2) != 0;
            boolean hasTimed = (bits & 4) != 0;
            boolean sample = (bits & 8) != 0;
            boolean timing = (bits & 16) != 0;
            GraphPlan p = GraphPlan.of(decode, hasPlain, hasTimed, sample, timing);
            String at = "inputs " + Integer.toBinaryString(bits) + " -> " + p;
            if (p.capturePlain() || p.captureTimed()) {
                assertThat(p.run()).as(at).isEqualTo(Run.EAGER);
            }
            if (p.captureTimed()) {
                assertThat(p.capturePlain()).as(at).isTrue();
            }
            if (p.replays()) {
                assertThat(decode && hasPlain).as(at).isTrue();
                assertThat(p.timeEager()).as(at).isFalse();
            }
            if (p.run() == Run.REPLAY_TIMED) {
                assertThat(hasTimed && sample).as(at).isTrue();
            }
        }
    }
}
