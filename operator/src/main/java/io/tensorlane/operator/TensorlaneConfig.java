package io.tensorlane.operator;

import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.tensorlane.operator.support.DecisionMetrics;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Duration;

/**
 * The operator's whole configuration, {@code tensorlane.*}: every key and its default, written once here. Quarkus fills
 * it from application.properties, system properties and the environment with its standard mapping (upper case, dots
 * and dashes as underscores: {@code TENSORLANE_RUNTIME_IMAGE} is {@code tensorlane.runtime-image},
 * {@code TENSORLANE_PREFLIGHT_DEADLINE} is {@code tensorlane.preflight.deadline}). Code outside Quarkus (tests, the
 * benchmark) builds it with the same mapping and defaults ({@code TestConfig} in the tests); every component reads it
 * and nothing else. {@link ConfigProblems} checks the values at start-up.
 */
@ConfigMapping(prefix = "tensorlane")
public interface TensorlaneConfig {
    /** Server-side-apply field manager of every write (not configurable: the tests and RBAC rely on it). */
    String FIELD_MANAGER = "tensorlane-operator";

    /**
     * The Tensorlane runtime image: the engine of engine type Tensorlane without {@code spec.engine.image}, its preflight
     * Job, the hf:// download step (every engine) and the inspection Job. Default: the parent pom's
     * {@code tensorlane.image.registry}/tensorlane-runtime:{@code tensorlane.image.tag} (a test keeps them equal); the
     * manifests set {@code TENSORLANE_RUNTIME_IMAGE}, which kustomize's {@code images:} entries rewrite together with the
     * probe DaemonSet's image.
     */
    @WithDefault("tensorlane/tensorlane-runtime:0.1.0")
    String runtimeImage();

    /** A probe GpuTopology older than this is Stale and not trusted to force the custom allreduce. */
    @WithDefault("7d")
    Duration topologyMaxAge();

    /** How long a new GPU node may go without a probe result before a heuristic GpuTopology is derived. */
    @WithDefault("2m")
    Duration heuristicGrace();

    /** Re-check interval while rolling out or inside a stability window. */
    @WithDefault("10s")
    Duration requeueWhileRollingOut();

    /** Base of the backoff between rollback/remediation attempts (doubles per attempt, at most 10 min). */
    @WithDefault("10s")
    Duration rollbackBackoff();

    /** Preflight measurements older than this are ignored (by the planner and the preflight gate). */
    @WithDefault("7d")
    Duration measurementMaxAge();

    /** The pods the operator renders (engine, preflight, inspection). */
    Pod pod();

    /** The preflight Job and the gate that holds first rollouts for it. */
    Preflight preflight();

    /** Reading model facts (hf:// over the Hub API; inspection Jobs). */
    Model model();

    /** {@code tensorlane.pod.*}. */
    interface Pod {
        /** Non-root UID/GID the rendered containers run as (the runtime image's user). */
        @WithDefault("1000")
        long runAsUser();

        /** Size limit of the engine's {@code /dev/shm} memory emptyDir (a quantity). */
        @WithDefault("16Gi")
        String shmSizeLimit();
    }

    /** {@code tensorlane.preflight.*}. */
    interface Preflight {
        /** Hold the first rollout of a custom-allreduce deployment until its nodes have a recent preflight measurement. */
        @WithDefault("true")
        boolean enabled();

        /** The Job's activeDeadlineSeconds: the preflight never runs longer (at least 1 s). */
        @WithDefault("300s")
        Duration deadline();

        /** Extra time after the deadline before the operator gives up on a Job the Job controller has not failed. */
        @WithDefault("30s")
        Duration grace();

        /** The Job's ttlSecondsAfterFinished. */
        @WithDefault("1h")
        Duration ttl();

        /** How soon to look again while a Job runs. */
        @WithDefault("5s")
        Duration recheck();

        /** Largest message size of the short bench, bytes per rank (at least 1024). */
        @WithDefault("8388608")
        long benchMaxBytes();
    }

    /** {@code tensorlane.model.*}. */
    interface Model {
        /** The public Hub (what the runtime's fetch-model uses without HF_ENDPOINT). */
        String PUBLIC_HUB = "https://huggingface.co";

        /**
         * Base URL of the Hugging Face Hub hf:// models are read from (inspection and the download step, which gets it
         * as HF_ENDPOINT when it is not the public Hub); see {@link #hub(TensorlaneConfig)}.
         */
        @WithDefault(PUBLIC_HUB)
        String hubEndpoint();

        /** Per-request time-out of the Hub client. */
        @WithDefault("10s")
        Duration requestTimeout();

        /** How long a model read for a branch or tag (not a commit) is reused. */
        @WithDefault("10m")
        Duration branchTtl();

        /** How long a failed model read is remembered before it is tried again. */
        @WithDefault("30s")
        Duration failureTtl();

        /** Inspection threads (reads run there, never on a reconcile thread). */
        @WithDefault("4")
        int threads();
    }

    /** The Hub endpoint without trailing slashes. */
    static String hub(TensorlaneConfig config) {
        return config.model().hubEndpoint().replaceAll("/+$", "");
    }

    /** True when the Hub endpoint is the public Hub (the download step then needs no HF_ENDPOINT). */
    static boolean publicHub(TensorlaneConfig config) {
        return Model.PUBLIC_HUB.equals(hub(config));
    }

    /**
     * CDI producers of what is built from the configuration (the model resolver's is {@code ModelResolverProducer}, in
     * the package that owns it).
     */
    @Singleton
    class Producer {
        public static final String LEASE_NAME = "tensorlane-operator-lease";

        /** Leader election (activated in the prod profile only, quarkus.operator-sdk.activate-leader-election-for-profiles). */
        @Produces
        @Singleton
        LeaderElectionConfiguration leaderElection() {
            return new LeaderElectionConfiguration(LEASE_NAME);
        }

        @Produces
        @Singleton
        DecisionMetrics decisionMetrics(MeterRegistry registry) {
            return new DecisionMetrics(registry);
        }
    }
}
