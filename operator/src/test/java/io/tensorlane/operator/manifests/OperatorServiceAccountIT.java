package io.tensorlane.operator.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.testkit.LocalCluster;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import io.tensorlane.testkit.hub.LocalHub;
import io.tensorlane.testkit.hub.SampleModels;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.testkit.sim.SimAction;
import io.tensorlane.testkit.sim.SimRule;
import io.tensorlane.topology.TopologyFixtures;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.function.Predicate;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Least privilege, proven: the packaged operator (target/quarkus-app) runs as a separate process on the local 1.20
 * control plane, authenticated only by the token of its ServiceAccount from manifests/overlays/dev (the token secret
 * 1.20's token controller creates), through the whole story: create, roll out, a CUDA OOM on a new spec, roll back,
 * delete. Any 403 in its log fails the test. Then what it must not be able to do, asked as that ServiceAccount.
 */
@WithLocalCluster
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OperatorServiceAccountIT {
    /** What the operator process is given as TENSORLANE_RUNTIME_IMAGE (not the default, so the test sees it is read). */
    static final String RUNTIME_IMAGE = "tensorlane/tensorlane-runtime:sa-test";

    static final String SYSTEM_NS = "tensorlane-system";
    static final String SA = "tensorlane-operator";
    static final Duration TIMEOUT = Duration.ofSeconds(180);
    /** How a refusal shows in the log: the API server's "... is forbidden: User ..." / reason Forbidden, or HTTP 403. */
    static final java.util.regex.Pattern FORBIDDEN =
            java.util.regex.Pattern.compile("(?i)forbidden|HTTP 403|code[=:] ?403\\b");
    /**
     * Not an authorization failure: NamespaceLifecycle admission refuses (also as 403) new objects, e.g. events, in a
     * namespace another test class is deleting; the operator watches all namespaces of the shared control plane.
     */
    static final java.util.regex.Pattern TERMINATING_NAMESPACE =
            java.util.regex.Pattern.compile("because it is being terminated");

    static Process operator;
    static Path log;
    static LocalHub hub;

    @BeforeAll
    static void startOperatorAsItsServiceAccount(LocalCluster cluster, KubernetesClient admin, GpuNodeSimulator sim)
            throws IOException {
        Path app = Manifests.repo().resolve("operator/target/quarkus-app/quarkus-run.jar");
        assertThat(app).as("the packaged operator (mvn -pl operator package)").exists();
        // -Dtensorlane.it.install=<kustomize dir> installs something else (e.g. an overlay that removes a permission,
        // to
        // see this test fail)
        Manifests.kubectl(
                cluster.kubeconfig(),
                "apply",
                "-k",
                Manifests.repo()
                        .resolve(System.getProperty("tensorlane.it.install", "manifests/overlays/dev"))
                        .toString());
        // the in-cluster Deployment has no kubelet to run it here; this process plays it
        Manifests.kubectl(cluster.kubeconfig(), "-n", SYSTEM_NS, "scale", "deployment/" + SA, "--replicas=0");
        sim.addNode(TopologyFixtures.L40S_2);

        Path dir = Manifests.repo().resolve("operator/target/operator-as-serviceaccount");
        Files.createDirectories(dir);
        Path kubeconfig = dir.resolve("kubeconfig");
        Files.writeString(
                kubeconfig,
                Manifests.SERIALIZATION.asYaml(new ConfigBuilder()
                        .withApiVersion("v1")
                        .withKind("Config")
                        .addNewCluster()
                        .withName("local")
                        .withNewCluster()
                        .withServer(cluster.masterUrl())
                        .withCertificateAuthorityData(cluster.config().getCaCertData())
                        .endCluster()
                        .endCluster()
                        .addNewUser()
                        .withName(SA)
                        .withNewUser()
                        .withToken(serviceAccountToken(admin))
                        .endUser()
                        .endUser()
                        .addNewContext()
                        .withName("sa")
                        .withNewContext()
                        .withCluster("local")
                        .withUser(SA)
                        .withNamespace(SYSTEM_NS)
                        .endContext()
                        .endContext()
                        .withCurrentContext("sa")
                        .build()));
        log = dir.resolve("operator.log");
        ProcessBuilder pb = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx256m",
                        "-XX:+UseSerialGC",
                        "-jar",
                        app.toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().put("KUBECONFIG", kubeconfig.toString());
        pb.environment().put("POD_NAMESPACE", SYSTEM_NS);
        pb.environment().put("QUARKUS_HTTP_PORT", "0");
        pb.environment().put("TENSORLANE_RUNTIME_IMAGE", RUNTIME_IMAGE);
        // the sample's model is read from a loopback Hub (config.json and safetensors headers of its real geometry)
        hub = SampleModels.serve(new LocalHub());
        pb.environment().put("TENSORLANE_MODEL_HUB_ENDPOINT", hub.endpoint());
        operator = pb.start();
    }

    @AfterAll
    static void stopOperator() throws InterruptedException {
        if (hub != null) {
            hub.close();
        }
        if (operator != null) {
            operator.destroy();
            if (!operator.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
                operator.destroyForcibly();
            }
        }
    }

    @Test
    @Order(1)
    void createRollOutRollBackDeleteWithoutA403(KubernetesClient admin, TestNamespace ns, GpuNodeSimulator sim)
            throws IOException {
        InferenceDeployment d;
        try (InputStream in =
                Files.newInputStream(Manifests.repo().resolve("manifests/samples/llama-3.1-8b-2gpu.yaml"))) {
            d = Manifests.SERIALIZATION.unmarshal(in, InferenceDeployment.class);
        }
        d.getMetadata().setNamespace(ns.name());
        d.getMetadata().setName("as-sa");
        d.getSpec().replicas = 1;
        d.getSpec().rollout.stabilityWindowSeconds = 2;
        admin.resource(d).create();

        await(admin, ns, "rolled out and stable", x -> phase(x, Phase.Ready) && x.getStatus().lastStableSpec != null);
        // the packaged operator read TENSORLANE_RUNTIME_IMAGE (Quarkus' env mapping of tensorlane.runtime-image): the
        // engine of type Tensorlane without spec.engine.image and its download step run that image
        var pod = admin.apps()
                .deployments()
                .inNamespace(ns.name())
                .withName("as-sa")
                .get()
                .getSpec()
                .getTemplate()
                .getSpec();
        assertThat(pod.getContainers()).extracting(c -> c.getImage()).containsExactly(RUNTIME_IMAGE);
        assertThat(pod.getInitContainers()).extracting(c -> c.getImage()).containsExactly(RUNTIME_IMAGE);

        sim.addRule(SimRule.forAllPods("oom-above-0.93", SimAction.cudaOom())
                .inNamespace(ns.name())
                .withMemoryFractionAtLeast(0.93));
        admin.resources(InferenceDeployment.class)
                .inNamespace(ns.name())
                .withName("as-sa")
                .edit(x -> {
                    x.getSpec().memory.fraction = "0.95";
                    return x;
                });
        InferenceDeployment rolledBack = await(
                admin,
                ns,
                "rolled back",
                x -> x.getStatus() != null
                        && x.getStatus().conditions.stream()
                                .anyMatch(c -> "RolledBack".equals(c.getType()) && "True".equals(c.getStatus())));
        assertThat(rolledBack.getStatus().lastFailure).isNotNull();

        admin.resources(InferenceDeployment.class)
                .inNamespace(ns.name())
                .withName("as-sa")
                .delete();
        Awaitility.await().atMost(TIMEOUT).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
            assertThat(admin.resources(InferenceDeployment.class)
                            .inNamespace(ns.name())
                            .withName("as-sa")
                            .get())
                    .isNull();
            assertThat(admin.apps().deployments().inNamespace(ns.name()).list().getItems())
                    .as("owned Deployments garbage-collected")
                    .isEmpty();
        });

        assertThat(operator.isAlive())
                .as("operator still running; log:%n%s", tail())
                .isTrue();
        assertThat(Files.readAllLines(log))
                .as("operator log (%s) has no authorization failure", log)
                .noneMatch(l -> FORBIDDEN.matcher(l).find()
                        && !TERMINATING_NAMESPACE.matcher(l).find());
    }

    @ParameterizedTest(name = "{0} {1} {2} in ''{3}'' -> allowed={4}")
    @Order(2)
    @CsvSource({
        // what it needs (sanity: the review itself works)
        "list,   inferencedeployments, tensorlane.io, '',                 true",
        "patch,  deployments,          apps,          '',                 true",
        // the download step's progress: read its log, nothing else of a pod's subresources
        "get,    pods/log,             '',            default,            true",
        // what it must not do
        "create, pods/exec,            '',            default,            false",
        "get,    pods/exec,            '',            default,            false",
        "patch,  pods/status,          '',            default,            false",
        "create, pods/eviction,        '',            default,            false",
        "get,    secrets,              '',            tensorlane-system,  false",
        "list,   secrets,              '',            '',                 false",
        "delete, nodes,                '',            '',                 false",
        "create, configmaps,           '',            default,            false",
        "update, configmaps,           '',            tensorlane-system,  false",
        "delete, deployments,          apps,          default,            false",
        "update, inferencedeployments, tensorlane.io, default,            false",
        "delete, inferencedeployments, tensorlane.io, default,            false",
        "create, roles,                rbac.authorization.k8s.io, default, false",
        "create, pods,                 '',            default,            false",
        "delete, gputopologies,        tensorlane.io, '',                 false"
    })
    void serviceAccountMayOnlyDoWhatItNeeds(
            String verb,
            String resource,
            String group,
            String namespace,
            boolean allowed,
            LocalCluster cluster,
            KubernetesClient admin) {
        try (KubernetesClient asOperator = ManifestsApplyIT.tokenClient(cluster, admin, SYSTEM_NS, SA)) {
            SelfSubjectAccessReview review = asOperator
                    .authorization()
                    .v1()
                    .selfSubjectAccessReview()
                    .create(new SelfSubjectAccessReviewBuilder()
                            .withNewSpec()
                            .withNewResourceAttributes()
                            .withVerb(verb)
                            .withResource(resource.split("/")[0])
                            .withSubresource(resource.contains("/") ? resource.split("/")[1] : null)
                            .withGroup(group)
                            .withNamespace(namespace.isEmpty() ? null : namespace)
                            .endResourceAttributes()
                            .endSpec()
                            .build());
            assertThat(review.getStatus().getAllowed())
                    .as("%s %s.%s in '%s'", verb, resource, group, namespace)
                    .isEqualTo(allowed);
        }
    }

    @Test
    @Order(3)
    void realCallsOutsideItsRoleAreRefused(LocalCluster cluster, KubernetesClient admin) {
        try (KubernetesClient asOperator = ManifestsApplyIT.tokenClient(cluster, admin, SYSTEM_NS, SA)) {
            ManifestsApplyIT.assertForbidden(
                    () -> asOperator.secrets().inNamespace(SYSTEM_NS).list());
            ManifestsApplyIT.assertForbidden(
                    () -> asOperator.secrets().inAnyNamespace().list());
            ManifestsApplyIT.assertForbidden(
                    () -> asOperator.configMaps().inNamespace(SYSTEM_NS).list());
            String node = admin.nodes().list().getItems().get(0).getMetadata().getName();
            ManifestsApplyIT.assertForbidden(
                    () -> asOperator.nodes().withName(node).delete());
            assertThat(admin.nodes().withName(node).get()).isNotNull();
        }
    }

    @Test
    @Order(4)
    void leaderElectionHoldsALeaseInTheOperatorNamespace(KubernetesClient admin) {
        // the prod profile (no QUARKUS_PROFILE) activates leader election: two replicas must not both reconcile
        Awaitility.await()
                .atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofSeconds(1))
                .untilAsserted(() -> assertThat(
                                admin.leases().inNamespace(SYSTEM_NS).list().getItems())
                        .as("Leases in %s; operator log:%n%s", SYSTEM_NS, tail())
                        .isNotEmpty());
    }

    static String serviceAccountToken(KubernetesClient admin) {
        var account = admin.serviceAccounts()
                .inNamespace(SYSTEM_NS)
                .withName(SA)
                .waitUntilCondition(
                        a -> a != null
                                && a.getSecrets() != null
                                && !a.getSecrets().isEmpty(),
                        60,
                        java.util.concurrent.TimeUnit.SECONDS);
        var secret = admin.secrets()
                .inNamespace(SYSTEM_NS)
                .withName(account.getSecrets().get(0).getName())
                .get();
        return new String(Base64.getDecoder().decode(secret.getData().get("token")), StandardCharsets.UTF_8);
    }

    static InferenceDeployment await(
            KubernetesClient admin, TestNamespace ns, String what, Predicate<InferenceDeployment> condition) {
        try {
            return Awaitility.await(what)
                    .atMost(TIMEOUT)
                    .pollInterval(Duration.ofMillis(500))
                    .ignoreExceptions()
                    .until(
                            () -> admin.resources(InferenceDeployment.class)
                                    .inNamespace(ns.name())
                                    .withName("as-sa")
                                    .get(),
                            x -> x != null && condition.test(x));
        } catch (ConditionTimeoutException e) {
            var x = admin.resources(InferenceDeployment.class)
                    .inNamespace(ns.name())
                    .withName("as-sa")
                    .get();
            throw new AssertionError(
                    "not " + what + " in " + TIMEOUT + "; status: "
                            + (x == null ? "gone" : Manifests.SERIALIZATION.asYaml(x.getStatus())) + "\noperator log:\n"
                            + tail(),
                    e);
        }
    }

    static boolean phase(InferenceDeployment x, Phase p) {
        return x.getStatus() != null
                && x.getStatus().phase == p
                && x.getMetadata().getGeneration().equals(x.getStatus().observedGeneration);
    }

    static String tail() {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }
}
