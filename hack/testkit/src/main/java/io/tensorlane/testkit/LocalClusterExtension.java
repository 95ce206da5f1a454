package io.tensorlane.testkit;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension: tests against a real Kubernetes 1.20 API server with simulated GPU nodes.
 *
 * <pre>
 * &#64;ExtendWith(LocalClusterExtension.class)          // or &#64;WithLocalCluster
 * class MyOperatorIT {
 *   &#64;Test
 *   void schedules(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
 *     String node = sim.addNode(TopologyFixtures.RTX_PRO_6000_PCIE_8);   // Ready, 8 x nvidia.com/gpu, GpuTopology
 *     sim.addRule(SimRule.forAllPods("oom", SimAction.of(SimAction.Type.CudaOom)).inNamespace(ns.name()).whenOutOfMemory());
 *     client.apps().deployments().inNamespace(ns.name()).resource(...).create();
 *     ...
 *   }
 * }
 * </pre>
 *
 * <ul>
 *   <li><b>Once per JVM</b>: the control plane ({@link LocalControlPlane}: etcd, kube-apiserver with RBAC,
 *       kube-controller-manager, kube-scheduler) starts on first use and stops when the test run ends (JUnit root
 *       store), which also asserts that none of its processes is left. With {@code TENSORLANE_KUBECONFIG} set (see
 *       {@code hack/local-cluster.sh env}) it attaches to that cluster instead. The CRDs from
 *       {@code manifests/crds} are installed (server-side apply) before the first test.
 *   <li><b>Per test class</b>: a fresh namespace ({@link TestNamespace}, {@code <class-name>-<random>}), whose
 *       {@code default} ServiceAccount has its token before the first test, deleted after the class; simulated nodes
 *       the class added and simulator rules it set are removed after the class.
 *   <li><b>Parameters</b>: {@link KubernetesClient} (admin, shared: do not close), {@link TestNamespace},
 *       {@link GpuNodeSimulator} (shared per JVM, started on first request), {@link LocalCluster} (kubeconfig,
 *       URL, token; {@link LocalCluster#clientAs} for a ServiceAccount client).
 *   <li><b>Isolation within a class is the test's job</b>: methods share the namespace and the simulator. A
 *       Deployment left behind re-creates its pods on the next method's nodes (taking their GPUs); delete
 *       workloads, {@code sim.clearRules()} and remove the method's nodes in {@code @AfterEach} when methods assert
 *       on scheduling (see {@code SimulatedWorkloads}).
 *   <li>Code that cannot take parameters (e.g. a Quarkus test resource) uses {@link #shared()}. The system property
 *       {@code kubeconfig} is set to the cluster's kubeconfig, so a fabric8 client built with defaults in this JVM
 *       talks to it.
 * </ul>
 */
public final class LocalClusterExtension implements BeforeAllCallback, AfterAllCallback, ParameterResolver {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(LocalClusterExtension.class);

    /** The JVM's shared cluster, for code outside JUnit parameter resolution. */
    public static SharedCluster shared() {
        return SharedCluster.get();
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        SharedCluster shared = context.getRoot()
                .getStore(NS)
                .getOrComputeIfAbsent(SharedCluster.class, k -> new RootHandle(SharedCluster.get()), RootHandle.class)
                .cluster;
        KubernetesClient client = shared.client();
        String name = namespaceFor(context.getRequiredTestClass());
        client.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .addToLabels(
                                "tensorlane.io/test-class",
                                context.getRequiredTestClass().getSimpleName().replaceAll("[^A-Za-z0-9_.-]", "-"))
                        .endMetadata()
                        .build())
                .create();
        // 1.20's ServiceAccount admission rejects pods until the namespace's default account has its token
        client.serviceAccounts()
                .inNamespace(name)
                .withName("default")
                .waitUntilCondition(
                        sa -> sa != null
                                && sa.getSecrets() != null
                                && !sa.getSecrets().isEmpty(),
                        60,
                        TimeUnit.SECONDS);
        var sim = shared.simulatorIfStarted();
        ExtensionContext.Store store = context.getStore(NS);
        store.put(TestNamespace.class, new TestNamespace(name));
        store.put("nodesBefore", sim == null ? Set.of() : new HashSet<>(sim.nodes()));
    }

    @Override
    public void afterAll(ExtensionContext context) {
        SharedCluster shared = SharedCluster.get();
        TestNamespace ns = context.getStore(NS).get(TestNamespace.class, TestNamespace.class);
        var sim = shared.simulatorIfStarted();
        if (sim != null) {
            sim.clearRules();
            @SuppressWarnings("unchecked")
            Set<String> before = context.getStore(NS).getOrDefault("nodesBefore", Set.class, Set.of());
            sim.nodes().stream().filter(n -> !before.contains(n)).forEach(sim::removeNode);
        }
        if (ns != null) {
            shared.client().namespaces().withName(ns.name()).delete();
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext pc, ExtensionContext ec) {
        Class<?> t = pc.getParameter().getType();
        return t == KubernetesClient.class
                || t == TestNamespace.class
                || t == GpuNodeSimulator.class
                || t == LocalCluster.class
                || t == SharedCluster.class;
    }

    @Override
    public Object resolveParameter(ParameterContext pc, ExtensionContext ec) {
        Class<?> t = pc.getParameter().getType();
        SharedCluster shared = SharedCluster.get();
        if (t == KubernetesClient.class) {
            return shared.client();
        }
        if (t == LocalCluster.class) {
            return shared.cluster();
        }
        if (t == SharedCluster.class) {
            return shared;
        }
        if (t == GpuNodeSimulator.class) {
            return shared.simulator();
        }
        for (ExtensionContext c = ec; c != null; c = c.getParent().orElse(null)) {
            TestNamespace ns = c.getStore(NS).get(TestNamespace.class, TestNamespace.class);
            if (ns != null) {
                return ns;
            }
        }
        throw new ParameterResolutionException("no TestNamespace: register LocalClusterExtension on the test class "
                + "(@ExtendWith on the class, not on a method)");
    }

    static String namespaceFor(Class<?> testClass) {
        String base = testClass
                .getSimpleName()
                .replaceAll("([a-z0-9])([A-Z])", "$1-$2")
                .toLowerCase(Locale.ROOT)
                .replaceAll("[^a-z0-9-]+", "-")
                .replaceAll("^-+|-+$", "");
        if (base.length() > 40) {
            base = base.substring(0, 40).replaceAll("-+$", "");
        }
        return (base.isEmpty() ? "test" : base) + "-"
                + Integer.toString(ThreadLocalRandom.current().nextInt(36 * 36 * 36, 36 * 36 * 36 * 36), 36);
    }

    /** Closes the shared cluster when the whole test run ends (JUnit closes root-store values then). */
    @SuppressWarnings("deprecation")
    static final class RootHandle implements ExtensionContext.Store.CloseableResource, AutoCloseable {
        final SharedCluster cluster;

        RootHandle(SharedCluster cluster) {
            this.cluster = cluster;
        }

        @Override
        public void close() {
            cluster.close();
        }
    }
}
