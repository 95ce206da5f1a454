package io.tensorlane.operator.model;

import io.tensorlane.operator.model.ModelInspector.Inspection;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * One read per model: results by source (with the revision asked for) and credential, shared by every deployment.
 * Reads run on a small executor, never on a reconcile thread; a reconcile gets the result when it is there and comes
 * back later when it is not. A result for a commit sha is kept (a commit never changes); for a branch or tag it is
 * kept for {@code branchTtl}; a failure for {@code failureTtl}, so a fixed Secret or a model made public is picked
 * up. The credential is a sha256 fingerprint of the token, so two tokens never share a result and no token is stored.
 */
public final class InspectionCache {
    private static final Pattern COMMIT = Pattern.compile("^[0-9a-f]{40}$");
    private static final int MAX_ENTRIES = 2048;

    /** Source URI (hf://org/name@revision) and token fingerprint ("anonymous" without one). */
    public record Key(String source, String credential) {
        public static Key of(String source, String token) {
            return new Key(source, token == null || token.isEmpty() ? "anonymous" : fingerprint(token));
        }
    }

    private record Entry(CompletableFuture<Inspection> future, Instant started) {}

    private final Map<Key, Entry> entries = new ConcurrentHashMap<>();
    private final ExecutorService executor;
    private final Clock clock;
    private final Duration branchTtl;
    private final Duration failureTtl;

    public InspectionCache(ExecutorService executor, Clock clock, Duration branchTtl, Duration failureTtl) {
        this.executor = executor;
        this.clock = clock;
        this.branchTtl = branchTtl;
        this.failureTtl = failureTtl;
    }

    /**
     * The result for {@code key} when known; otherwise starts {@code read} once (concurrent callers share it) and
     * returns null.
     */
    public Inspection get(Key key, Supplier<Inspection> read) {
        Instant now = clock.instant();
        Entry e = entries.compute(
                key,
                (k, old) -> old != null && !expired(k, old, now)
                        ? old
                        : new Entry(CompletableFuture.supplyAsync(read, executor), now));
        if (entries.size() > MAX_ENTRIES) {
            entries.entrySet().removeIf(x -> x.getValue().future().isDone() && expired(x.getKey(), x.getValue(), now));
        }
        return e.future().getNow(null);
    }

    private boolean expired(Key key, Entry e, Instant now) {
        if (!e.future().isDone()) {
            return false;
        }
        Inspection r = e.future().getNow(null);
        if (r instanceof Inspection.Known) {
            String rev = key.source().substring(key.source().lastIndexOf('@') + 1);
            return !COMMIT.matcher(rev).matches() && e.started().plus(branchTtl).isBefore(now);
        }
        return !e.started().plus(failureTtl).isAfter(now);
    }

    /** Entries held (tests, metrics). */
    public int size() {
        return entries.size();
    }

    static String fingerprint(String token) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)))
                    .substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java runtime", e);
        }
    }
}
