package io.tensorlane.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A current Kubernetes CustomResourceDefinition API server next to the 1.20 control plane: the standalone
 * {@code apiextensions-apiserver} of Kubernetes 1.36 ({@link CrdServerBinary}) on an etcd of its own, on free loopback
 * ports. It serves {@code apiextensions.k8s.io/v1} and the custom resources only; like an aggregated API server it
 * delegates to a core kube-apiserver ({@code core}: the local 1.20 one) what it does not own: authentication
 * (TokenReview, so the core's admin token works here too), authorization (SubjectAccessReview; {@code system:masters}
 * is allowed locally) and the namespaces its NamespaceLifecycle admission checks. Its own admission chain runs, except
 * ValidatingAdmissionPolicy and MutatingAdmissionPolicy: a 1.20 core serves neither API, so their informers would
 * never sync and {@code /readyz} would never pass.
 *
 * <p>Schema validation, defaulting, pruning, the status subresource, server-side apply and the structural-schema checks
 * of a CRD are the apiextensions server's own code, so what a 1.36 cluster does with our CRDs and objects, this does.
 * Not here: CRD conversion webhooks (none in our CRDs) and anything of the core API.
 */
public final class CurrentCrdServer implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

    private final Path stateDir;
    private final Path etcdData;
    private final List<ManagedProcess> processes = new ArrayList<>();
    private final String version;
    private LocalCluster cluster;

    private CurrentCrdServer(Path stateDir, Path etcdData, String version) {
        this.stateDir = stateDir;
        this.etcdData = etcdData;
        this.version = version;
    }

    /**
     * Starts etcd and the CRD server delegating to {@code core} (whose kubeconfig must hold an admin token); returns when
     * the server's {@code /readyz} answers. The processes die with this JVM; {@link #stop} stops them by PID.
     */
    public static CurrentCrdServer start(LocalCluster core) {
        Path dir;
        try {
            // the control plane's sweep removes this state (and the etcd data below) once this JVM is gone
            dir = StateDirs.createOwned("crd-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Path etcdData = StateDirs.etcdData(dir);
        Path logs = dir.resolve("logs");
        KubeBinaries kube = KubeBinaries.locate(logs.resolve("k8s-binaries.log"));
        CrdServerBinary crd = CrdServerBinary.locate(logs.resolve("crd-apiserver.log"));
        var server = new CurrentCrdServer(dir, etcdData, crd.version());
        try {
            server.launch(kube, crd, core);
        } catch (RuntimeException | IOException e) {
            server.stop();
            throw e instanceof RuntimeException re
                    ? re
                    : new IllegalStateException("cannot start the CRD API server: " + e.getMessage(), e);
        }
        return server;
    }

    private void launch(KubeBinaries kube, CrdServerBinary crd, LocalCluster core) throws IOException {
        Path logs = Files.createDirectories(stateDir.resolve("logs"));
        Path pki = Files.createDirectories(stateDir.resolve("pki"));
        Files.createDirectories(etcdData);
        int[] ports = LocalControlPlane.freePorts(3);
        String etcdUrl = "http://127.0.0.1:" + ports[0];
        String peerUrl = "http://127.0.0.1:" + ports[1];
        ManagedProcess etcd = spawn(
                "etcd",
                logs,
                List.of(
                        kube.etcd().toString(),
                        "--name=tensorlane-crd",
                        "--data-dir=" + etcdData,
                        "--listen-client-urls=" + etcdUrl,
                        "--advertise-client-urls=" + etcdUrl,
                        "--listen-peer-urls=" + peerUrl,
                        "--initial-advertise-peer-urls=" + peerUrl,
                        "--initial-cluster=tensorlane-crd=" + peerUrl));
        Readiness.await("etcd health", START_TIMEOUT, () -> Readiness.httpOk(etcdUrl + "/health"), List.of(etcd));

        String url = "https://127.0.0.1:" + ports[2];
        String coreKubeconfig = core.kubeconfig().toString();
        ManagedProcess api = spawn(
                CrdServerBinary.NAME,
                logs,
                List.of(
                        crd.server().toString(),
                        "--etcd-servers=" + etcdUrl,
                        "--bind-address=127.0.0.1",
                        "--secure-port=" + ports[2],
                        // a self-signed serving certificate for localhost and 127.0.0.1 is generated here
                        "--cert-dir=" + pki,
                        "--kubeconfig=" + coreKubeconfig,
                        "--authentication-kubeconfig=" + coreKubeconfig,
                        "--authorization-kubeconfig=" + coreKubeconfig,
                        "--disable-admission-plugins=ValidatingAdmissionPolicy,MutatingAdmissionPolicy",
                        "--enable-priority-and-fairness=false",
                        "--profiling=false",
                        "--v=1"));
        Path serving = pki.resolve("apiserver.crt");
        Readiness.await(
                CrdServerBinary.NAME + " /readyz on " + url,
                START_TIMEOUT,
                () -> Files.isRegularFile(serving) && Readiness.httpOk(url + "/readyz"),
                List.of(etcd, api));
        cluster = LocalCluster.write(stateDir.resolve("kubeconfig"), url, core.adminToken(), Files.readString(serving));
    }

    private ManagedProcess spawn(String name, Path logs, List<String> cmd) throws IOException {
        ManagedProcess p = ManagedProcess.start(name, cmd, logs.resolve(name + ".log"), false);
        processes.add(p);
        return p;
    }

    /** Its kubeconfig (the core's admin token; the server's certificate pinned), URL and token. */
    public LocalCluster cluster() {
        return cluster;
    }

    /** What the cached build records, e.g. {@code golang-k8s-apiextensions-apiserver-dev 0.36.4-1}. */
    public String version() {
        return version;
    }

    public List<ManagedProcess> processes() {
        return List.copyOf(processes);
    }

    /** The server's log so far (for a failed assertion's message). */
    public String logTail(int lines) {
        return processes.stream()
                .filter(p -> p.name().equals(CrdServerBinary.NAME))
                .findFirst()
                .map(p -> p.logTail(lines))
                .orElse("");
    }

    /** Stops the server, then etcd, by PID, and removes the etcd data and the state directory. */
    public synchronized void stop() {
        LocalControlPlane.stopProcesses(processes);
        StateDirs.deleteTree(etcdData);
        if (!"1".equals(System.getenv("TENSORLANE_KEEP_STATE"))) {
            StateDirs.deleteTree(stateDir);
        }
    }

    @Override
    public void close() {
        stop();
    }
}
