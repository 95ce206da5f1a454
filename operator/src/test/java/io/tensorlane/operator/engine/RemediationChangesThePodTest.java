package io.tensorlane.operator.engine;

import static io.tensorlane.operator.plan.Fixtures.SETTINGS;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.RollbackStatus;
import io.tensorlane.operator.TestConfig;
import io.tensorlane.operator.plan.Fixtures;
import io.tensorlane.operator.plan.NodeInfo;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Planner;
import io.tensorlane.operator.render.Renderer;
import io.tensorlane.operator.rollback.Remediation;
import io.tensorlane.topology.TopologyFixtures;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Each remediation step an engine's profile lists must change that engine's pod template: a step that renders the
 * same revision re-applies the failing pods, and the rollback state machine does not handle a failure of a handled
 * revision again, so the deployment would stay Degraded with steps left untried.
 */
class RemediationChangesThePodTest {
    static final List<NodeInfo> PRO = List.of(Fixtures.node("pro-0", TopologyFixtures.RTX_PRO_6000_PCIE_8, 0));

    @ParameterizedTest
    @EnumSource(EngineType.class)
    void everyStepOfTheProfileRendersANewRevision(EngineType type) {
        InferenceDeploymentSpec spec = Fixtures.with(Fixtures.llama70b(8), s -> {
            s.engine.type = type;
            s.engine.image = type == EngineType.Tensorlane ? null : "engine:1";
        });
        List<RollbackStatus.Action> done = new ArrayList<>();
        Plan plan = plan(spec);
        assertThat(plan.allreduce().custom())
                .as("the seed box plans the custom allreduce")
                .isTrue();
        String revision = revision(spec, plan);

        for (int i = 0; i < EngineProfiles.of(type).remediations().size(); i++) {
            Remediation.Step step = Remediation.next(
                            spec,
                            done,
                            plan.memory().staticFraction(),
                            plan.allreduce().mode())
                    .orElseThrow();
            Plan next = plan(step.spec());
            String nextRevision = revision(step.spec(), next);

            assertThat(nextRevision)
                    .as(type + " after " + step.action() + " (" + step.change() + ")")
                    .isNotEqualTo(revision);
            done.add(step.action());
            spec = step.spec();
            plan = next;
            revision = nextRevision;
        }
        assertThat(done).containsExactlyElementsOf(EngineProfiles.of(type).remediations());
    }

    private static Plan plan(InferenceDeploymentSpec spec) {
        Plan plan = Planner.plan(spec, PRO, SETTINGS);
        assertThat(plan.ok()).as(plan.message()).isTrue();
        return plan;
    }

    private static String revision(InferenceDeploymentSpec spec, Plan plan) {
        InferenceDeployment owner = new InferenceDeployment();
        owner.setMetadata(new ObjectMetaBuilder()
                .withName("llama")
                .withNamespace("ml")
                .withUid("uid-1")
                .build());
        owner.setSpec(spec);
        return Renderer.render(owner, spec, plan, TestConfig.defaults()).revision();
    }
}
