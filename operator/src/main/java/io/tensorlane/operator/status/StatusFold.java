package io.tensorlane.operator.status;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * When a computed status is written. A <em>transition</em> (phase, a condition's status or reason, ready replicas,
 * revisions, specs, failures, rollbacks, plans, the model, the download) is written at once. A change of
 * <em>details</em> only - how many pods of the revision exist, the nodes they were scheduled to, a condition's message
 * - waits up to {@link #DETAIL_DELAY}, so the pod events of one rollout (created, scheduled, ready) fold into the
 * transition that follows them instead of each costing a status write; a detail change that no transition follows is
 * written when the delay is over (the reconcile is rescheduled for then). Per object, in memory: after a restart a
 * waiting detail is written at the first reconcile that sees it again.
 */
public final class StatusFold {
    /** The longest a detail-only change waits for a transition to carry it. */
    public static final Duration DETAIL_DELAY = Duration.ofSeconds(2);

    /** What the reconcile does with a computed status. */
    public sealed interface Decision {}

    /** Nothing changed. */
    public record Unchanged() implements Decision {}

    /** Write it now. */
    public record Write() implements Decision {}

    /** Write nothing now; reconcile again after {@code after}. */
    public record Wait(Duration after) implements Decision {}

    private final Map<String, Instant> waitingSince = new ConcurrentHashMap<>();

    /** The decision for object {@code uid} going from {@code prev} to {@code next} at {@code now}. */
    public Decision decide(String uid, InferenceDeploymentStatus prev, InferenceDeploymentStatus next, Instant now) {
        JsonNode a = tree(prev);
        JsonNode b = tree(next);
        if (a.equals(b)) {
            waitingSince.remove(uid);
            return new Unchanged();
        }
        if (!withoutDetails(a).equals(withoutDetails(b))) {
            waitingSince.remove(uid);
            return new Write();
        }
        forgetOld(now);
        Instant since = waitingSince.computeIfAbsent(uid, k -> now);
        Duration left = Duration.between(now, since.plus(DETAIL_DELAY));
        if (left.isZero() || left.isNegative()) {
            waitingSince.remove(uid);
            return new Write();
        }
        return new Wait(left);
    }

    /** Objects with a detail change waiting (deleted objects' entries go after ten delays). */
    int waiting() {
        return waitingSince.size();
    }

    private void forgetOld(Instant now) {
        Instant cutoff = now.minus(DETAIL_DELAY.multipliedBy(10));
        waitingSince.values().removeIf(t -> t.isBefore(cutoff));
    }

    private static JsonNode tree(InferenceDeploymentStatus s) {
        return Serialization.jsonMapper().valueToTree(s == null ? new InferenceDeploymentStatus() : s);
    }

    /** The status with its details removed: pod count, the revision's nodes, the conditions' messages. */
    static JsonNode withoutDetails(JsonNode status) {
        JsonNode t = status.deepCopy();
        if (t instanceof ObjectNode o) {
            o.remove("replicas");
            if (o.get("topology") instanceof ObjectNode topo) {
                topo.remove("nodes");
            }
            if (o.get("conditions") != null) {
                for (JsonNode c : o.get("conditions")) {
                    if (c instanceof ObjectNode co) {
                        co.remove("message");
                    }
                }
            }
        }
        return t;
    }
}
