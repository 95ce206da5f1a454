package io.tensorlane.operator.model;

import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.modelfacts.ConfigFacts;
import io.tensorlane.modelfacts.HubClient;
import io.tensorlane.modelfacts.HubException;
import io.tensorlane.modelfacts.ModelFacts;
import io.tensorlane.modelfacts.ModelFactsException;
import io.tensorlane.modelfacts.ModelSource;
import io.tensorlane.modelfacts.SafetensorsHeader;
import io.tensorlane.modelfacts.TensorTally;
import io.tensorlane.modelfacts.UnsupportedArchitectureException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the facts of an hf:// model over the Hub API (the shared {@link HubClient}, crd module): the revision's commit
 * and files, config.json, and for each safetensors file its 8-byte header length and its header (two Range requests;
 * no weights). Never throws: every problem becomes an {@link Inspection.Failed} whose reason and message say which and
 * why.
 */
public final class ModelInspector {
    /** What a 401/403 tells the user: the operator reads the token from spec.model.tokenSecret. */
    public static final HubClient.TokenHint TOKEN_HINT = new HubClient.TokenHint(
            "the model is gated or private (or does not exist): set spec.model.tokenSecret",
            "the token in spec.model.tokenSecret is not accepted for this model");

    private final HubClient hub;
    private final Clock clock;

    public ModelInspector(HubClient hub, Clock clock) {
        this.hub = hub;
        this.clock = clock;
    }

    /** The outcome of one read. */
    public sealed interface Inspection {
        /** The facts, as status.model. */
        record Known(ModelStatus status) implements Inspection {}

        /**
         * @param retryable a transient failure (network, 5xx): the deployment stays InspectingModel
         */
        record Failed(String reason, String message, boolean retryable) implements Inspection {}
    }

    public Inspection inspect(ModelSource source, String token) {
        String id = source.location();
        try {
            HubClient.Revision rev = hub.revision(id, source.revision(), token);
            String base = "hf://" + id + "@" + rev.sha();
            if (!rev.files().contains("config.json")) {
                return new Inspection.Failed("InvalidModel", base + " has no config.json", false);
            }
            ConfigFacts config = ConfigFacts.parse(
                    new String(hub.small(id, rev.sha(), "config.json", token), StandardCharsets.UTF_8),
                    base + "/config.json");
            List<TensorTally> perFile = new ArrayList<>();
            for (String f : rev.files().stream()
                    .filter(f -> f.endsWith(".safetensors"))
                    .sorted()
                    .toList()) {
                String where = base + "/" + f;
                long n = SafetensorsHeader.headerLength(hub.range(id, rev.sha(), f, 0, 7, token), -1, where);
                perFile.add(TensorTally.of(
                        SafetensorsHeader.entries(hub.range(id, rev.sha(), f, 8, 8 + n - 1, token), -1, where)));
            }
            ModelFacts facts = ModelFacts.of(config, perFile, base);
            return new Inspection.Known(facts.toStatus(
                    source.uri(),
                    rev.sha(),
                    clock.instant().truncatedTo(ChronoUnit.SECONDS).toString()));
        } catch (HubException e) {
            return switch (e.kind()) {
                case NOT_FOUND -> new Inspection.Failed("ModelNotFound", e.getMessage(), false);
                case UNAUTHORIZED -> new Inspection.Failed("Unauthorized", e.getMessage(), false);
                case MALFORMED -> new Inspection.Failed("InvalidModel", e.getMessage(), false);
                case UNREACHABLE -> new Inspection.Failed("HubUnreachable", e.getMessage(), true);
            };
        } catch (IOException e) {
            return new Inspection.Failed(
                    "HubUnreachable",
                    "cannot reach the Hub at " + hub.shown() + " for " + source.uri() + ": "
                            + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : " " + e.getMessage()),
                    true);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Inspection.Failed("HubUnreachable", "interrupted while reading " + source.uri(), true);
        } catch (UnsupportedArchitectureException e) {
            return new Inspection.Failed("UnsupportedArchitecture", e.getMessage(), false);
        } catch (ModelFactsException e) {
            return new Inspection.Failed("InvalidModel", e.getMessage(), false);
        } catch (RuntimeException e) {
            return new Inspection.Failed("InspectionFailed", "reading " + source.uri() + " failed: " + e, true);
        }
    }
}
