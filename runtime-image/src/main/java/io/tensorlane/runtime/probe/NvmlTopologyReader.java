package io.tensorlane.runtime.probe;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads GPUs, the pair matrix and the driver version through {@link Nvml}. NOT_SUPPORTED and functions the driver
 * lacks are "unknown" (null), never errors; only a failed init or zero GPUs stops the probe.
 */
public final class NvmlTopologyReader {
    private final Nvml nvml;

    public NvmlTopologyReader(Nvml nvml) {
        this.nvml = nvml;
    }

    /** Loads NVML from the driver, or fails with the one-line reason. */
    public static NvmlTopologyReader fromDriver() {
        try {
            return new NvmlTopologyReader(Nvml.load());
        } catch (UnsatisfiedLinkError e) {
            throw new ProbeException(
                    ProbeException.Kind.NO_GPU,
                    "NVML (libnvidia-ml.so.1) not found: no NVIDIA driver on this "
                            + "machine, or its library folder is not on LD_LIBRARY_PATH");
        }
    }

    /** NVML's answers; the CUDA lists are left empty. */
    public RawTopology read() {
        int rc = nvml.nvmlInit_v2();
        if (rc != Nvml.SUCCESS) {
            throw new ProbeException(ProbeException.Kind.NO_GPU, "NVML init failed: " + error(rc));
        }
        try {
            IntByReference count = new IntByReference();
            rc = nvml.nvmlDeviceGetCount_v2(count);
            if (rc != Nvml.SUCCESS) {
                throw new ProbeException(ProbeException.Kind.NO_GPU, "NVML cannot count GPUs: " + error(rc));
            }
            if (count.getValue() == 0) {
                throw new ProbeException(ProbeException.Kind.NO_GPU, "NVML sees no GPU on this machine");
            }
            List<Pointer> handles = new ArrayList<>();
            List<RawTopology.Gpu> gpus = new ArrayList<>();
            for (int i = 0; i < count.getValue(); i++) {
                PointerByReference h = new PointerByReference();
                rc = nvml.nvmlDeviceGetHandleByIndex_v2(i, h);
                if (rc != Nvml.SUCCESS) {
                    throw new ProbeException(
                            ProbeException.Kind.NO_GPU, "NVML cannot open GPU " + i + ": " + error(rc));
                }
                handles.add(h.getValue());
                gpus.add(gpu(i, h.getValue()));
            }
            List<RawTopology.Pair> pairs = new ArrayList<>();
            for (int a = 0; a < handles.size(); a++) {
                for (int b = a + 1; b < handles.size(); b++) {
                    pairs.add(pair(a, b, handles.get(a), handles.get(b)));
                }
            }
            byte[] version = new byte[Nvml.STRING_BUFFER];
            String driver = nvml.nvmlSystemGetDriverVersion(version, version.length) == Nvml.SUCCESS
                    ? cString(version, 0)
                    : null;
            return new RawTopology(driver, gpus, pairs, List.of(), List.of());
        } finally {
            nvml.nvmlShutdown();
        }
    }

    private RawTopology.Gpu gpu(int index, Pointer d) {
        byte[] buf = new byte[Nvml.STRING_BUFFER];
        String name = nvml.nvmlDeviceGetName(d, buf, buf.length) == Nvml.SUCCESS ? cString(buf, 0) : null;
        buf = new byte[Nvml.STRING_BUFFER];
        String uuid = nvml.nvmlDeviceGetUUID(d, buf, buf.length) == Nvml.SUCCESS ? cString(buf, 0) : null;
        long[] mem = new long[3];
        Long total = nvml.nvmlDeviceGetMemoryInfo(d, mem) == Nvml.SUCCESS ? mem[0] : null;
        byte[] pci = new byte[Nvml.PCI_INFO_BYTES];
        String busId =
                nvml.nvmlDeviceGetPciInfo_v3(d, pci) == Nvml.SUCCESS ? cString(pci, Nvml.PCI_INFO_BUS_ID_OFFSET) : null;
        IntByReference numa = new IntByReference();
        Integer numaNode = optional(() -> nvml.nvmlDeviceGetNumaNodeId(d, numa)) ? numa.getValue() : null;
        IntByReference major = new IntByReference();
        IntByReference minor = new IntByReference();
        String cc = optional(() -> nvml.nvmlDeviceGetCudaComputeCapability(d, major, minor))
                ? major.getValue() + "." + minor.getValue()
                : null;
        return new RawTopology.Gpu(index, name, uuid, total, busId, numaNode, cc, nvLinks(d));
    }

    private List<RawTopology.NvLinkEnd> nvLinks(Pointer d) {
        List<RawTopology.NvLinkEnd> ends = new ArrayList<>();
        for (int i = 0; i < Nvml.NVLINK_MAX_LINKS; i++) {
            final int link = i;
            IntByReference active = new IntByReference();
            int rc = call(() -> nvml.nvmlDeviceGetNvLinkState(d, link, active));
            if (rc != Nvml.SUCCESS) {
                if (rc == Nvml.ERROR_NOT_SUPPORTED || rc == Nvml.ERROR_INVALID_ARGUMENT) {
                    break; // no NVLink on this GPU, or past this GPU's last link
                }
                continue;
            }
            if (active.getValue() == 0) {
                continue;
            }
            byte[] pci = new byte[Nvml.PCI_INFO_BYTES];
            String remote = call(() -> nvml.nvmlDeviceGetNvLinkRemotePciInfo_v2(d, link, pci)) == Nvml.SUCCESS
                    ? cString(pci, Nvml.PCI_INFO_BUS_ID_OFFSET)
                    : null;
            IntByReference type = new IntByReference();
            Integer remoteType =
                    optional(() -> nvml.nvmlDeviceGetNvLinkRemoteDeviceType(d, link, type)) ? type.getValue() : null;
            ends.add(new RawTopology.NvLinkEnd(remote, remoteType));
        }
        return ends;
    }

    private RawTopology.Pair pair(int a, int b, Pointer da, Pointer db) {
        IntByReference level = new IntByReference();
        Integer ancestor =
                optional(() -> nvml.nvmlDeviceGetTopologyCommonAncestor(da, db, level)) ? level.getValue() : null;
        return new RawTopology.Pair(
                a,
                b,
                ancestor,
                p2p(da, db, Nvml.P2P_CAPS_READ),
                p2p(da, db, Nvml.P2P_CAPS_WRITE),
                p2p(da, db, Nvml.P2P_CAPS_ATOMICS),
                p2p(da, db, Nvml.P2P_CAPS_NVLINK));
    }

    private Integer p2p(Pointer da, Pointer db, int caps) {
        IntByReference status = new IntByReference();
        return optional(() -> nvml.nvmlDeviceGetP2PStatus(da, db, caps, status)) ? status.getValue() : null;
    }

    /** True on SUCCESS; NOT_SUPPORTED, other errors and a function the driver lacks all mean "unknown". */
    private static boolean optional(NvmlCall c) {
        return call(c) == Nvml.SUCCESS;
    }

    private static int call(NvmlCall c) {
        try {
            return c.invoke();
        } catch (UnsatisfiedLinkError e) {
            return Nvml.ERROR_NOT_SUPPORTED; // older driver without this function
        }
    }

    private String error(int rc) {
        String text;
        try {
            text = nvml.nvmlErrorString(rc);
        } catch (RuntimeException | UnsatisfiedLinkError e) {
            text = null;
        }
        return (text == null ? "error" : text) + " (nvmlReturn " + rc + ")";
    }

    static String cString(byte[] buf, int offset) {
        int end = offset;
        while (end < buf.length && buf[end] != 0) {
            end++;
        }
        return new String(buf, offset, end - offset, StandardCharsets.US_ASCII).strip();
    }

    @FunctionalInterface
    private interface NvmlCall {
        int invoke();
    }
}
