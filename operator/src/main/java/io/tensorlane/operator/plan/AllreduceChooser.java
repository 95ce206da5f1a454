package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.AllreduceDecision.AlgorithmRange;
import io.tensorlane.api.v1alpha1.AllreduceSpec;
import io.tensorlane.api.v1alpha1.AllreduceSpec.AllreduceMode;
import io.tensorlane.api.v1alpha1.GpuLink;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.Measurement;
import io.tensorlane.api.v1alpha1.TopologySummary;
import io.tensorlane.api.v1alpha1.TopologySummary.Interconnect;
import io.tensorlane.api.v1alpha1.TopologySummary.P2p;
import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.AlgorithmTable;
import io.tensorlane.contract.Allreduce;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** Chooses the allreduce for a node class: None, NCCL or the custom kernels with a size table. */
public final class AllreduceChooser {
    private AllreduceChooser() {}

    /**
     * Why the custom allreduce may not run on this node, or null when it may.
     *
     * @param forced allreduce.mode Custom: a heuristic topology is accepted (the user asked), anything else is not
     */
    public static String customBlocker(NodeInfo node, PlannerSettings settings, boolean forced) {
        GpuTopologyStatus t = node.topology();
        TopologySummary s = t == null ? null : t.summary;
        if (s == null) {
            return "no GpuTopology";
        }
        if (s.interconnect != Interconnect.NVLink && s.interconnect != Interconnect.PCIe) {
            return "interconnect " + s.interconnect;
        }
        if (s.p2p != P2p.Full) {
            return "P2P " + s.p2p;
        }
        if (forced && node.topologyStale()) {
            // a stale topology is not trusted to force the custom allreduce; in Auto it keeps its last-seen choice, so
            // a
            // late probe does not roll a running deployment over to NCCL (the Planner adds a warning)
            return "topology stale (forcing the custom allreduce needs a fresh probe)";
        }
        Measurement m = recentMeasurement(t, settings);
        if (m != null && m.failure != null && !m.failure.isBlank()) {
            return "preflight failed: " + m.failure;
        }
        if (!forced && t.source == GpuTopologyStatus.Source.heuristic) {
            return "topology is a heuristic from GPU Feature Discovery labels (no probe)";
        }
        return null;
    }

    /**
     * The choice for {@code tensor} GPUs on nodes like {@code representative}.
     *
     * @param customBlocker why some node of the class cannot run the custom allreduce ("node: reason"), or null
     */
    public static AllreduceChoice choose(
            AllreduceSpec spec,
            int tensor,
            GpuTopologyStatus representative,
            String customBlocker,
            PlannerSettings settings) {
        if (tensor <= 1) {
            return new AllreduceChoice(
                    Allreduce.None, List.of(), 0, "tensor parallelism 1: no allreduce", List.of(), false);
        }
        String desc = describe(representative);
        List<AllreduceChoice.NcclEnv> env = ncclEnv(representative);
        String envNote = env.isEmpty()
                ? ""
                : "; NCCL env "
                        + String.join(
                                ", ",
                                env.stream()
                                        .map(e -> e.name() + "=" + e.value())
                                        .toList());
        AllreduceMode mode = spec.mode == null ? AllreduceMode.Auto : spec.mode;
        if (mode == AllreduceMode.NCCL) {
            return nccl(desc + " → NCCL (allreduce.mode NCCL)" + envNote, env);
        }
        if (customBlocker != null && mode == AllreduceMode.Auto) {
            // P2P and interconnect are the same on every node of a class and already in desc
            // (matched exactly: a preflight failure such as "n1: preflight failed: P2P read-back wrong" keeps its
            // reason)
            boolean classWide = customBlocker.matches("[^:]*: (P2P|interconnect) [A-Za-z]+");
            String why = classWide ? "the custom allreduce needs full P2P" : customBlocker;
            return nccl(desc + " → NCCL: " + why + envNote, env);
        }
        long max = spec.maxMessageBytes == null ? 8 * Units.MiB : spec.maxMessageBytes;
        Measurement m = recentMeasurement(representative, settings);
        boolean measured = spec.algorithm == null || spec.algorithm == AllreduceSpec.AllreduceAlgorithm.Auto;
        measured &=
                m != null && m.failure == null && Objects.equals(m.worldSize, tensor) && !m.algorithmTable.isEmpty();
        AlgorithmTable rows;
        String origin;
        if (spec.algorithm != null && spec.algorithm != AllreduceSpec.AllreduceAlgorithm.Auto) {
            rows = AlgorithmTable.single(tensor, Algorithm.parse(spec.algorithm.name()), max);
            origin = " (allreduce.algorithm " + spec.algorithm + ")";
        } else if (measured) {
            rows = AllreduceTables.fromMeasurement(tensor, m.algorithmTable);
            origin = " (measured by the preflight" + (m.time == null ? "" : " at " + m.time) + ")";
        } else {
            rows = AlgorithmTable.defaults(representative.summary.interconnect == Interconnect.NVLink, tensor, max);
            origin = "";
        }
        List<AlgorithmRange> table = AllreduceTables.toStatus(rows.clip(max));
        String forced = mode == AllreduceMode.Custom ? " (allreduce.mode Custom)" : "";
        String reason = desc + " → custom" + forced + ": " + AllreduceTables.describe(table) + origin + ", NCCL above "
                + Units.bytes(max) + envNote;
        return new AllreduceChoice(Allreduce.Custom, table, max, reason, env, measured);
    }

    private static AllreduceChoice nccl(String reason, List<AllreduceChoice.NcclEnv> env) {
        return new AllreduceChoice(Allreduce.NCCL, List.of(), 0, reason, env, false);
    }

    /** "PCIe, full P2P, 8 GPUs in 2 NUMA islands" / "NVLink, 8 GPUs" / "PCIe, P2P None, 4 GPUs". */
    static String describe(GpuTopologyStatus t) {
        TopologySummary s = t.summary;
        int gpus = s.gpuCount == null ? t.gpus.size() : s.gpuCount;
        StringBuilder sb = new StringBuilder().append(s.interconnect);
        if (s.interconnect != Interconnect.NVLink) {
            sb.append(s.p2p == P2p.Full ? ", full P2P" : ", P2P " + s.p2p);
        }
        sb.append(", ").append(gpus).append(" GPUs");
        int islands = s.islands == null ? 0 : s.islands.size();
        if (s.interconnect != Interconnect.NVLink && islands > 1) {
            long numa = t.gpus.stream()
                    .map(gpu -> gpu.numaNode)
                    .filter(Objects::nonNull)
                    .distinct()
                    .count();
            sb.append(" in ").append(islands).append(numa == islands ? " NUMA islands" : " islands");
        }
        if (t.source == GpuTopologyStatus.Source.heuristic) {
            sb.append(" (heuristic)");
        }
        return sb.toString();
    }

    /**
     * NCCL environment for a node whose GPUs talk over PCIe (README, "NCCL environment"):
     * <ul>
     *   <li>{@code NCCL_P2P_LEVEL=<worst path>} when P2P works between every pair but some pairs cross the CPU (PHB,
     *       NODE or SYS): NCCL's default stops using P2P at PXB on most CPUs and would stage those transfers through
     *       host memory although the probe found direct P2P working. The level is NCCL's name for the path ({@link
     *       NcclP2pLevel}: nvidia-smi's NODE is NCCL's PHB; NCCL ignores a name it does not know).</li>
     *   <li>{@code NCCL_PROTO=^LL128} when traffic crosses the CPU: LL128 relies on 128-byte stores arriving whole and
     *       in order, which a path through the CPU root complex does not guarantee; excluding it rules out silent
     *       corruption or hangs on platforms that misreport the path.</li>
     * </ul>
     */
    public static List<AllreduceChoice.NcclEnv> ncclEnv(GpuTopologyStatus t) {
        List<AllreduceChoice.NcclEnv> env = new ArrayList<>();
        TopologySummary s = t == null ? null : t.summary;
        if (s == null || s.interconnect == Interconnect.NVLink || s.interconnect == Interconnect.NotApplicable) {
            return env;
        }
        GpuLink.LinkType worst = null;
        for (GpuLink l : t.links) {
            if (l.type != null
                    && l.type != GpuLink.LinkType.NV
                    && (worst == null || l.type.ordinal() > worst.ordinal())) {
                worst = l.type;
            }
        }
        if (worst == null && s.islands != null && s.islands.size() > 1) {
            worst = GpuLink.LinkType.SYS;
        }
        boolean crossesCpu = worst != null && worst.ordinal() >= GpuLink.LinkType.PHB.ordinal();
        if (crossesCpu && s.p2p == P2p.Full) {
            env.add(new AllreduceChoice.NcclEnv(
                    "NCCL_P2P_LEVEL",
                    NcclP2pLevel.of(worst),
                    "P2P works between every pair but some cross the CPU (" + worst
                            + "); NCCL's default stops P2P at PXB"));
        }
        if (crossesCpu) {
            env.add(new AllreduceChoice.NcclEnv(
                    "NCCL_PROTO",
                    "^LL128",
                    "traffic crosses the CPU (" + worst
                            + "); LL128 needs ordered 128-byte stores that path does not guarantee"));
        }
        return env;
    }

    /** The node's measurement when it is recent enough to trust (no time: trusted), else null. */
    static Measurement recentMeasurement(GpuTopologyStatus t, PlannerSettings settings) {
        Measurement m = t == null ? null : t.measurement;
        if (m == null || m.time == null || settings.measurementMaxAge() == null) {
            return m;
        }
        try {
            Instant at = Instant.parse(m.time);
            return Duration.between(at, settings.now()).compareTo(settings.measurementMaxAge()) > 0 ? null : m;
        } catch (DateTimeParseException e) {
            return null;
        }
    }
}
