package io.tensorlane.operator.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Event aggregation as client-go's recorder does it: repeats patch a count, many similar ones are combined. */
class EventCorrelatorTest {
    private static final Instant T0 = Instant.parse("2026-12-01T00:00:00Z");

    /** One emitted event: object, reason, message, seconds after T0. */
    record In(String object, String reason, String message, long at) {}

    /** What must be written for it: C (create) or P (patch), the Event written (by the step that created it), count. */
    record Out(char kind, int eventOfStep, int count, String message) {}

    static In in(String object, String reason, String message, long at) {
        return new In(object, reason, message, at);
    }

    static Out create(int step, String message) {
        return new Out('C', step, 1, message);
    }

    static Out patch(int step, int count, String message) {
        return new Out('P', step, count, message);
    }

    static Stream<Arguments> cases() {
        List<In> eleven = new ArrayList<>();
        List<Out> elevenOut = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            eleven.add(in("a", "Degraded", "pod p-" + i + " failed", i));
            elevenOut.add(
                    i < 10
                            ? create(i, "pod p-" + i + " failed")
                            : i == 10
                                    ? create(10, "(combined from similar events): pod p-10 failed")
                                    : patch(10, 2, "(combined from similar events): pod p-11 failed"));
        }
        return Stream.of(
                Arguments.of(
                        "a first event is created", List.of(in("a", "Ready", "1/1", 0)), List.of(create(0, "1/1"))),
                Arguments.of(
                        "an equal event raises the count of the first",
                        List.of(
                                in("a", "Degraded", "OOM", 0),
                                in("a", "Degraded", "OOM", 5),
                                in("a", "Degraded", "OOM", 9)),
                        List.of(create(0, "OOM"), patch(0, 2, "OOM"), patch(0, 3, "OOM"))),
                Arguments.of(
                        "another message is another event",
                        List.of(in("a", "Degraded", "OOM", 0), in("a", "Degraded", "CrashLoopBackOff", 1)),
                        List.of(create(0, "OOM"), create(1, "CrashLoopBackOff"))),
                Arguments.of(
                        "another reason is another event",
                        List.of(in("a", "Ready", "x", 0), in("a", "Stable", "x", 1)),
                        List.of(create(0, "x"), create(1, "x"))),
                Arguments.of(
                        "another object is another event",
                        List.of(in("a", "Ready", "x", 0), in("b", "Ready", "x", 1)),
                        List.of(create(0, "x"), create(1, "x"))),
                Arguments.of(
                        "an equal event much later still counts (client-go keeps the count until the key is evicted)",
                        List.of(in("a", "Ready", "x", 0), in("a", "Ready", "x", 3600)),
                        List.of(create(0, "x"), patch(0, 2, "x"))),
                Arguments.of(
                        "from the 11th distinct message within 10 minutes similar events are combined",
                        eleven,
                        elevenOut),
                Arguments.of(
                        "after 10 quiet minutes similar messages start over",
                        Stream.concat(
                                        eleven.subList(0, 10).stream(),
                                        Stream.of(in("a", "Degraded", "pod p-10 failed", 10 + 601)))
                                .toList(),
                        Stream.concat(elevenOut.subList(0, 10).stream(), Stream.of(create(10, "pod p-10 failed")))
                                .toList()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void correlates(String name, List<In> ins, List<Out> outs) {
        EventCorrelator c = new EventCorrelator();
        List<Event> emitted = new ArrayList<>();
        for (int i = 0; i < ins.size(); i++) {
            In x = ins.get(i);
            Event e = event(x, "e" + i);
            emitted.add(e);
            EventCorrelator.Write w = c.correlate(e, T0.plusSeconds(x.at()));
            Out o = outs.get(i);
            assertThat(w.name())
                    .as("step %d writes the event of step %d", i, o.eventOfStep())
                    .isEqualTo("e" + o.eventOfStep());
            if (o.kind() == 'C') {
                assertThat(w).as("step %d", i).isInstanceOf(EventCorrelator.Create.class);
                Event created = ((EventCorrelator.Create) w).event();
                assertThat(created.getMessage()).isEqualTo(o.message());
                assertThat(created.getCount()).isEqualTo(1);
            } else {
                assertThat(w).as("step %d", i).isInstanceOf(EventCorrelator.Patch.class);
                EventCorrelator.Patch p = (EventCorrelator.Patch) w;
                assertThat(p.count()).isEqualTo(o.count());
                assertThat(p.message()).isEqualTo(o.message());
                assertThat(p.lastTimestamp()).isEqualTo(T0.plusSeconds(x.at()).toString());
                assertThat(p.event().getFirstTimestamp())
                        .as("the first occurrence's time is kept")
                        .isEqualTo(emitted.get(o.eventOfStep()).getFirstTimestamp());
                assertThat(p.event().getCount()).isEqualTo(o.count());
            }
        }
    }

    @Test
    void repeatsQueuedTogetherAreOneWrite() {
        EventCorrelator c = new EventCorrelator();
        List<EventCorrelator.Write> writes = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            writes.add(c.correlate(event(in("a", "Degraded", "OOM", i), "e" + i), T0.plusSeconds(i)));
        }
        writes.add(c.correlate(event(in("b", "Ready", "1/1", 5), "e5"), T0.plusSeconds(5)));
        List<EventCorrelator.Write> folded = EventCorrelator.fold(writes);
        assertThat(folded).hasSize(2);
        Event first = ((EventCorrelator.Create) folded.get(0)).event();
        assertThat(first.getMetadata().getName()).isEqualTo("e0");
        assertThat(first.getCount()).isEqualTo(5);
        assertThat(first.getFirstTimestamp()).isEqualTo(T0.toString());
        assertThat(first.getLastTimestamp()).isEqualTo(T0.plusSeconds(4).toString());
        assertThat(((EventCorrelator.Create) folded.get(1)).event().getReason()).isEqualTo("Ready");

        // once written, the next repeat is a patch of it; folded patches are the last one
        List<EventCorrelator.Write> later = List.of(
                c.correlate(event(in("a", "Degraded", "OOM", 9), "e9"), T0.plusSeconds(9)),
                c.correlate(event(in("a", "Degraded", "OOM", 10), "e10"), T0.plusSeconds(10)));
        assertThat(EventCorrelator.fold(later))
                .singleElement()
                .isInstanceOfSatisfying(
                        EventCorrelator.Patch.class, p -> assertThat(p.count()).isEqualTo(7));
    }

    @Test
    void aForgottenEventIsCreatedAgainAndTheCacheIsBounded() {
        EventCorrelator c = new EventCorrelator();
        c.correlate(event(in("a", "Ready", "x", 0), "e0"), T0);
        c.forget("ns", "e0");
        assertThat(c.correlate(event(in("a", "Ready", "x", 1), "e1"), T0.plusSeconds(1)))
                .isInstanceOf(EventCorrelator.Create.class);
        for (int i = 0; i < EventCorrelator.MAX_KEYS + 10; i++) {
            c.correlate(event(in("o" + i, "Ready", "x", 2), "f" + i), T0.plusSeconds(2));
        }
        assertThat(c.size()).isEqualTo(EventCorrelator.MAX_KEYS);
        assertThat(c.correlate(event(in("o0", "Ready", "x", 3), "g"), T0.plusSeconds(3)))
                .as("the least recently used key went first")
                .isInstanceOf(EventCorrelator.Create.class);
    }

    static Event event(In x, String name) {
        String at = T0.plusSeconds(x.at()).toString();
        return new EventBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace("ns")
                .endMetadata()
                .withNewInvolvedObject()
                .withKind("InferenceDeployment")
                .withApiVersion("tensorlane.io/v1alpha1")
                .withNamespace("ns")
                .withName(x.object())
                .withUid("uid-" + x.object())
                .endInvolvedObject()
                .withType("Normal")
                .withReason(x.reason())
                .withMessage(x.message())
                .withNewSource()
                .withComponent("tensorlane-operator")
                .endSource()
                .withFirstTimestamp(at)
                .withLastTimestamp(at)
                .withCount(1)
                .build();
    }
}
