package io.tensorlane.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** A status detail waiting to be folded gets its reconcile when the wait is over, whatever else was scheduled. */
class RescheduleSoonerTest {
    @ParameterizedTest(name = "scheduled {0} ms, detail due in {1} ms -> {2} ms")
    @CsvSource({
        "-1, 1500, 1500", // nothing scheduled (a settled deployment): the detail's reconcile
        "10000, 1500, 1500", // the rollout's periodic look comes later: sooner
        "500, 1500, 500", // a reconcile already comes sooner: kept
        "1500, 1500, 1500",
        "-1, 0, 1" // due now: at once, never "no delay" (which would mean no reschedule)
    })
    void reconcilesAgainWhenTheDetailIsDue(long scheduledMs, long dueMs, long expectedMs) {
        UpdateControl<InferenceDeployment> c = UpdateControl.noUpdate();
        if (scheduledMs >= 0) {
            c = c.rescheduleAfter(scheduledMs);
        }
        UpdateControl<InferenceDeployment> r = InferenceDeploymentReconciler.sooner(c, Duration.ofMillis(dueMs));
        assertThat(r.getScheduleDelay()).contains(expectedMs);
    }
}
