package io.tensorlane.operator.model;

import io.tensorlane.modelfacts.HubClient;
import io.tensorlane.operator.TensorlaneConfig;
import java.net.URI;
import java.time.Clock;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/** Builds the resolver with its Hub client, cache and inspection threads (daemon threads: they never hold the JVM). */
public final class ModelResolvers {
    private ModelResolvers() {}

    /** The resolver for the configured Hub endpoint, runtime image and UID ({@code tensorlane.model.*}). */
    public static ModelResolver create(TensorlaneConfig config) {
        TensorlaneConfig.Model s = config.model();
        String hubEndpoint = TensorlaneConfig.hub(config);
        AtomicInteger n = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(s.threads(), r -> {
            Thread t = new Thread(r, "tensorlane-model-inspect-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        Clock clock = Clock.systemUTC();
        HubClient hub = new HubClient(
                URI.create(hubEndpoint), s.requestTimeout(), "tensorlane-operator", ModelInspector.TOKEN_HINT);
        return new ModelResolver(
                new InspectionCache(pool, clock, s.branchTtl(), s.failureTtl()),
                new ModelInspector(hub, clock),
                config,
                clock);
    }
}
