package io.tensorlane.operator.plan;

import static io.tensorlane.operator.plan.Fixtures.SETTINGS;
import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.AllreduceDecision.AlgorithmRange;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.Measurement;
import io.tensorlane.topology.TopologyFixtures;
import java.util.List;
import java.util.Map;

/** The case record of the planner tables, the recorded topologies they use, and the assertions every case gets. */
final class PlannerCases {
    private PlannerCases() {}

    static final String PRO = TopologyFixtures.RTX_PRO_6000_PCIE_8;
    static final String H200 = TopologyFixtures.H200_SXM_8;
    static final String RTX4090 = TopologyFixtures.RTX_4090_4;
    static final String L40S = TopologyFixtures.L40S_2;
    static final long K = 1024;
    static final long M = 1024 * 1024;

    record Case(
            String name,
            InferenceDeploymentSpec spec,
            List<NodeInfo> nodes,
            Outcome outcome,
            String mode,
            List<String> table,
            List<String> nodesChosen,
            String messageContains,
            Map<String, String> ncclEnv) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Measurement measured(int worldSize, String failure, AlgorithmRange... rows) {
        Measurement m = new Measurement();
        m.time = "2026-11-29T11:00:00Z";
        m.worldSize = worldSize;
        m.failure = failure;
        m.algorithmTable = List.of(rows);
        return m;
    }

    static void check(Case c) {
        Plan plan = Planner.plan(c.spec(), c.nodes(), SETTINGS);

        assertThat(plan.outcome()).as(plan.message()).isEqualTo(c.outcome());
        String text = plan.ok() ? plan.allreduce().reason() : plan.message();
        assertThat(text).contains(c.messageContains());
        if (c.mode() != null) {
            assertThat(plan.allreduce().mode().name()).isEqualTo(c.mode());
            assertThat(plan.allreduce().table())
                    .extracting(r -> r.upToBytes + ":" + r.algorithm)
                    .containsExactlyElementsOf(c.table());
            assertThat(plan.placement().nodes()).containsExactlyElementsOf(c.nodesChosen());
        }
        if (c.ncclEnv() != null) {
            assertThat(plan.allreduce().ncclEnv())
                    .extracting(AllreduceChoice.NcclEnv::name, AllreduceChoice.NcclEnv::value)
                    .containsExactlyInAnyOrderElementsOf(c.ncclEnv().entrySet().stream()
                            .map(e -> org.assertj.core.groups.Tuple.tuple(e.getKey(), e.getValue()))
                            .toList());
        }
    }
}
