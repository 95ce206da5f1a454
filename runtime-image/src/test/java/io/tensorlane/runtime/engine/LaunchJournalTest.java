package io.tensorlane.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LaunchJournalTest {
    @Test
    void keepsTheLastLaunchesOldestFirstNumberedSinceTheStart() {
        LaunchJournal j = new LaunchJournal(3);
        assertThat(j.lines()).isEmpty();
        j.record("a");
        j.record("b");
        assertThat(j.lines()).containsExactly("#1 a", "#2 b");
        j.record("c");
        j.record("d");
        j.record("e");
        assertThat(j.lines()).containsExactly("#3 c", "#4 d", "#5 e");
    }
}
