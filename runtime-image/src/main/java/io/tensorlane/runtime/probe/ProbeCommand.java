package io.tensorlane.runtime.probe;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.runtime.common.ExitCodes;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code probe}: reads this node's GPU topology (NVML, cross-checked with CUDA), prints the GpuTopology status as JSON
 * on stdout, and with {@code --publish} server-side-applies {@code GpuTopology/<node>}. Exit codes ({@link ExitCodes}):
 * OK, USAGE for bad arguments, RUNTIME for no GPU / no NVML / a failed publish (one line on stderr, no stack trace).
 */
@Command(
        name = "probe",
        mixinStandardHelpOptions = true,
        versionProvider = ProbeCommand.Version.class,
        description =
                "Probe the GPU topology of this node (NVML + CUDA P2P attributes) and print the GpuTopology status "
                        + "as JSON; optionally publish it to the cluster.")
public class ProbeCommand implements Callable<Integer> {
    @Option(names = "--publish", description = "Write GpuTopology/<node> through the API server (server-side apply).")
    boolean publish;

    @Option(
            names = "--node",
            description = "Node name for --publish (default: environment variable NODE_NAME, set from "
                    + "the downward API spec.nodeName).")
    String node;

    @Option(
            names = "--measure",
            description = "Also verify every GPU pair with a real P2P write/read-back and time a "
                    + "P2P copy; the results go into each link (p2pVerified, bandwidthGBps; a pair that fails is reported "
                    + "p2pVerified=false), never into status.measurement, which is the operator's preflight's.")
    boolean measure;

    @Option(
            names = "--measure-bytes",
            defaultValue = "67108864",
            paramLabel = "BYTES",
            description = "Bytes per copy for --measure, 1 MiB to 1 GiB (default: ${DEFAULT-VALUE}).")
    long measureBytes;

    @Option(
            names = "--interval",
            paramLabel = "DURATION",
            converter = IntervalConverter.class,
            description = "With --publish: keep running and probe again every DURATION (e.g. 30s, 10m, 1h).")
    Duration interval;

    private static final KubernetesSerialization JSON =
            new KubernetesSerialization(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT), true);

    UnaryOperator<String> env = System::getenv;
    PrintStream out = System.out;
    PrintStream err = System.err;

    @Override
    public Integer call() throws InterruptedException {
        if (measureBytes < (1 << 20) || measureBytes > (1 << 30)) {
            err.println("probe: --measure-bytes must be between 1048576 and 1073741824, got " + measureBytes);
            return ExitCodes.USAGE;
        }
        if (interval != null && !publish) {
            err.println("probe: --interval only makes sense with --publish");
            return ExitCodes.USAGE;
        }
        String nodeName = node != null ? node : env.apply("NODE_NAME");
        if (publish && (nodeName == null || nodeName.isBlank())) {
            err.println(
                    "probe: --publish needs the node name: pass --node or set NODE_NAME (downward API spec.nodeName)");
            return ExitCodes.USAGE;
        }
        if (!publish) {
            return exitCode(once(null, nodeName));
        }
        KubernetesClient client;
        try {
            client = new KubernetesClientBuilder().build();
        } catch (KubernetesClientException e) {
            err.println("probe: cannot configure the Kubernetes client: " + Publisher.oneLine(e));
            return ExitCodes.RUNTIME;
        }
        try (client) {
            Publisher publisher = new Publisher(client);
            while (true) {
                ProbeException.Kind failure = once(publisher, nodeName);
                if (interval == null || failure == ProbeException.Kind.NO_GPU) {
                    return exitCode(failure);
                }
                Thread.sleep(interval.toMillis());
            }
        }
    }

    private static int exitCode(ProbeException.Kind failure) {
        return failure == null ? ExitCodes.OK : ExitCodes.RUNTIME;
    }

    /** One probe (and publish); null on success, else the failure, already reported as one line on stderr. */
    ProbeException.Kind once(Publisher publisher, String nodeName) {
        List<String> notes = new ArrayList<>();
        try {
            GpuTopologyStatus status = new TopologyProbe(version()).run(measure, measureBytes, notes);
            notes.forEach(n -> err.println("probe: " + n));
            out.println(JSON.asJson(status));
            if (publisher != null) {
                publisher.publish(nodeName, status);
                err.println("probe: published GpuTopology/" + nodeName + " (" + status.summary.gpuCount + " GPUs, "
                        + status.summary.interconnect + ", P2P " + status.summary.p2p + ")");
            }
            return null;
        } catch (ProbeException e) {
            notes.forEach(n -> err.println("probe: " + n));
            err.println("probe: " + e.getMessage());
            return e.kind();
        }
    }

    static String version() {
        String v = ProbeCommand.class.getPackage().getImplementationVersion();
        return "tensorlane-probe/" + (v != null ? v : "dev");
    }

    /** Prints {@link #version()} for --version. */
    static final class Version implements picocli.CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {version()};
        }
    }

    /** "30s", "10m", "1h" (or ISO-8601 like PT10M) -> Duration; at least one second. */
    static final class IntervalConverter implements ITypeConverter<Duration> {
        private static final Pattern SHORT = Pattern.compile("(\\d+)([smh])");

        @Override
        public Duration convert(String value) {
            Matcher m = SHORT.matcher(value.strip());
            Duration d;
            if (m.matches()) {
                long n = Long.parseLong(m.group(1));
                d = switch (m.group(2)) {
                    case "s" -> Duration.ofSeconds(n);
                    case "m" -> Duration.ofMinutes(n);
                    default -> Duration.ofHours(n);
                };
            } else {
                try {
                    d = Duration.parse(value.strip());
                } catch (RuntimeException e) {
                    throw new TypeConversionException("'" + value + "' is not a duration like 30s, 10m or 1h");
                }
            }
            if (d.getSeconds() < 1) {
                throw new TypeConversionException("interval must be at least 1s, got '" + value + "'");
            }
            return d;
        }
    }
}
