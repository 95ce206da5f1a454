package io.tensorlane.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A real Kubernetes 1.20 control plane on 127.0.0.1: etcd, kube-apiserver, kube-controller-manager and
 * kube-scheduler, on free loopback ports, with their data, keys, logs and a kubeconfig in one state directory
 * ({@link StateDirs}: etcd's data on /dev/shm where it can, the state of dead owners swept at the next start).
 *
 * <ul>
 *   <li>kube-apiserver: RBAC ({@code Node,RBAC}), a static token file with user {@code admin} in
 *       {@code system:masters}, service-account signing key and issuer, a self-signed serving certificate it generates
 *       into {@code <state>/pki}, no insecure port.
 *   <li>kube-controller-manager: every controller except node lifecycle (there are no kubelets; the
 *       {@code GpuNodeSimulator} keeps its nodes Ready), per-controller service-account credentials, the service-account
 *       token controller (so ServiceAccount tokens work), no leader election, health on a loopback port.
 *   <li>kube-scheduler: no leader election, health on a loopback port.
 * </ul>
 *
 * {@link #start} returns when all four are healthy. {@link #stop} (and, for attached planes, a JVM shutdown hook and
 * the kernel's parent-death signal) stops every process by PID. A detached plane ({@code hack/local-cluster.sh up})
 * outlives this JVM and is stopped with {@link ClusterState#stop}.
 */
public final class LocalControlPlane implements AutoCloseable {
    public static final String ADMIN_USER = "admin";
    public static final String SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

    private final Path stateDir;
    private final Path etcdData;
    private final List<ManagedProcess> processes = new ArrayList<>();
    /** How each process was started and how its health is asked, for {@link #restartApiServerAndEtcd}. */
    private final java.util.Map<String, List<String>> commands = new java.util.HashMap<>();

    private final java.util.Map<String, String> healthUrls = new java.util.HashMap<>();
    private Path logsDir;
    private boolean detachedProcesses;
    private final boolean keepState;
    private LocalCluster cluster;
    private Duration startupTime;
    private Thread shutdownHook;

    private LocalControlPlane(Path stateDir, Path etcdData, boolean keepState) {
        this.stateDir = stateDir;
        this.etcdData = etcdData;
        this.keepState = keepState;
    }

    /** Starts an attached control plane in a fresh temporary state directory (deleted on stop unless TENSORLANE_KEEP_STATE=1). */
    public static LocalControlPlane start() {
        try {
            StateDirs.sweepStale();
            return start(StateDirs.createOwned(""), false);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Starts a control plane with its state in {@code stateDir}. {@code detached}: the processes get their own session
     * and survive this JVM (the state file records their PIDs); otherwise they die with it.
     */
    public static LocalControlPlane start(Path stateDir, boolean detached) {
        long t0 = System.nanoTime();
        var plane = new LocalControlPlane(
                stateDir, StateDirs.etcdData(stateDir), detached || "1".equals(System.getenv("TENSORLANE_KEEP_STATE")));
        if (!detached) {
            plane.shutdownHook = new Thread(plane::stopQuietly, "tensorlane-control-plane-stop");
            Runtime.getRuntime().addShutdownHook(plane.shutdownHook);
        }
        try {
            plane.launch(KubeBinaries.locate(stateDir.resolve("logs/k8s-binaries.log")), detached);
        } catch (RuntimeException | IOException e) {
            plane.stopQuietly();
            throw e instanceof RuntimeException re
                    ? re
                    : new IllegalStateException("cannot start the local control plane: " + e.getMessage(), e);
        }
        plane.startupTime = Duration.ofNanos(System.nanoTime() - t0);
        return plane;
    }

    private void launch(KubeBinaries bin, boolean detached) throws IOException {
        Path pki = Files.createDirectories(stateDir.resolve("pki"));
        Path logs = Files.createDirectories(stateDir.resolve("logs"));
        logsDir = logs;
        detachedProcesses = detached;
        Files.createDirectories(etcdData);
        Path saKey = pki.resolve("sa.key");
        Path saPub = pki.resolve("sa.pub");
        Pki.writeServiceAccountKeys(saKey, saPub);
        String token = Pki.randomToken();
        Path tokens = pki.resolve("tokens.csv");
        Files.writeString(tokens, token + "," + ADMIN_USER + ",uid-admin,\"system:masters\"\n");
        int[] ports = freePorts(5);
        int etcdClient = ports[0];
        int etcdPeer = ports[1];
        int apiPort = ports[2];
        int cmPort = ports[3];
        int schedPort = ports[4];
        String etcdUrl = "http://127.0.0.1:" + etcdClient;
        String peerUrl = "http://127.0.0.1:" + etcdPeer;

        ManagedProcess etcd = spawn(
                "etcd",
                logs,
                detached,
                List.of(
                        bin.etcd().toString(),
                        "--name=tensorlane",
                        "--data-dir=" + etcdData,
                        "--listen-client-urls=" + etcdUrl,
                        "--advertise-client-urls=" + etcdUrl,
                        "--listen-peer-urls=" + peerUrl,
                        "--initial-advertise-peer-urls=" + peerUrl,
                        "--initial-cluster=tensorlane=" + peerUrl,
                        "--snapshot-count=10000"));
        healthUrls.put("etcd", etcdUrl + "/health");
        Readiness.await("etcd health", START_TIMEOUT, () -> Readiness.httpOk(etcdUrl + "/health"), List.of(etcd));

        String master = "https://127.0.0.1:" + apiPort;
        ManagedProcess api = spawn(
                "kube-apiserver",
                logs,
                detached,
                List.of(
                        bin.apiserver().toString(),
                        "--etcd-servers=" + etcdUrl,
                        "--bind-address=127.0.0.1",
                        "--advertise-address=127.0.0.1",
                        "--secure-port=" + apiPort,
                        "--insecure-port=0",
                        "--cert-dir=" + pki,
                        "--token-auth-file=" + tokens,
                        "--authorization-mode=Node,RBAC",
                        "--service-account-key-file=" + saPub,
                        "--service-account-signing-key-file=" + saKey,
                        "--service-account-issuer=" + SERVICE_ACCOUNT_ISSUER,
                        "--service-cluster-ip-range=10.96.0.0/16",
                        "--allow-privileged=true",
                        // no kubelets: nothing to restrict per node; everything else stays the 1.20 default set
                        "--disable-admission-plugins=NodeRestriction",
                        // pods/log goes to the simulator's kubelet endpoint, which simulated nodes name as InternalDNS
                        // 127.0.0.1
                        // (their Hostname is not resolvable, and nothing may leave loopback)
                        "--kubelet-preferred-address-types=InternalDNS,InternalIP,Hostname,ExternalDNS,ExternalIP",
                        "--enable-priority-and-fairness=false",
                        // /debug/pprof for benchmark investigations (TENSORLANE_APISERVER_PROFILING=true); off
                        // otherwise
                        "--profiling=" + "true".equals(System.getenv("TENSORLANE_APISERVER_PROFILING")),
                        "--logtostderr=true",
                        "--v=1"));
        Path serving = pki.resolve("apiserver.crt");
        healthUrls.put("kube-apiserver", master + "/readyz");
        Readiness.await(
                "kube-apiserver /readyz on " + master,
                START_TIMEOUT,
                () -> Files.isRegularFile(serving) && Readiness.httpOk(master + "/readyz"),
                List.of(etcd, api));
        Path kubeconfig = stateDir.resolve("kubeconfig");
        cluster = LocalCluster.write(kubeconfig, master, token, Files.readString(serving));

        ManagedProcess cm = spawn(
                "kube-controller-manager",
                logs,
                detached,
                List.of(
                        bin.controllerManager().toString(),
                        "--kubeconfig=" + kubeconfig,
                        "--port=0",
                        "--bind-address=127.0.0.1",
                        "--secure-port=" + cmPort,
                        "--leader-elect=false",
                        "--controllers=*,-nodelifecycle,-nodeipam,-cloud-node-lifecycle,-csrsigning,-bootstrapsigner,-tokencleaner",
                        "--use-service-account-credentials=true",
                        "--service-account-private-key-file=" + saKey,
                        "--root-ca-file=" + serving,
                        // the default client limit (20 QPS) paces Deployment -> ReplicaSet -> Pod creation far below
                        // what a real
                        // control plane of a large cluster runs with; benchmarks of the operator must not measure that
                        // limit
                        "--kube-api-qps=300",
                        "--kube-api-burst=600",
                        "--concurrent-deployment-syncs=10",
                        "--concurrent-replicaset-syncs=10",
                        "--profiling=false",
                        "--logtostderr=true",
                        "--v=1"));
        ManagedProcess sched = spawn(
                "kube-scheduler",
                logs,
                detached,
                List.of(
                        bin.scheduler().toString(),
                        "--kubeconfig=" + kubeconfig,
                        "--port=0",
                        "--bind-address=127.0.0.1",
                        "--secure-port=" + schedPort,
                        "--leader-elect=false",
                        "--kube-api-qps=300",
                        "--kube-api-burst=600",
                        "--profiling=false",
                        "--logtostderr=true",
                        "--v=1"));
        List<ManagedProcess> all = List.of(etcd, api, cm, sched);
        Readiness.await(
                "kube-controller-manager /healthz",
                START_TIMEOUT,
                () -> Readiness.httpOk("https://127.0.0.1:" + cmPort + "/healthz"),
                all);
        Readiness.await(
                "kube-scheduler /healthz",
                START_TIMEOUT,
                () -> Readiness.httpOk("https://127.0.0.1:" + schedPort + "/healthz"),
                all);
        ClusterState.of(this).write(stateDir);
    }

    private ManagedProcess spawn(String name, Path logs, boolean detached, List<String> cmd) throws IOException {
        ManagedProcess p = ManagedProcess.start(name, cmd, logs.resolve(name + ".log"), detached);
        processes.add(p);
        commands.put(name, cmd);
        return p;
    }

    /**
     * Restarts the API server and etcd the way a control-plane node reboot does: kube-apiserver, then etcd, are stopped
     * by PID (SIGTERM, SIGKILL after 3 s), nothing runs for {@code downtime}, then etcd starts again on the same data
     * directory and ports, then kube-apiserver with the same arguments (and serving certificate); returns when its
     * /readyz answers. Objects, resourceVersions and the kubeconfig stay valid; the controller-manager and scheduler
     * keep running and reconnect. Returns the time from the stop until /readyz.
     */
    public synchronized Duration restartApiServerAndEtcd(Duration downtime) {
        long t0 = System.nanoTime();
        ManagedProcess etcd = process("etcd");
        ManagedProcess api = process("kube-apiserver");
        stopProcesses(List.of(api, etcd));
        try {
            Thread.sleep(downtime.toMillis());
            ManagedProcess newEtcd = respawn(etcd);
            Readiness.await(
                    "etcd health after restart",
                    START_TIMEOUT,
                    () -> Readiness.httpOk(healthUrls.get("etcd")),
                    List.of(newEtcd));
            ManagedProcess newApi = respawn(api);
            Readiness.await(
                    "kube-apiserver /readyz after restart",
                    START_TIMEOUT,
                    () -> Readiness.httpOk(healthUrls.get("kube-apiserver")),
                    List.of(newEtcd, newApi));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot restart the API server and etcd", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while restarting the API server", e);
        }
        ClusterState.of(this).write(stateDir);
        return Duration.ofNanos(System.nanoTime() - t0);
    }

    private ManagedProcess process(String name) {
        return processes.stream()
                .filter(p -> p.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no " + name + " in this control plane"));
    }

    private ManagedProcess respawn(ManagedProcess old) throws IOException {
        ManagedProcess p = ManagedProcess.start(
                old.name(), commands.get(old.name()), logsDir.resolve(old.name() + ".log"), detachedProcesses);
        processes.set(processes.indexOf(old), p);
        return p;
    }

    /** Distinct free loopback ports (held open together while choosing, so they differ). */
    static int[] freePorts(int n) throws IOException {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            int[] ports = new int[n];
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                sockets.add(s);
                ports[i] = s.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket s : sockets) {
                s.close();
            }
        }
    }

    public LocalCluster cluster() {
        return cluster;
    }

    public Path stateDir() {
        return stateDir;
    }

    Path etcdData() {
        return etcdData;
    }

    /** Wall time of {@link #start}, binaries check included. */
    public Duration startupTime() {
        return startupTime;
    }

    /** The processes this plane started, in start order. */
    public List<ManagedProcess> processes() {
        return List.copyOf(processes);
    }

    /** Stops every process by PID (controllers and API server first, etcd last) and removes the etcd data. */
    public synchronized void stop() {
        stopProcesses(processes);
        if (shutdownHook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException alreadyShuttingDown) {
                // the hook itself is running us
            }
            shutdownHook = null;
        }
        StateDirs.deleteTree(etcdData);
        if (!keepState) {
            StateDirs.deleteTree(stateDir);
        }
    }

    @Override
    public void close() {
        stop();
    }

    private void stopQuietly() {
        try {
            stop();
        } catch (RuntimeException e) {
            System.err.println("[tensorlane] stopping the local control plane: " + e);
        }
    }

    /** SIGTERM to everything but etcd, wait up to 3 s, SIGKILL what is left; then etcd the same way. */
    static void stopProcesses(List<ManagedProcess> procs) {
        List<ManagedProcess> first =
                procs.stream().filter(p -> !p.name().equals("etcd")).toList();
        List<ManagedProcess> last =
                procs.stream().filter(p -> p.name().equals("etcd")).toList();
        for (List<ManagedProcess> group : List.of(first, last)) {
            group.forEach(ManagedProcess::terminate);
            group.forEach(p -> p.awaitOrKill(3_000));
        }
    }
}
