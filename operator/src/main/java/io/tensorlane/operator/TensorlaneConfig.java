package io.tensorlane.operator;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.tensorlane.operator.model.ModelResolver;
import io.tensorlane.operator.model.ModelResolvers;
import io.tensorlane.operator.model.ModelSettings;
import io.tensorlane.operator.render.RenderSettings;
import io.tensorlane.operator.support.DecisionMetrics;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Duration;

/** {@code tensorlane.*} configuration of the Quarkus application (application.properties / env). */
@ConfigMapping(prefix = "tensorlane")
public interface TensorlaneConfig {
  /** A probe GpuTopology older than this is Stale. */
  @WithDefault("7d")
  Duration topologyMaxAge();

  /** Re-check interval while rolling out or inside a stability window. */
  @WithDefault("10s")
  Duration requeueWhileRollingOut();

  /** Preflight measurements older than this are ignored. */
  @WithDefault("7d")
  Duration measurementMaxAge();

  /** How long a new GPU node may go without a probe result before a heuristic GpuTopology is derived. */
  @WithDefault("2m")
  Duration heuristicGrace();

  /** Hold first rollouts of custom-allreduce deployments until the preflight measured their nodes. */
  @WithName("preflight.enabled")
  @WithDefault("true")
  boolean preflightEnabled();

  /** Base of the backoff between rollback/remediation attempts. */
  @WithDefault("10s")
  Duration rollbackBackoff();

  /** Registry of the runtime image (the pom's tensorlane.image.registry). */
  @WithDefault("tensorlane")
  String imageRegistry();

  /** Tag of the runtime image (the pom's tensorlane.image.tag). */
  @WithDefault("0.1.0")
  String imageTag();

  /** Base URL of the Hugging Face Hub that hf:// models are read from (inspection and the download step). */
  @WithName("model.hub-endpoint")
  @WithDefault(RenderSettings.DEFAULT_HUB_ENDPOINT)
  String hubEndpoint();

  /** Per-request time-out of the Hub client. */
  @WithName("model.request-timeout")
  @WithDefault("10s")
  Duration modelRequestTimeout();

  /** How long a model read for a branch or tag (not a commit) is reused. */
  @WithName("model.branch-ttl")
  @WithDefault("10m")
  Duration modelBranchTtl();

  /** How long a failed model read is remembered before it is tried again. */
  @WithName("model.failure-ttl")
  @WithDefault("30s")
  Duration modelFailureTtl();

  /** CDI producer of the plain settings record. */
  @Singleton
  class Producer {
    public static final String LEASE_NAME = "tensorlane-operator-lease";

    @Produces
    @Singleton
    OperatorSettings settings(TensorlaneConfig config) {
      return new OperatorSettings(config.topologyMaxAge(), config.requeueWhileRollingOut(),
          config.measurementMaxAge(), OperatorSettings.FIELD_MANAGER, config.heuristicGrace(),
          config.preflightEnabled(), config.rollbackBackoff());
    }

    @Produces
    @Singleton
    RenderSettings renderSettings(TensorlaneConfig config) {
      return RenderSettings.of(config.imageRegistry(), config.imageTag()).withHubEndpoint(config.hubEndpoint());
    }

    @Produces
    @Singleton
    ModelResolver modelResolver(TensorlaneConfig config, RenderSettings render) {
      return ModelResolvers.create(render, new ModelSettings(config.modelRequestTimeout(),
          config.modelBranchTtl(), config.modelFailureTtl(), ModelSettings.defaults().threads()));
    }

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
