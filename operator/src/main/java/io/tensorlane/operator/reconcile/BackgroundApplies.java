package io.tensorlane.operator.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.jboss.logging.Logger;

/**
 * Server-side applies that a reconcile hands off instead of waiting for: the Service. A new Service waits for its
 * ClusterIP allocation, and the API server hands those out one after another: in the scale benchmark (1,000 Services
 * at once, 2026-11-29) the mean Service apply took 1.8 s against 77 ms for a Deployment, by the API server's own
 * request metrics. A reconcile that waited for it would hold a reconciler thread as long and queue the next rollouts
 * behind it, although nothing in a rollout needs the Service first. The deployment does not report Ready until its
 * Service is in place ({@code StatusAggregator}); the Service's informer event triggers the reconcile that sees it.
 *
 * <p>One write per object and desired state is in flight at a time; a write that succeeded is not repeated for
 * {@link #SETTLE} while the informer catches up; a failed one is logged, its message kept for the status, and retried
 * by a later reconcile (the deployment is not settled while its Service is missing, so it is requeued).
 */
final class BackgroundApplies implements AutoCloseable {
  /** How long a successful write is trusted while the informer cache still shows the older object. */
  static final Duration SETTLE = Duration.ofSeconds(30);
  private static final Logger LOG = Logger.getLogger(BackgroundApplies.class);
  private static final AtomicInteger POOLS = new AtomicInteger();

  private final ExecutorService pool;
  private final Map<String, String> inFlight = new ConcurrentHashMap<>();
  private final Map<String, Done> done = new ConcurrentHashMap<>();
  private final Map<String, String> errors = new ConcurrentHashMap<>();

  private record Done(String hash, long atNanos) {
  }

  BackgroundApplies(int threads) {
    int id = POOLS.incrementAndGet();
    AtomicInteger n = new AtomicInteger();
    this.pool = Executors.newFixedThreadPool(threads, r -> {
      Thread t = new Thread(r, "tensorlane-apply-" + id + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Queues the apply of {@code desired} unless {@code live} already carries it, the same write is in flight, or it
   * succeeded less than {@link #SETTLE} ago (and {@code live} exists). Returns whether a write was queued.
   */
  boolean submit(ChildApplier applier, HasMetadata desired, HasMetadata live) {
    if (ChildApplier.upToDate(desired, live)) {
      return false;
    }
    String id = id(desired);
    String hash = ChildApplier.hash(desired);
    Done d = done.get(id);
    if (live != null && d != null && d.hash().equals(hash)
        && System.nanoTime() - d.atNanos() < SETTLE.toNanos()) {
      return false;
    }
    if (inFlight.putIfAbsent(id, hash) != null) {
      return false;
    }
    try {
      pool.execute(() -> {
        try {
          applier.apply(desired, live);
          done.put(id, new Done(hash, System.nanoTime()));
          errors.remove(id);
        } catch (RuntimeException e) {
          errors.put(id, e.getMessage() == null ? e.toString() : e.getMessage());
          LOG.warnf("could not apply %s: %s", id, e.getMessage());
        } finally {
          inFlight.remove(id);
        }
      });
    } catch (RuntimeException e) { // rejected: the pool is shut down
      inFlight.remove(id);
      throw e;
    }
    return true;
  }

  /** Why {@code desired} is not in place yet: its last write's error, or that it is being written. */
  Optional<String> problem(HasMetadata desired, HasMetadata live) {
    if (ChildApplier.upToDate(desired, live)) {
      return Optional.empty();
    }
    String id = id(desired);
    String error = errors.get(id);
    return Optional.of(error != null ? "applying " + id + " failed: " + error
        : live == null ? id + " is being created" : id + " is being updated");
  }

  /** Writes queued or running. */
  int pending() {
    return inFlight.size();
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }

  private static String id(HasMetadata o) {
    return o.getKind() + " " + o.getMetadata().getNamespace() + "/" + o.getMetadata().getName();
  }
}
