package io.tensorlane.operator.support;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * Writes core/v1 Events about an object (what {@code kubectl describe} shows). Events are emitted only for decisions
 * (a changed plan, a rollout, a condition that turned True), never on a no-op reconcile. A failed event write is logged
 * and otherwise ignored: events are informative, the status is the record. The InferenceDeployment reconciler hands its
 * events to an {@link EventSink} (written from a background thread); the others write them at once.
 */
public final class EventRecorder {
    public static final String NORMAL = "Normal";
    public static final String WARNING = "Warning";
    private static final Logger LOG = Logger.getLogger(EventRecorder.class);
    private static final String COMPONENT = "tensorlane-operator";
    private static final java.util.concurrent.atomic.AtomicInteger SEQUENCE =
            new java.util.concurrent.atomic.AtomicInteger();

    private final KubernetesClient client;
    private final EventSink sink;
    private final List<Event> pending = new java.util.ArrayList<>();
    private int committed;
    private final boolean deferred;

    /** Writes each event at once. */
    public EventRecorder(KubernetesClient client) {
        this(client, false);
    }

    /**
     * @param deferred hold events until {@link #flush()}: a reconcile writes status and children first (what matters
     *     for recovery time) and its events after them
     */
    public EventRecorder(KubernetesClient client, boolean deferred) {
        this.client = client;
        this.sink = null;
        this.deferred = deferred;
    }

    /**
     * Holds events until {@link #flush()}, which hands them to {@code sink}: the reconcile writes status and children and
     * returns; the sink's thread writes the events.
     */
    public EventRecorder(EventSink sink) {
        this.client = null;
        this.sink = sink;
        this.deferred = true;
    }

    /** Writes the held events (or queues them on the sink), oldest first. */
    public void flush() {
        send(pending.size());
    }

    /**
     * Marks the events held so far as recorded: the state they report has been written (the status write that carries
     * the decision succeeded). {@link #flushCommitted()} writes only those.
     */
    public void commit() {
        committed = pending.size();
    }

    /**
     * Writes the committed events and drops the others: a reconcile that failed before its status write made no
     * decision that lasts (the next one decides again and emits its events then), so their events would be written
     * twice.
     */
    public void flushCommitted() {
        int dropped = pending.size() - committed;
        if (dropped > 0) {
            LOG.debugf("%d event(s) not written: the status they report was not written", dropped);
        }
        send(committed);
    }

    private void send(int n) {
        List<Event> out = pending.subList(0, n);
        if (sink != null) {
            sink.offer(List.copyOf(out));
        } else {
            out.forEach(this::write);
        }
        pending.clear();
        committed = 0;
    }

    public void normal(HasMetadata about, String reason, String message) {
        emit(about, NORMAL, reason, message);
    }

    public void warning(HasMetadata about, String reason, String message) {
        emit(about, WARNING, reason, message);
    }

    public void emit(HasMetadata about, String type, String reason, String message) {
        String ns = about instanceof Namespaced ? about.getMetadata().getNamespace() : "default";
        String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        // unique within this process even for many events in one millisecond (a 12-bit random suffix could collide)
        String name = about.getMetadata().getName() + "." + Long.toHexString(System.currentTimeMillis())
                + String.format("%04x", SEQUENCE.getAndIncrement() & 0xffff);
        Event event = new EventBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(ns)
                .endMetadata()
                .withNewInvolvedObject()
                .withApiVersion(about.getApiVersion())
                .withKind(about.getKind())
                .withName(about.getMetadata().getName())
                .withNamespace(about instanceof Namespaced ? ns : null)
                .withUid(about.getMetadata().getUid())
                .withResourceVersion(about.getMetadata().getResourceVersion())
                .endInvolvedObject()
                .withType(type)
                .withReason(reason)
                .withMessage(truncate(message))
                .withNewSource()
                .withComponent(COMPONENT)
                .endSource()
                .withReportingComponent(COMPONENT)
                .withReportingInstance(COMPONENT)
                .withFirstTimestamp(now)
                .withLastTimestamp(now)
                .withCount(1)
                .build();
        LOG.infof("%s %s/%s %s: %s", type, about.getKind(), about.getMetadata().getName(), reason, message);
        if (deferred) {
            pending.add(event);
        } else {
            write(event);
        }
    }

    private void write(Event event) {
        write(client, event);
    }

    /** Creates {@code event}; a failure is logged and reported as false, never thrown (events are informative). */
    static boolean write(KubernetesClient client, Event event) {
        return write(client, new EventCorrelator.Create(event));
    }

    /**
     * Creates the event, or patches count, lastTimestamp and message of the existing one (creating it when it expired);
     * a failure is logged and reported as false, never thrown (events are informative).
     */
    static boolean write(KubernetesClient client, EventCorrelator.Write w) {
        Event event = w instanceof EventCorrelator.Patch p ? p.event() : ((EventCorrelator.Create) w).event();
        var events = client.v1().events().inNamespace(w.namespace());
        try {
            if (w instanceof EventCorrelator.Patch p) {
                try {
                    // through the event itself: a patch by name alone makes the client GET the object first, and the
                    // operator
                    // may create and patch events, not read them
                    events.resource(event)
                            .patch(
                                    PatchContext.of(PatchType.STRATEGIC_MERGE),
                                    Serialization.asJson(Map.of(
                                            "count",
                                            p.count(),
                                            "lastTimestamp",
                                            p.lastTimestamp(),
                                            "message",
                                            truncate(p.message()))));
                    return true;
                } catch (KubernetesClientException e) {
                    if (e.getCode() != 404) {
                        throw e;
                    }
                }
            }
            events.resource(event).create();
            return true;
        } catch (RuntimeException e) {
            LOG.warnf(
                    "could not record event %s on %s/%s: %s",
                    event.getReason(),
                    event.getInvolvedObject().getKind(),
                    event.getInvolvedObject().getName(),
                    e.getMessage() == null ? e.toString() : e.getMessage());
            return false;
        }
    }

    private static String truncate(String message) {
        return message == null ? "" : message.length() > 1000 ? message.substring(0, 997) + "..." : message;
    }
}
