package io.tensorlane.testkit;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The two CustomResourceDefinition servers a test compares: the 1.20 kube-apiserver of the JVM's shared control plane
 * and Kubernetes 1.36's apiextensions-apiserver ({@link CurrentCrdServer}) delegating to it, each with the CRDs of
 * {@code manifests/crds} installed. The 1.36 server starts once per test JVM, on first use, and stops when the run
 * ends (before the control plane), checked to leave no process behind. A test class takes it as a parameter:
 * {@code @WithLocalCluster @ExtendWith(CrdServers.Extension.class)}.
 *
 * @param legacy  the shared control plane's admin client (1.20)
 * @param current an admin client of the 1.36 CRD server (the same token; TokenReview goes to the 1.20 core)
 * @param server  the 1.36 server's processes and kubeconfig
 */
record CrdServers(KubernetesClient legacy, KubernetesClient current, CurrentCrdServer server) {

    /** One server under test, by name. */
    record Server(String name, KubernetesClient client, LocalCluster cluster) {}

    List<Server> both() {
        return List.of(
                new Server("1.20", legacy, SharedCluster.get().cluster()),
                new Server("1.36", current, server.cluster()));
    }

    static CrdServers start() {
        SharedCluster shared = SharedCluster.get();
        long t0 = System.nanoTime();
        CurrentCrdServer s = CurrentCrdServer.start(shared.cluster());
        KubernetesClient client = s.cluster().newClient();
        try {
            List<String> crds = Crds.install(client);
            System.err.printf(
                    "[tensorlane-testkit] CRD server %s up with %s in %.1f s at %s%n",
                    s.version(),
                    crds,
                    (System.nanoTime() - t0) / 1e9,
                    s.cluster().masterUrl());
        } catch (RuntimeException e) {
            client.close();
            s.stop();
            throw new IllegalStateException(
                    "CRDs do not install on the 1.36 CRD server: " + e.getMessage() + "\n--- its log ---\n"
                            + s.logTail(30),
                    e);
        }
        return new CrdServers(shared.client(), client, s);
    }

    private void close() {
        current.close();
        server.stop();
        List<ManagedProcess> left =
                server.processes().stream().filter(ManagedProcess::isAlive).toList();
        if (!left.isEmpty()) {
            throw new IllegalStateException("CRD server processes left behind after stop: " + left);
        }
        System.err.println("[tensorlane-testkit] CRD server stopped; no process left ("
                + server.processes().size() + " checked)");
    }

    /** Resolves {@link CrdServers} parameters; the instance lives in the root store, closed at the end of the run. */
    static final class Extension implements ParameterResolver {
        private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(CrdServers.class);

        @Override
        public boolean supportsParameter(ParameterContext pc, ExtensionContext ec) {
            return pc.getParameter().getType() == CrdServers.class;
        }

        @Override
        public Object resolveParameter(ParameterContext pc, ExtensionContext ec) {
            return ec.getRoot()
                    .getStore(NS)
                    .getOrComputeIfAbsent(CrdServers.class, k -> new Handle(start()), Handle.class)
                    .servers;
        }

        private record Handle(CrdServers servers) implements ExtensionContext.Store.CloseableResource {
            @Override
            public void close() {
                servers.close();
            }
        }
    }
}
