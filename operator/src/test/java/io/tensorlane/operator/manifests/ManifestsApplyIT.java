package io.tensorlane.operator.manifests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.tensorlane.api.v1alpha1.GpuTopology;
import io.tensorlane.api.v1alpha1.GpuTopologySpec;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.testkit.LocalCluster;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The install manifests on a real 1.20 API server (testkit): `kubectl apply -k manifests/overlays/dev` succeeds, a
 * second apply of the unchanged manifests changes no object (GitOps re-sync), every sample passes the CRD schema, and
 * the probe's ServiceAccount can publish a GpuTopology exactly as the probe does, and nothing else.
 */
@WithLocalCluster
class ManifestsApplyIT {
    static final String DEV = "manifests/overlays/dev";
    static final String SYSTEM_NS = "tensorlane-system";

    @BeforeAll
    static void install(LocalCluster cluster) {
        Manifests.kubectl(
                cluster.kubeconfig(),
                "apply",
                "-k",
                Manifests.repo().resolve(DEV).toString());
    }

    @Test
    void reapplyingUnchangedManifestsChangesNothing(LocalCluster cluster, KubernetesClient client) {
        List<HasMetadata> objects = Manifests.kustomize(DEV);
        baseline(cluster);
        Map<String, String> settled = settled(client, objects);

        Manifests.kubectl(
                cluster.kubeconfig(),
                "apply",
                "-k",
                Manifests.repo().resolve(DEV).toString());
        assertThat(resourceVersions(client, objects)).isEqualTo(settled);
    }

    @Test
    void serverSideReapplyOfUnchangedManifestsChangesNothing(LocalCluster cluster, KubernetesClient client) {
        // Flux applies server-side: the first server-side apply takes the fields over (managedFields change), the next
        // one of the same manifests must be a no-op
        List<HasMetadata> objects = Manifests.kustomize(DEV);
        String dir = Manifests.repo().resolve(DEV).toString();
        Manifests.kubectl(
                cluster.kubeconfig(),
                "apply",
                "--server-side",
                "--force-conflicts",
                "--field-manager=gitops",
                "-k",
                dir);
        Map<String, String> before = settled(client, objects);
        Manifests.kubectl(cluster.kubeconfig(), "apply", "--server-side", "--field-manager=gitops", "-k", dir);
        assertThat(resourceVersions(client, objects)).isEqualTo(before);
    }

    /**
     * A client-side apply of the manifests, so each client-side check starts from its own sync whatever ran before it
     * (the server-side test hands the fields to another manager; the next client-side apply takes them back once).
     */
    static void baseline(LocalCluster cluster) {
        Manifests.kubectl(
                cluster.kubeconfig(),
                "apply",
                "-k",
                Manifests.repo().resolve(DEV).toString());
    }

    @Test
    void secondApplyReportsEveryObjectUnchanged(LocalCluster cluster) {
        // kubectl (and Argo CD's diff) computes a patch from the manifest, the live object and the last applied one: a
        // field the server drops or rewrites (e.g. a zero value it omits) shows as a change on every sync
        baseline(cluster);
        String out = Manifests.kubectl(
                cluster.kubeconfig(),
                "apply",
                "-k",
                Manifests.repo().resolve(DEV).toString());
        assertThat(out.lines())
                .as("kubectl apply output of an unchanged re-sync")
                .allMatch(l -> l.endsWith(" unchanged"));
    }

    @Test
    void everySampleValidatesAgainstTheCrdSchema(LocalCluster cluster, TestNamespace ns, KubernetesClient client) {
        List<Path> samples = Manifests.files("manifests/samples", ".yaml").stream()
                .filter(p -> !p.getFileName().toString().equals("kustomization.yaml"))
                .toList();
        assertThat(samples).hasSizeGreaterThanOrEqualTo(4);
        for (Path sample : samples) {
            Manifests.kubectl(cluster.kubeconfig(), "apply", "-n", ns.name(), "-f", sample.toString());
        }
        assertThat(client.genericKubernetesResources("tensorlane.io/v1alpha1", "InferenceDeployment")
                        .inNamespace(ns.name())
                        .list()
                        .getItems())
                .hasSize(samples.size());
        // the schema is live: the same kind of object with an out-of-range field is refused at apply time
        GenericKubernetesResource bad = Manifests.SERIALIZATION.unmarshal(
                Manifests.run(List.of("cat", samples.get(0).toString()), null, 10)
                        .stdout(),
                GenericKubernetesResource.class);
        bad.getMetadata().setName("out-of-range");
        bad.getMetadata().setNamespace(ns.name());
        @SuppressWarnings("unchecked")
        Map<String, Object> parallelism = (Map<String, Object>)
                ((Map<String, Object>) bad.getAdditionalProperties().get("spec")).get("parallelism");
        parallelism.put("tensor", 9);
        assertThatThrownBy(() -> client.resource(bad).create())
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("spec.parallelism.tensor");
    }

    @Test
    void probeServiceAccountPublishesTopologiesAndNothingElse(LocalCluster cluster, KubernetesClient admin) {
        String node = "probe-rbac-node-" + System.nanoTime() % 100000;
        try (KubernetesClient probe = tokenClient(cluster, admin, SYSTEM_NS, "tensorlane-probe")) {
            // exactly what runtime-image's Publisher does: SSA of the object, then SSA of its status
            GpuTopology t = new GpuTopology();
            t.setMetadata(new ObjectMetaBuilder()
                    .withName(node)
                    .withLabels(Map.of("app.kubernetes.io/managed-by", "tensorlane-probe"))
                    .build());
            GpuTopologySpec spec = new GpuTopologySpec();
            spec.nodeName = node;
            t.setSpec(spec);
            probe.resource(t).fieldManager("tensorlane-probe").forceConflicts().serverSideApply();
            t.setStatus(new GpuTopologyStatus());
            t.getStatus().source = GpuTopologyStatus.Source.probe;
            PatchContext ssa = new PatchContext.Builder()
                    .withPatchType(PatchType.SERVER_SIDE_APPLY)
                    .withFieldManager("tensorlane-probe")
                    .withForce(true)
                    .build();
            probe.resource(t).subresource("status").patch(ssa, t);
            probe.resource(t).fieldManager("tensorlane-probe").forceConflicts().serverSideApply(); // the next round

            assertThat(admin.resources(GpuTopology.class).withName(node).get().getStatus().source)
                    .isEqualTo(GpuTopologyStatus.Source.probe);
            assertForbidden(() -> probe.resources(GpuTopology.class).list());
            assertForbidden(
                    () -> probe.resources(GpuTopology.class).withName(node).delete());
            assertForbidden(() -> probe.nodes().withName(node).get());
            assertForbidden(() -> probe.secrets().inNamespace(SYSTEM_NS).list());
            assertForbidden(() -> probe.configMaps().inNamespace(SYSTEM_NS).list());
            assertForbidden(() -> probe.pods().inNamespace(SYSTEM_NS).list());
        } finally {
            admin.resources(GpuTopology.class).withName(node).delete();
        }
    }

    /** resourceVersions once controllers finished their own writes (token secrets, Deployment/DaemonSet status). */
    static Map<String, String> settled(KubernetesClient client, List<HasMetadata> objects) {
        return Awaitility.await()
                .atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofSeconds(3))
                .until(
                        new java.util.concurrent.Callable<Map<String, String>>() {
                            Map<String, String> previous = Map.of();

                            @Override
                            public Map<String, String> call() {
                                Map<String, String> now = resourceVersions(client, objects);
                                Map<String, String> before = previous;
                                previous = now;
                                return now.equals(before) ? now : null;
                            }
                        },
                        v -> v != null);
    }

    static void assertForbidden(Runnable call) {
        assertThatThrownBy(call::run)
                .isInstanceOfSatisfying(
                        KubernetesClientException.class,
                        e -> assertThat(e.getCode()).as(e.getMessage()).isEqualTo(403));
    }

    /** A client authenticated with the token the 1.20 token controller put into the ServiceAccount's secret. */
    static KubernetesClient tokenClient(LocalCluster cluster, KubernetesClient admin, String ns, String sa) {
        var account = admin.serviceAccounts()
                .inNamespace(ns)
                .withName(sa)
                .waitUntilCondition(
                        a -> a != null
                                && a.getSecrets() != null
                                && !a.getSecrets().isEmpty(),
                        60,
                        java.util.concurrent.TimeUnit.SECONDS);
        var secret = admin.secrets()
                .inNamespace(ns)
                .withName(account.getSecrets().get(0).getName())
                .get();
        String token = new String(
                java.util.Base64.getDecoder().decode(secret.getData().get("token")),
                java.nio.charset.StandardCharsets.UTF_8);
        var base = cluster.config();
        var cfg = new io.fabric8.kubernetes.client.ConfigBuilder(io.fabric8.kubernetes.client.Config.empty())
                .withMasterUrl(cluster.masterUrl())
                .withOauthToken(token)
                .withCaCertData(base.getCaCertData())
                .withTrustCerts(base.isTrustCerts())
                .withNamespace(ns)
                .withRequestRetryBackoffLimit(0)
                .build();
        return new io.fabric8.kubernetes.client.KubernetesClientBuilder()
                .withConfig(cfg)
                .build();
    }

    static Map<String, String> resourceVersions(KubernetesClient client, List<HasMetadata> objects) {
        Map<String, String> out = new TreeMap<>();
        for (HasMetadata o : objects) {
            var op = client.genericKubernetesResources(o.getApiVersion(), o.getKind());
            var live = o.getMetadata().getNamespace() == null
                    ? op.withName(o.getMetadata().getName()).get()
                    : op.inNamespace(o.getMetadata().getNamespace())
                            .withName(o.getMetadata().getName())
                            .get();
            assertThat(live)
                    .as("%s %s exists", o.getKind(), o.getMetadata().getName())
                    .isNotNull();
            out.put(
                    o.getKind() + "/" + o.getMetadata().getName(),
                    live.getMetadata().getResourceVersion());
        }
        return out;
    }
}
