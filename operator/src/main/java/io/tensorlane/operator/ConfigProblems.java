package io.tensorlane.operator;

import io.tensorlane.operator.plan.ImageReference;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** What is wrong with a {@link TensorlaneConfig} (pure); the operator refuses to start with any of it. */
public final class ConfigProblems {
    private ConfigProblems() {}

    /** Every problem, one message each naming the key; empty when the configuration is usable. */
    public static List<String> of(TensorlaneConfig c) {
        List<String> p = new ArrayList<>();
        String image = c.runtimeImage();
        if (!ImageReference.valid(image)) {
            p.add("tensorlane.runtime-image (TENSORLANE_RUNTIME_IMAGE) is not an image reference: '" + image + "'");
        }
        positive(p, "tensorlane.topology-max-age", c.topologyMaxAge());
        positive(p, "tensorlane.heuristic-grace", c.heuristicGrace());
        positive(p, "tensorlane.requeue-while-rolling-out", c.requeueWhileRollingOut());
        positive(p, "tensorlane.rollback-backoff", c.rollbackBackoff());
        positive(p, "tensorlane.measurement-max-age", c.measurementMaxAge());
        if (c.pod().runAsUser() < 1) {
            p.add("tensorlane.pod.run-as-user must be a non-root UID, got "
                    + c.pod().runAsUser());
        }
        if (c.preflight().deadline().toSeconds() < 1) {
            p.add("tensorlane.preflight.deadline must be at least 1 s, got "
                    + c.preflight().deadline());
        }
        positive(p, "tensorlane.preflight.grace", c.preflight().grace());
        positive(p, "tensorlane.preflight.ttl", c.preflight().ttl());
        positive(p, "tensorlane.preflight.recheck", c.preflight().recheck());
        if (c.preflight().benchMaxBytes() < 1024) {
            p.add("tensorlane.preflight.bench-max-bytes must be at least 1024, got "
                    + c.preflight().benchMaxBytes());
        }
        String hub = c.model().hubEndpoint();
        if (!hub.startsWith("http://") && !hub.startsWith("https://") || !validUri(hub)) {
            p.add("tensorlane.model.hub-endpoint must be an http(s) URL, got '" + hub + "'");
        }
        positive(p, "tensorlane.model.request-timeout", c.model().requestTimeout());
        positive(p, "tensorlane.model.branch-ttl", c.model().branchTtl());
        positive(p, "tensorlane.model.failure-ttl", c.model().failureTtl());
        if (c.model().threads() < 1) {
            p.add("tensorlane.model.threads must be at least 1, got "
                    + c.model().threads());
        }
        return p;
    }

    /** Throws with every problem when there is one. */
    public static TensorlaneConfig require(TensorlaneConfig c) {
        List<String> p = of(c);
        if (!p.isEmpty()) {
            throw new IllegalStateException("invalid operator configuration: " + String.join("; ", p));
        }
        return c;
    }

    private static void positive(List<String> p, String key, Duration d) {
        if (d.isNegative() || d.isZero()) {
            p.add(key + " must be positive, got " + d);
        }
    }

    private static boolean validUri(String s) {
        try {
            return URI.create(s).getHost() != null;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
