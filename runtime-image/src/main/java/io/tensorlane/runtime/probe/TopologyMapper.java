package io.tensorlane.runtime.probe;

import io.tensorlane.api.v1alpha1.GpuInfo;
import io.tensorlane.api.v1alpha1.GpuLink;
import io.tensorlane.api.v1alpha1.GpuLink.LinkType;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.topology.TopologyClassifier;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Pure mapping from the driver's raw answers to a {@link GpuTopologyStatus} (summary by the shared classifier).
 *
 * <ul>
 *   <li>Path type: NV when the pair has direct active NVLinks, or both GPUs have active links to NVSwitches and NVML
 *       reports NVLink P2P; otherwise from the common ancestor (0/10 PIX, 20 PXB, 30 PHB, 40 NODE, 50 SYS).</li>
 *   <li>nvlinks: the direct links between the pair; over NVSwitch the smaller of the two GPUs' switch links (what
 *       {@code nvidia-smi topo -m} shows as NV18 on HGX H100/H200); 0 over PCIe.</li>
 *   <li>P2P read/write/atomics: NVML's status is OK <em>and</em> CUDA does not deny it in either direction. A
 *       disagreement is kept conservative (false) and named in {@link Result#notes()}.</li>
 *   <li>Compute capability from CUDA (matched by PCI location, since CUDA's default order is not NVML's), else NVML.</li>
 * </ul>
 */
public final class TopologyMapper {
    private TopologyMapper() {}

    /** The status and what a person should know about how it was derived (disagreements, unknowns). */
    public record Result(GpuTopologyStatus status, List<String> notes) {}

    public static Result map(RawTopology raw, String probeVersion, String probeTime) {
        List<String> notes = new ArrayList<>();
        GpuTopologyStatus s = new GpuTopologyStatus();
        s.source = GpuTopologyStatus.Source.probe;
        s.driverVersion = raw.driverVersion();
        s.probeVersion = probeVersion;
        s.probeTime = probeTime;
        Map<Integer, RawTopology.CudaDevice> cudaByNvml = matchCuda(raw, notes);
        Map<Integer, RawTopology.Gpu> byIndex = new HashMap<>();
        for (RawTopology.Gpu g : raw.gpus()) {
            byIndex.put(g.index(), g);
            GpuInfo info = new GpuInfo();
            info.index = g.index();
            info.uuid = g.uuid();
            info.product = g.name();
            info.memoryBytes = g.memoryBytes();
            info.pciBusId = g.pciBusId();
            info.numaNode = g.numaNode();
            RawTopology.CudaDevice c = cudaByNvml.get(g.index());
            info.computeCapability = c != null ? c.ccMajor() + "." + c.ccMinor() : g.nvmlComputeCapability();
            s.gpus.add(info);
        }
        for (RawTopology.Pair p : raw.pairs()) {
            s.links.add(link(p, byIndex.get(p.a()), byIndex.get(p.b()), cudaByNvml, raw.cudaPairs(), notes));
        }
        notes.addAll(TopologyClassifier.problems(s));
        return new Result(TopologyClassifier.withSummary(s), notes);
    }

    static GpuLink link(
            RawTopology.Pair p,
            RawTopology.Gpu a,
            RawTopology.Gpu b,
            Map<Integer, RawTopology.CudaDevice> cudaByNvml,
            List<RawTopology.CudaPair> cudaPairs,
            List<String> notes) {
        GpuLink l = new GpuLink();
        l.a = Math.min(p.a(), p.b());
        l.b = Math.max(p.a(), p.b());
        int direct = a == null || b == null ? 0 : Math.max(directLinks(a, b.pciBusId()), directLinks(b, a.pciBusId()));
        int viaSwitch = a == null || b == null ? 0 : Math.min(switchLinks(a), switchLinks(b));
        boolean nvlinkP2p = Integer.valueOf(Nvml.P2P_STATUS_OK).equals(p.nvlink());
        if (direct > 0) {
            l.type = LinkType.NV;
            l.nvlinks = direct;
        } else if (viaSwitch > 0 && nvlinkP2p) {
            l.type = LinkType.NV;
            l.nvlinks = viaSwitch;
        } else if (nvlinkP2p) {
            l.type = LinkType.NV;
            notes.add("pair " + l.a + "-" + l.b
                    + ": NVML reports NVLink P2P but no active link was found; link count unknown");
        } else {
            l.type = pcieLevel(p.ancestorLevel());
            l.nvlinks = 0;
            if (l.type == null) {
                notes.add("pair " + l.a + "-" + l.b + ": common ancestor unknown (" + p.ancestorLevel() + ")");
            }
        }
        Optional<Boolean> cudaAccess = cudaBoth(l.a, l.b, cudaByNvml, cudaPairs, true);
        Optional<Boolean> cudaAtomics = cudaBoth(l.a, l.b, cudaByNvml, cudaPairs, false);
        l.p2pRead = agree("read", l, p.read(), cudaAccess, notes);
        l.p2pWrite = agree("write", l, p.write(), cudaAccess, notes);
        l.p2pAtomics = agree("atomics", l, p.atomics(), cudaAtomics, notes);
        return l;
    }

    /** NVML's verdict, unless CUDA denies what NVML allows; null when neither answered. */
    private static Boolean agree(String what, GpuLink l, Integer nvml, Optional<Boolean> cuda, List<String> notes) {
        Boolean n = nvml == null ? null : nvml == Nvml.P2P_STATUS_OK;
        if (n == null) {
            return cuda.orElse(null);
        }
        if (n && cuda.isPresent() && !cuda.get()) {
            notes.add("pair " + l.a + "-" + l.b + ": NVML reports P2P " + what
                    + " but CUDA denies it; reported as false");
            return false;
        }
        if (!n && cuda.orElse(false)) {
            notes.add("pair " + l.a + "-" + l.b + ": CUDA allows P2P " + what + " but NVML status is " + nvml
                    + "; reported as false");
        }
        return n;
    }

    /** CUDA's answer for both directions (AND), empty when CUDA did not see both GPUs. */
    private static Optional<Boolean> cudaBoth(
            int a,
            int b,
            Map<Integer, RawTopology.CudaDevice> cudaByNvml,
            List<RawTopology.CudaPair> cudaPairs,
            boolean access) {
        RawTopology.CudaDevice ca = cudaByNvml.get(a);
        RawTopology.CudaDevice cb = cudaByNvml.get(b);
        if (ca == null || cb == null) {
            return Optional.empty();
        }
        Boolean result = null;
        for (RawTopology.CudaPair cp : cudaPairs) {
            boolean forward = cp.src() == ca.ordinal() && cp.dst() == cb.ordinal();
            boolean backward = cp.src() == cb.ordinal() && cp.dst() == ca.ordinal();
            if (forward || backward) {
                boolean v = access ? cp.accessSupported() : cp.nativeAtomics();
                result = result == null ? v : result && v;
            }
        }
        return Optional.ofNullable(result);
    }

    private static int directLinks(RawTopology.Gpu from, String toBusId) {
        String to = normalize(toBusId);
        return (int) from.activeNvLinks().stream()
                .filter(e -> to != null && to.equals(normalize(e.remotePciBusId())))
                .count();
    }

    private static int switchLinks(RawTopology.Gpu g) {
        return (int) g.activeNvLinks().stream()
                .filter(e -> e.remoteType() != null && e.remoteType() == Nvml.NVLINK_DEVICE_TYPE_SWITCH)
                .count();
    }

    static LinkType pcieLevel(Integer level) {
        if (level == null) {
            return null;
        }
        return switch (level) {
            case 0, 10 -> LinkType.PIX;
            case 20 -> LinkType.PXB;
            case 30 -> LinkType.PHB;
            case 40 -> LinkType.NODE;
            case 50 -> LinkType.SYS;
            default -> null;
        };
    }

    /** NVML index -> CUDA ordinal, for the GPUs CUDA sees (matched by PCI location). */
    public static Map<Integer, Integer> cudaOrdinals(RawTopology raw) {
        Map<Integer, Integer> out = new HashMap<>();
        matchCuda(raw, new ArrayList<>()).forEach((index, device) -> out.put(index, device.ordinal()));
        return out;
    }

    private static Map<Integer, RawTopology.CudaDevice> matchCuda(RawTopology raw, List<String> notes) {
        Map<Integer, RawTopology.CudaDevice> out = new HashMap<>();
        for (RawTopology.Gpu g : raw.gpus()) {
            int[] loc = parseBusId(g.pciBusId());
            for (RawTopology.CudaDevice c : raw.cudaDevices()) {
                if (loc != null && loc[0] == c.pciDomain() && loc[1] == c.pciBus() && loc[2] == c.pciDevice()) {
                    out.put(g.index(), c);
                }
            }
        }
        if (!raw.cudaDevices().isEmpty() && out.size() < raw.gpus().size()) {
            notes.add("CUDA sees " + raw.cudaDevices().size() + " device(s), " + out.size() + " of "
                    + raw.gpus().size() + " NVML GPU(s) matched by PCI location; the others are not cross-checked");
        }
        return out;
    }

    /** "00000000:18:00.0" -> {domain, bus, device}; null when not in that form. */
    static int[] parseBusId(String busId) {
        if (busId == null) {
            return null;
        }
        String[] parts = busId.strip().split("[:.]");
        if (parts.length != 4) {
            return null;
        }
        try {
            return new int[] {
                Integer.parseUnsignedInt(parts[0], 16), Integer.parseInt(parts[1], 16), Integer.parseInt(parts[2], 16)
            };
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static String normalize(String busId) {
        int[] loc = parseBusId(busId);
        return loc == null ? null : String.format(Locale.ROOT, "%x:%x:%x", loc[0], loc[1], loc[2]);
    }
}
