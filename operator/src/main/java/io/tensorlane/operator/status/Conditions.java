package io.tensorlane.operator.status;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** metav1.Condition helpers: lastTransitionTime moves only when the status value changes. Pure. */
public final class Conditions {
    public static final String TRUE = "True";
    public static final String FALSE = "False";

    private Conditions() {}

    /** The named condition, if present. */
    public static Optional<Condition> find(List<Condition> conditions, String type) {
        return conditions == null
                ? Optional.empty()
                : conditions.stream().filter(c -> type.equals(c.getType())).findFirst();
    }

    /** True when the named condition exists with status True. */
    public static boolean isTrue(List<Condition> conditions, String type) {
        return find(conditions, type).map(c -> TRUE.equals(c.getStatus())).orElse(false);
    }

    /**
     * The message is never empty: a 1.20 API server turns an empty string in a
     * server-side-applied custom resource into null and rejects it.
     * A condition for the new list: keeps the previous lastTransitionTime when the status did not change, so an
     * unchanged world yields an equal status (and no write).
     */
    public static Condition next(
            List<Condition> previous,
            String type,
            boolean status,
            String reason,
            String message,
            Long generation,
            Instant now) {
        String value = status ? TRUE : FALSE;
        String time = find(previous, type)
                .filter(c -> value.equals(c.getStatus()))
                .map(Condition::getLastTransitionTime)
                .orElse(now.truncatedTo(ChronoUnit.SECONDS).toString());
        return new ConditionBuilder()
                .withType(type)
                .withStatus(value)
                .withReason(reason)
                .withMessage(message == null || message.isBlank() ? type + " is " + value : message)
                .withObservedGeneration(generation)
                .withLastTransitionTime(time)
                .build();
    }

    /** Replaces or appends one condition, keeping the order of the others. */
    public static List<Condition> upsert(List<Condition> conditions, Condition c) {
        List<Condition> out = new ArrayList<>(conditions == null ? List.of() : conditions);
        for (int i = 0; i < out.size(); i++) {
            if (Objects.equals(out.get(i).getType(), c.getType())) {
                out.set(i, c);
                return out;
            }
        }
        out.add(c);
        return out;
    }
}
