package io.tensorlane.operator.reconcile;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The revision this process last announced (RolloutStarted) per InferenceDeployment uid, so a revision is announced
 * once even when a later reconcile applies it again because its caches do not show the children yet. In memory, as
 * client-go's event correlator: after a restart a revision that was claimed but perhaps never announced is announced
 * once more.
 */
final class Announcements {
    private final Map<String, String> last = new ConcurrentHashMap<>();

    /** True the first time {@code revision} is announced for {@code uid} (since another revision, or ever). */
    boolean first(String uid, String revision) {
        return !revision.equals(last.put(uid, revision));
    }
}
