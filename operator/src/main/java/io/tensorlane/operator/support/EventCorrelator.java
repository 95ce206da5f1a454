package io.tensorlane.operator.support;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectReference;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Aggregates Events the way client-go's event recorder does (its {@code EventCorrelator}), so that a repeated event
 * costs one small PATCH instead of a new object, and a burst of them one write:
 * <ul>
 *   <li>An event equal to one already written (same object, type, reason, message, component) becomes a patch of that
 *       Event: {@code count + 1}, {@code lastTimestamp} now.</li>
 *   <li>Similar events (same object, type and reason, different messages): after {@value #MAX_SIMILAR} distinct messages
 *       within {@link #SIMILAR_WINDOW}, the next ones are combined into one Event whose message starts with
 *       {@value #COMBINED} and whose count grows.</li>
 *   <li>At most {@value #MAX_KEYS} keys are remembered (least recently used first out); a forgotten event is created
 *       again.</li>
 * </ul>
 * Not thread-safe: the one writer thread of {@link EventSink} owns it. Deterministic for a given sequence of events and
 * times.
 */
public final class EventCorrelator {
    public static final int MAX_SIMILAR = 10;
    public static final Duration SIMILAR_WINDOW = Duration.ofMinutes(10);
    public static final int MAX_KEYS = 4096;
    public static final String COMBINED = "(combined from similar events): ";

    /** What to send for one event. */
    public sealed interface Write {
        /** The namespace and name of the Event written. */
        String namespace();

        String name();
    }

    /** Create {@code event} (its count may be above 1 when several were folded into it before it was written). */
    public record Create(Event event) implements Write {
        @Override
        public String namespace() {
            return event.getMetadata().getNamespace();
        }

        @Override
        public String name() {
            return event.getMetadata().getName();
        }
    }

    /**
     * Patch the existing Event {@code namespace/name}: count, lastTimestamp and message; {@code event} is the whole
     * Event to create instead should it be gone (events expire after an hour).
     */
    public record Patch(String namespace, String name, int count, String lastTimestamp, String message, Event event)
            implements Write {}

    private record Seen(String namespace, String name, String firstTimestamp, int count) {}

    private record Similar(Set<String> messages, Instant last) {}

    private final Map<String, Seen> seen = lru();
    private final Map<String, Similar> similar = lru();

    /** What to write for {@code event} (count 1, first = last timestamp) emitted at {@code now}. */
    public Write correlate(Event event, Instant now) {
        String similarKey = similarKey(event);
        Similar s = similar.get(similarKey);
        if (s == null || s.last().plus(SIMILAR_WINDOW).isBefore(now)) {
            s = new Similar(new HashSet<>(), now);
        }
        Set<String> messages = s.messages();
        messages.add(event.getMessage());
        similar.put(similarKey, new Similar(messages, now));
        Event e = event;
        String key = similarKey + "\u0000" + event.getMessage();
        if (messages.size() > MAX_SIMILAR) {
            e = copy(event);
            e.setMessage(COMBINED + event.getMessage());
            key = similarKey + "\u0000" + COMBINED;
        }
        Seen last = seen.get(key);
        if (last == null) {
            seen.put(
                    key,
                    new Seen(e.getMetadata().getNamespace(), e.getMetadata().getName(), e.getFirstTimestamp(), 1));
            return new Create(e);
        }
        Seen next = new Seen(last.namespace(), last.name(), last.firstTimestamp(), last.count() + 1);
        seen.put(key, next);
        Event whole = copy(e);
        whole.getMetadata().setNamespace(next.namespace());
        whole.getMetadata().setName(next.name());
        whole.setFirstTimestamp(next.firstTimestamp());
        whole.setCount(next.count());
        return new Patch(next.namespace(), next.name(), next.count(), e.getLastTimestamp(), e.getMessage(), whole);
    }

    /**
     * Folds {@code writes} (in order) into as few requests as give the same result: a create followed by patches of the
     * same Event becomes one create with the last count, and patches of one Event become the last of them. The order of
     * the first write of each Event is kept.
     */
    public static List<Write> fold(List<Write> writes) {
        Map<String, Write> out = new LinkedHashMap<>();
        for (Write w : writes) {
            String id = w.namespace() + "/" + w.name();
            Write before = out.get(id);
            if (before instanceof Create c && w instanceof Patch p) {
                Event e = copy(c.event());
                e.setCount(p.count());
                e.setLastTimestamp(p.lastTimestamp());
                e.setMessage(p.message());
                out.put(id, new Create(e));
            } else {
                out.put(id, w);
            }
        }
        return List.copyOf(out.values());
    }

    /** Forgets the Event {@code namespace/name} (its write failed: the next equal event creates it again). */
    public void forget(String namespace, String name) {
        seen.values().removeIf(s -> Objects.equals(s.namespace(), namespace) && Objects.equals(s.name(), name));
    }

    /** Keys held (tests). */
    int size() {
        return seen.size();
    }

    private static String similarKey(Event e) {
        ObjectReference o = e.getInvolvedObject();
        return String.join(
                "\u0000",
                String.valueOf(e.getSource() == null ? null : e.getSource().getComponent()),
                String.valueOf(o.getKind()),
                String.valueOf(o.getNamespace()),
                String.valueOf(o.getName()),
                String.valueOf(o.getUid()),
                String.valueOf(o.getApiVersion()),
                String.valueOf(e.getType()),
                String.valueOf(e.getReason()));
    }

    private static Event copy(Event e) {
        return new io.fabric8.kubernetes.api.model.EventBuilder(e).build();
    }

    private static <V> Map<String, V> lru() {
        return new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
                return size() > MAX_KEYS;
            }
        };
    }
}
