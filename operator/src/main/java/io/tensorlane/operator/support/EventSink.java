package io.tensorlane.operator.support;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.jboss.logging.Logger;

/**
 * Writes Events from one background thread, in the order they were queued, so that a reconcile never waits for them:
 * status and children are what recovery time depends on, events are informative (as in client-go, whose recorder is
 * asynchronous too). The queue is bounded; when it is full an event is dropped, counted and logged, never blocking the
 * reconciler. Under a burst (1,000 first rollouts at once) events trail the rollouts they describe; {@link #pending()}
 * says by how many. Repeats are aggregated as client-go's recorder does ({@link EventCorrelator}): an event equal to one
 * already written raises that Event's count with a small patch, and repeats queued together are one write.
 */
public final class EventSink implements AutoCloseable {
    /** Events held at most; beyond this new events are dropped. */
    public static final int CAPACITY = 10_000;

    private static final Logger LOG = Logger.getLogger(EventSink.class);
    private static final List<Event> STOP = new ArrayList<>(0); // compared by identity
    /** Batches taken from the queue at once (and folded together where they repeat). */
    private static final int BATCHES = 100;

    private final KubernetesClient client;
    private final DecisionMetrics metrics;
    private final BlockingQueue<List<Event>> queue;
    private final int capacity;
    private final AtomicLong written = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong outstanding = new AtomicLong();
    private final Thread writer;
    private final EventCorrelator correlator = new EventCorrelator();

    /**
     * @param metrics where {@code tensorlane_events_pending} (gauge) and {@code tensorlane_events_dropped_total} go; null
     *     for none
     */
    public EventSink(KubernetesClient client, DecisionMetrics metrics) {
        this(client, metrics, CAPACITY);
    }

    EventSink(KubernetesClient client, DecisionMetrics metrics, int capacity) {
        this.client = client;
        this.metrics = metrics;
        this.capacity = capacity;
        this.queue = new LinkedBlockingQueue<>();
        if (metrics != null) {
            metrics.registry().gauge("tensorlane.events.pending", this, EventSink::pending);
        }
        this.writer = new Thread(this::drain, "tensorlane-events");
        writer.setDaemon(true);
        writer.start();
    }

    /** Queues {@code event}; false (and the event is dropped) when the queue is full or the sink is closed. */
    public boolean offer(Event event) {
        return offer(List.of(event));
    }

    /**
     * Queues {@code events} (one reconcile's, oldest first) to be written together, so repeats among them are one write;
     * false (and they are dropped) when they do not fit the queue or the sink is closed.
     */
    public boolean offer(List<Event> events) {
        if (events.isEmpty()) {
            return true;
        }
        int n = events.size();
        long held = outstanding.addAndGet(n);
        if (!writer.isAlive() || held > capacity || !queue.offer(events)) {
            outstanding.addAndGet(-n);
            long total = dropped.addAndGet(n);
            if (metrics != null) {
                metrics.registry().counter("tensorlane.events.dropped").increment(n);
            }
            if (total == n || total / 1000 != (total - n) / 1000) {
                Event event = events.get(n - 1);
                LOG.warnf(
                        "event not queued (%s, %d held): dropped %d event(s) so far, latest %s on %s/%s",
                        writer.isAlive() ? "queue full" : "writer stopped",
                        held - n,
                        total,
                        event.getReason(),
                        event.getInvolvedObject().getKind(),
                        event.getInvolvedObject().getName());
            }
            return false;
        }
        return true;
    }

    /** Events queued or being written. */
    public long pending() {
        return outstanding.get();
    }

    /** Event API writes (creates and count patches) that succeeded. */
    public long written() {
        return written.get();
    }

    public long failed() {
        return failed.get();
    }

    public long dropped() {
        return dropped.get();
    }

    /** Stops the writer after the events already queued (waiting at most {@code millis}). */
    public void close(long millis) {
        queue.offer(STOP);
        try {
            writer.join(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        writer.interrupt();
    }

    @Override
    public void close() {
        close(5_000);
    }

    private void drain() {
        List<List<Event>> batches = new ArrayList<>();
        while (true) {
            batches.clear();
            try {
                batches.add(queue.take());
            } catch (InterruptedException e) {
                return;
            }
            queue.drainTo(batches, BATCHES - 1);
            boolean stop = false;
            List<Event> events = new ArrayList<>();
            for (List<Event> b : batches) {
                if (b == STOP) {
                    stop = true;
                    break;
                }
                events.addAll(b);
            }
            try {
                // what is queued together is written together: repeats become one count
                Instant now = Instant.now();
                List<EventCorrelator.Write> writes = new ArrayList<>();
                events.forEach(e -> writes.add(correlator.correlate(e, now)));
                for (EventCorrelator.Write w : EventCorrelator.fold(writes)) {
                    boolean ok = EventRecorder.write(client, w);
                    (ok ? written : failed).incrementAndGet();
                    if (!ok) {
                        correlator.forget(w.namespace(), w.name());
                    }
                }
            } finally {
                outstanding.addAndGet(-events.size());
            }
            if (stop) {
                return;
            }
        }
    }
}
