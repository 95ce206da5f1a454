package io.tensorlane.operator.render;

import static io.tensorlane.operator.plan.Fixtures.SETTINGS;
import static io.tensorlane.operator.plan.Fixtures.llama70b;
import static io.tensorlane.operator.plan.Fixtures.node;
import static io.tensorlane.operator.plan.Fixtures.with;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.tensorlane.api.v1alpha1.AllreduceSpec;
import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.AlgorithmTable;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.TestConfig;
import io.tensorlane.operator.plan.NodeInfo;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Planner;
import io.tensorlane.topology.TopologyFixtures;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class RendererTest {
    static final TensorlaneConfig RS = TestConfig.defaults();
    static final List<NodeInfo> PRO = List.of(node("pro-0", TopologyFixtures.RTX_PRO_6000_PCIE_8, 0));
    static final List<NodeInfo> RTX4090 = List.of(node("rtx-0", TopologyFixtures.RTX_4090_4, 0));

    static InferenceDeployment owner(InferenceDeploymentSpec spec) {
        InferenceDeployment o = new InferenceDeployment();
        o.setMetadata(new ObjectMetaBuilder()
                .withName("llama")
                .withNamespace("ml")
                .withUid("uid-1")
                .withGeneration(1L)
                .build());
        o.setSpec(spec);
        return o;
    }

    static Rendered render(InferenceDeploymentSpec spec, List<NodeInfo> nodes) {
        Plan plan = Planner.plan(spec, nodes, SETTINGS);
        assertThat(plan.ok()).as(plan.message()).isTrue();
        return Renderer.render(owner(spec), spec, plan, RS);
    }

    static Container container(Rendered r) {
        return r.deployment().getSpec().getTemplate().getSpec().getContainers().get(0);
    }

    static Map<String, String> env(Container c) {
        return c.getEnv().stream().collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
    }

    @Test
    void tensorlaneOnTheSeedBoxCarriesThePlan() {
        Rendered r = render(llama70b(8), PRO);
        Deployment d = r.deployment();
        PodSpec pod = d.getSpec().getTemplate().getSpec();
        Container c = container(r);

        assertThat(d.getMetadata().getOwnerReferences()).singleElement().satisfies(o -> {
            assertThat(o.getKind()).isEqualTo("InferenceDeployment");
            assertThat(o.getApiVersion()).isEqualTo("tensorlane.io/v1alpha1");
            assertThat(o.getUid()).isEqualTo("uid-1");
            assertThat(o.getController()).isTrue();
        });
        assertThat(d.getSpec().getStrategy().getRollingUpdate().getMaxSurge().getIntVal())
                .isZero();
        assertThat(d.getSpec()
                        .getStrategy()
                        .getRollingUpdate()
                        .getMaxUnavailable()
                        .getIntVal())
                .isEqualTo(1);
        assertThat(d.getSpec().getProgressDeadlineSeconds()).isEqualTo(900);
        assertThat(d.getSpec().getSelector().getMatchLabels())
                .containsExactly(
                        Map.entry("app.kubernetes.io/name", "tensorlane-inference"),
                        Map.entry("app.kubernetes.io/instance", "llama"));
        assertThat(d.getSpec().getTemplate().getMetadata().getLabels())
                .containsEntry("app.kubernetes.io/managed-by", "tensorlane")
                .containsEntry("tensorlane.io/revision", r.revision());
        assertThat(r.revision()).matches("[0-9a-f]{10}");

        assertThat(c.getImage()).isEqualTo("tensorlane/tensorlane-runtime:0.1.0");
        assertThat(c.getArgs()).containsExactly("serve");
        assertThat(c.getResources().getLimits()).containsEntry("nvidia.com/gpu", new Quantity("8"));
        assertThat(c.getResources().getRequests()).containsEntry("nvidia.com/gpu", new Quantity("8"));
        assertThat(c.getTerminationMessagePolicy()).isEqualTo("FallbackToLogsOnError");
        assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/health/ready");
        assertThat(c.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/health/live");
        assertThat(c.getReadinessProbe().getTimeoutSeconds()).isEqualTo(5);
        assertThat(d.getSpec().getTemplate().getMetadata().getAnnotations())
                .containsEntry(Renderer.ANNOTATION_SCRAPE, "true")
                .containsEntry(Renderer.ANNOTATION_PORT, "8000")
                .containsEntry(Renderer.ANNOTATION_PATH, "/metrics");
        // 141 GB of weights: 300 s + 141.1 GB at 100 MB/s = 1711 s, longer than the 900 s progress deadline
        assertThat(c.getStartupProbe().getFailureThreshold()
                        * c.getStartupProbe().getPeriodSeconds())
                .isEqualTo(1720);
        assertThat(c.getStartupProbe().getHttpGet().getPath()).isEqualTo("/health/ready");
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        assertThat(pod.getVolumes()).anySatisfy(v -> {
            assertThat(v.getName()).isEqualTo("dshm");
            assertThat(v.getEmptyDir().getMedium()).isEqualTo("Memory");
        });
        assertThat(c.getVolumeMounts())
                .anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/dev/shm"));
        assertThat(pod.getAffinity()
                        .getNodeAffinity()
                        .getRequiredDuringSchedulingIgnoredDuringExecution()
                        .getNodeSelectorTerms())
                .singleElement()
                .satisfies(t -> assertThat(t.getMatchExpressions())
                        .extracting(e -> e.getKey())
                        .doesNotContain("kubernetes.io/hostname")
                        .contains(
                                "tensorlane.io/gpu-interconnect",
                                "tensorlane.io/gpu-p2p",
                                "tensorlane.io/gpu-count",
                                "tensorlane.io/gpu-product"));

        Map<String, String> env = env(c);
        assertThat(env)
                .containsEntry(EngineEnv.WORLD_SIZE, "8")
                .containsEntry(EngineEnv.ALLREDUCE, "Custom")
                .containsEntry(EngineEnv.MAX_MESSAGE_BYTES, "8388608")
                .containsEntry(EngineEnv.MEMORY_FRACTION, "0.95")
                .containsEntry("NCCL_P2P_LEVEL", "SYS")
                .containsEntry("NCCL_PROTO", "^LL128")
                .containsEntry(EngineEnv.MODEL, "meta-llama/Llama-3.3-70B-Instruct");
        AlgorithmTable table = AlgorithmTable.fromJson(env.get(EngineEnv.ALGORITHM_TABLE));
        assertThat(table.worldSize()).isEqualTo(8);
        assertThat(table.select(1)).isEqualTo(Algorithm.OneStage);
        assertThat(table.select(64 * 1024)).isEqualTo(Algorithm.OneStage);
        assertThat(table.select(64 * 1024 + 1)).isEqualTo(Algorithm.Ring);
        assertThat(table.select(8 * 1024 * 1024)).isEqualTo(Algorithm.Ring);
        assertThat(table.covers(8 * 1024 * 1024 + 1)).isFalse();

        assertThat(r.service().getSpec().getSelector())
                .isEqualTo(d.getSpec().getSelector().getMatchLabels());
        assertThat(r.service().getSpec().getPorts())
                .singleElement()
                .satisfies(p -> assertThat(p.getPort()).isEqualTo(8000));
    }

    record EngineCase(
            String name,
            InferenceDeploymentSpec spec,
            List<NodeInfo> nodes,
            List<String> command,
            List<String> argsContain,
            boolean disableCustom,
            String healthPath) {
        @Override
        public String toString() {
            return name;
        }
    }

    static InferenceDeploymentSpec engine(EngineType type, String image) {
        return with(llama70b(8), s -> {
            s.engine.type = type;
            s.engine.image = image;
        });
    }

    static Stream<EngineCase> engines() {
        return Stream.of(
                new EngineCase(
                        "SGLang with custom allreduce",
                        engine(EngineType.SGLang, "lmsysorg/sglang:v0.5"),
                        PRO,
                        List.of("python3", "-m", "sglang.launch_server"),
                        List.of(
                                "--model-path /models/meta-llama--Llama-3.3-70B-Instruct--main",
                                "--served-model-name meta-llama/Llama-3.3-70B-Instruct",
                                "--tp-size 8",
                                "--mem-fraction-static 0.95",
                                "--enable-metrics",
                                "--port 8000"),
                        false,
                        "/health"),
                new EngineCase(
                        "SGLang with NCCL disables the custom allreduce",
                        with(
                                engine(EngineType.SGLang, "sglang"),
                                s -> s.allreduce.mode = AllreduceSpec.AllreduceMode.NCCL),
                        PRO,
                        List.of("python3", "-m", "sglang.launch_server"),
                        List.of("--tp-size 8"),
                        true,
                        "/health"),
                new EngineCase(
                        "vLLM on RTX 4090 without P2P",
                        with(engine(EngineType.VLLM, "vllm/vllm-openai:v0.11"), s -> {
                            s.model = llama70b(4).model;
                            s.model.weightBytes = 16_060_522_496L;
                            s.parallelism.tensor = 4;
                        }),
                        RTX4090,
                        List.of("vllm", "serve"),
                        List.of(
                                "/models/meta-llama--Llama-3.3-70B-Instruct--main --served-model-name meta-llama/Llama-3.3-70B-Instruct",
                                "--tensor-parallel-size 4",
                                "--gpu-memory-utilization 0.9"),
                        true,
                        "/health"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("engines")
    void rendersEngines(EngineCase c) {
        Rendered r = render(c.spec(), c.nodes());
        Container ct = container(r);
        String args = String.join(" ", ct.getArgs());

        assertThat(ct.getCommand()).containsExactlyElementsOf(c.command());
        assertThat(args).contains(c.argsContain());
        assertThat(ct.getArgs().contains("--disable-custom-all-reduce")).isEqualTo(c.disableCustom());
        assertThat(ct.getReadinessProbe().getHttpGet().getPath()).isEqualTo(c.healthPath());
        assertThat(ct.getImage()).isEqualTo(c.spec().engine.image);
        // every serving pod says where to scrape; probe timeouts fit the engine's health endpoint
        assertThat(r.deployment().getSpec().getTemplate().getMetadata().getAnnotations())
                .containsExactlyInAnyOrderEntriesOf(java.util.Map.of(
                        Renderer.ANNOTATION_SCRAPE, "true",
                        Renderer.ANNOTATION_PORT, "8000",
                        Renderer.ANNOTATION_PATH, "/metrics"));
        int timeout = c.spec().engine.type == EngineType.SGLang ? 25 : 5;
        assertThat(ct.getReadinessProbe().getTimeoutSeconds()).isEqualTo(timeout);
        assertThat(ct.getStartupProbe().getTimeoutSeconds()).isEqualTo(timeout);
        assertThat(ct.getLivenessProbe().getTimeoutSeconds()).isEqualTo(Math.max(10, timeout));
        assertThat(ct.getReadinessProbe().getPeriodSeconds()).isGreaterThanOrEqualTo(timeout);
        assertThat(ct.getLivenessProbe().getPeriodSeconds()).isGreaterThanOrEqualTo(timeout);
    }

    @Test
    void userArgsAndEnvComeLastAndUserEnvReplacesOurs() {
        InferenceDeploymentSpec spec = with(llama70b(8), s -> {
            s.engine.args = List.of("--log-level", "debug");
            s.engine.env = List.of(new EnvVar("NCCL_PROTO", "Simple", null), new EnvVar("EXTRA", "1", null));
            s.placement.tolerations = List.of(new TolerationBuilder()
                    .withKey("nvidia.com/gpu")
                    .withOperator("Exists")
                    .withEffect("NoSchedule")
                    .build());
        });
        Rendered r = render(spec, PRO);
        Container c = container(r);

        assertThat(c.getArgs()).containsExactly("serve", "--log-level", "debug");
        assertThat(c.getEnv())
                .extracting(EnvVar::getName)
                .doesNotHaveDuplicates()
                .endsWith("NCCL_PROTO", "EXTRA");
        assertThat(env(c)).containsEntry("NCCL_PROTO", "Simple");
        assertThat(r.deployment().getSpec().getTemplate().getSpec().getTolerations())
                .singleElement()
                .satisfies(t -> assertThat(t.getKey()).isEqualTo("nvidia.com/gpu"));
    }

    @Test
    void revisionIsStableAndFollowsThePodTemplate() {
        String a = render(llama70b(8), PRO).revision();
        String b = render(llama70b(8), PRO).revision();
        String replicas = render(with(llama70b(8), s -> s.replicas = 3), PRO).revision();
        String fraction =
                render(with(llama70b(8), s -> s.memory.fraction = "0.90"), PRO).revision();

        assertThat(a).isEqualTo(b);
        assertThat(replicas).as("replicas are not part of the pod template").isEqualTo(a);
        assertThat(fraction).isNotEqualTo(a);
    }

    @Test
    void refusesAPlanThatIsNotOk() {
        InferenceDeploymentSpec spec = llama70b(8);
        Plan plan = Planner.plan(spec, RTX4090, SETTINGS);
        assertThatThrownBy(() -> Renderer.render(owner(spec), spec, plan, RS))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("UNSCHEDULABLE");
    }
}
