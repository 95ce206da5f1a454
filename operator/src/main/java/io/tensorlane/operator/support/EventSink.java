package io.tensorlane.operator.support;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.jboss.logging.Logger;

/**
 * Writes Events from one background thread, in the order they were queued, so that a reconcile never waits for them:
 * status and children are what recovery time depends on, events are informative (as in client-go, whose recorder is
 * asynchronous too). The queue is bounded; when it is full an event is dropped, counted and logged, never blocking the
 * reconciler. Under a burst (1,000 first rollouts at once) events trail the rollouts they describe; {@link #pending()}
 * says by how many.
 */
public final class EventSink implements AutoCloseable {
  /** Events held at most; beyond this new events are dropped. */
  public static final int CAPACITY = 10_000;
  private static final Logger LOG = Logger.getLogger(EventSink.class);
  private static final Event STOP = new Event();

  private final KubernetesClient client;
  private final DecisionMetrics metrics;
  private final BlockingQueue<Event> queue;
  private final AtomicLong written = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicLong outstanding = new AtomicLong();
  private final Thread writer;

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
    this.queue = new LinkedBlockingQueue<>(capacity);
    if (metrics != null) {
      metrics.registry().gauge("tensorlane.events.pending", this, EventSink::pending);
    }
    this.writer = new Thread(this::drain, "tensorlane-events");
    writer.setDaemon(true);
    writer.start();
  }

  /** Queues {@code event}; false (and the event is dropped) when the queue is full or the sink is closed. */
  public boolean offer(Event event) {
    outstanding.incrementAndGet();
    if (!writer.isAlive() || !queue.offer(event)) {
      outstanding.decrementAndGet();
      long n = dropped.incrementAndGet();
      if (metrics != null) {
        metrics.registry().counter("tensorlane.events.dropped").increment();
      }
      if (n == 1 || n % 1000 == 0) {
        LOG.warnf("event not queued (%s, %d held): dropped %d event(s) so far, latest %s on %s/%s",
            writer.isAlive() ? "queue full" : "writer stopped", queue.size(), n,
            event.getReason(), event.getInvolvedObject().getKind(), event.getInvolvedObject().getName());
      }
      return false;
    }
    return true;
  }

  /** Events queued or being written. */
  public long pending() {
    return outstanding.get();
  }

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
    while (true) {
      Event event;
      try {
        event = queue.take();
      } catch (InterruptedException e) {
        return;
      }
      if (event == STOP) {
        return;
      }
      try {
        (EventRecorder.write(client, event) ? written : failed).incrementAndGet();
      } finally {
        outstanding.decrementAndGet();
      }
    }
  }
}
