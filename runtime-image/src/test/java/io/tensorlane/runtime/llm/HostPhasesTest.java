package io.tensorlane.runtime.llm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HostPhasesTest {
    /** Marks 1 us apart per phase index + 1: phase i lasts (i + 1) us, offset by {@code shift} us on phase 0. */
    private static HostPhases.Marks marks(long shift) {
        long[] at = new long[HostPhases.NAMES.size() + 1];
        at[0] = 1_000_000;
        for (int i = 1; i < at.length; i++) {
            at[i] = at[i - 1] + 1000L * i + (i == 1 ? 1000L * shift : 0);
        }
        return new HostPhases.Marks(at);
    }

    @Test
    void phasesAreTheTimesBetweenMarks() {
        double[] us = marks(0).micros();
        assertEquals(HostPhases.NAMES.size(), us.length);
        for (int i = 0; i < us.length; i++) {
            assertEquals(i + 1, us[i], 1e-9, HostPhases.NAMES.get(i));
        }
    }

    @Test
    void mediansPerPhaseIgnoreMissingMarks() {
        HostPhases.Marks failed = marks(0);
        failed.at()[3] = 0; // a rank task that ended before its third mark: phases 2 and 3 unknown
        Map<String, Double> m = HostPhases.medians(List.of(marks(0), marks(10), marks(20), failed));
        assertEquals(List.copyOf(HostPhases.NAMES), List.copyOf(m.keySet()));
        assertEquals(6.0, m.get(HostPhases.NAMES.get(0)), 1e-9); // 1, 1, 11, 21 -> (1 + 11) / 2
        assertEquals(3.0, m.get(HostPhases.NAMES.get(2)), 1e-9); // three known steps
        assertTrue(Double.isNaN(failed.micros()[2]));
        assertTrue(HostPhases.format(m).startsWith("hand-off to rank 0 6.0 us, upload inputs 2.0 us"));
    }

    @Test
    void noStepsNoMedians() {
        assertTrue(HostPhases.medians(List.of()).isEmpty());
    }

    @Test
    void startTakesTheFirstMarkAndMarkTheOthers() {
        HostPhases.Marks m = HostPhases.Marks.start();
        assertTrue(m.at()[0] > 0);
        assertTrue(Double.isNaN(m.micros()[0]));
        m.mark(0);
        assertTrue(m.micros()[0] >= 0);
    }
}
