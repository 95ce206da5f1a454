package io.tensorlane.operator.preflight;

import io.tensorlane.operator.OperatorSettings;
import io.tensorlane.operator.render.RenderSettings;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Duration;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * CDI producer of {@link PreflightSettings} from {@code tensorlane.preflight.*}: {@code deadline} (default 300s),
 * {@code grace} (30s), {@code ttl} (1h), {@code recheck} (5s), {@code bench-max-bytes} (8388608). The image is the
 * runtime image of {@link RenderSettings}; measurement age is {@code tensorlane.measurement-max-age}.
 */
@Singleton
public class PreflightConfig {
  @ConfigProperty(name = "tensorlane.preflight.deadline", defaultValue = "300s")
  Duration deadline;

  @ConfigProperty(name = "tensorlane.preflight.grace", defaultValue = "30s")
  Duration grace;

  @ConfigProperty(name = "tensorlane.preflight.ttl", defaultValue = "1h")
  Duration ttl;

  @ConfigProperty(name = "tensorlane.preflight.recheck", defaultValue = "5s")
  Duration recheck;

  @ConfigProperty(name = "tensorlane.preflight.bench-max-bytes", defaultValue = "8388608")
  long benchMaxBytes;

  @Produces
  @Singleton
  PreflightSettings preflightSettings(RenderSettings render, OperatorSettings operator) {
    return new PreflightSettings(render.runtimeImage(), deadline, grace, ttl, recheck, operator.measurementMaxAge(),
        benchMaxBytes, render.runAsUser());
  }
}
