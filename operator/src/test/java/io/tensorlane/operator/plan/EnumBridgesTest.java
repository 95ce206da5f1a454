package io.tensorlane.operator.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.AllreduceDecision;
import io.tensorlane.api.v1alpha1.AllreduceSpec.AllreduceAlgorithm;
import io.tensorlane.api.v1alpha1.AllreduceSpec.AllreduceMode;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.Allreduce;
import io.tensorlane.contract.DType;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The CRD's enums are what a user may ask for; the contract's are what the operator and the runtime agree on. Where
 * the planner crosses from one to the other by name, the names must line up.
 */
class EnumBridgesTest {
    @Test
    void everyForcedAlgorithmOfTheCrdIsACustomKernelAndEveryKernelCanBeForced() {
        List<Algorithm> forced = Arrays.stream(AllreduceAlgorithm.values())
                .filter(a -> a != AllreduceAlgorithm.Auto)
                .map(a -> Algorithm.parse(a.name()))
                .toList();

        assertThat(forced).allMatch(Algorithm::isCustom);
        assertThat(forced)
                .containsExactlyInAnyOrderElementsOf(Arrays.stream(Algorithm.values())
                        .filter(Algorithm::isCustom)
                        .toList());
    }

    @Test
    void everyRequestedModeButAutoIsAnAllreduceThePodRuns() {
        assertThat(Arrays.stream(AllreduceMode.values())
                        .filter(m -> m != AllreduceMode.Auto)
                        .map(m -> Allreduce.find(m.name()).orElse(null)))
                .containsExactly(Allreduce.Custom, Allreduce.NCCL);
    }

    @Test
    void theStatusNamesEveryAllreduceThePodRunsAndReadsItBack() {
        for (Allreduce a : Allreduce.values()) {
            AllreduceDecision d = new AllreduceChoice(a, List.of(), 0, "r", List.of(), false).toStatus();
            assertThat(d.mode).isEqualTo(a);
            assertThat(AllreduceChoice.of(d)).isEqualTo(a);
        }
        assertThat(AllreduceChoice.of(null)).isEqualTo(Allreduce.None);
    }

    @Test
    void everyAllreduceElementTypeIsAModelDtypeOfTheSameSize() {
        for (DType d : DType.values()) {
            assertThat(ModelSpec.DType.valueOf(d.name()).bytes()).as(d.name()).isEqualTo(d.bytes());
        }
    }
}
