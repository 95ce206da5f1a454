package io.tensorlane.runtime.probe;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;
import java.util.OptionalInt;

/**
 * The part of NVML ({@code libnvidia-ml.so.1}, shipped with the driver) the probe uses (and {@link #gpuCount}, for
 * selftest and bench), mapped through JNA. Every call returns an {@code nvmlReturn_t}; {@link #SUCCESS} is 0. Structs
 * are passed as plain arrays: {@code nvmlMemory_t} is three {@code unsigned long long} (total, free, used),
 * {@code nvmlPciInfo_t} is {@link #PCI_INFO_BYTES} bytes with the NUL-terminated bus id at
 * {@link #PCI_INFO_BUS_ID_OFFSET}.
 */
public interface Nvml extends Library {
    int SUCCESS = 0;
    int ERROR_INVALID_ARGUMENT = 2;
    int ERROR_NOT_SUPPORTED = 3;
    int ERROR_LIBRARY_NOT_FOUND = 12;
    int ERROR_DRIVER_NOT_LOADED = 9;

    /** nvmlGpuP2PCapsIndex_t. */
    int P2P_CAPS_READ = 0;

    int P2P_CAPS_WRITE = 1;
    int P2P_CAPS_NVLINK = 2;
    int P2P_CAPS_ATOMICS = 3;
    /** nvmlGpuP2PStatus_t: only OK means capable. */
    int P2P_STATUS_OK = 0;

    /** nvmlIntNvLinkDeviceType_t. */
    int NVLINK_DEVICE_TYPE_GPU = 0;

    int NVLINK_DEVICE_TYPE_SWITCH = 2;
    /** NVML_NVLINK_MAX_LINKS of current drivers; older drivers answer INVALID_ARGUMENT past their maximum. */
    int NVLINK_MAX_LINKS = 18;

    /** sizeof(nvmlPciInfo_t): busIdLegacy[16], five unsigned ints, busId[32]. */
    int PCI_INFO_BYTES = 16 + 5 * 4 + 32;

    int PCI_INFO_BUS_ID_OFFSET = 36;
    int STRING_BUFFER = 96;

    /**
     * Loads the driver's NVML: by name (JNA also finds versioned files on LD_LIBRARY_PATH), else the soname the NVIDIA
     * container toolkit mounts ({@code libnvidia-ml.so.1}, through the loader cache); throws {@link UnsatisfiedLinkError}
     * when neither is there.
     */
    static Nvml load() {
        try {
            return Native.load("nvidia-ml", Nvml.class);
        } catch (UnsatisfiedLinkError e) {
            return Native.load("libnvidia-ml.so.1", Nvml.class);
        }
    }

    /**
     * The machine's GPUs as NVML counts them (all of them: CUDA_VISIBLE_DEVICES does not apply), without starting the
     * CUDA driver; empty without NVML or when it cannot count.
     */
    static OptionalInt gpuCount() {
        Nvml nvml;
        try {
            nvml = load();
        } catch (UnsatisfiedLinkError e) {
            return OptionalInt.empty();
        }
        if (nvml.nvmlInit_v2() != SUCCESS) {
            return OptionalInt.empty();
        }
        try {
            IntByReference count = new IntByReference();
            return nvml.nvmlDeviceGetCount_v2(count) == SUCCESS
                    ? OptionalInt.of(count.getValue())
                    : OptionalInt.empty();
        } finally {
            nvml.nvmlShutdown();
        }
    }

    int nvmlInit_v2();

    int nvmlShutdown();

    String nvmlErrorString(int result);

    int nvmlSystemGetDriverVersion(byte[] version, int length);

    int nvmlDeviceGetCount_v2(IntByReference count);

    int nvmlDeviceGetHandleByIndex_v2(int index, PointerByReference device);

    int nvmlDeviceGetName(Pointer device, byte[] name, int length);

    int nvmlDeviceGetUUID(Pointer device, byte[] uuid, int length);

    int nvmlDeviceGetMemoryInfo(Pointer device, long[] totalFreeUsed);

    int nvmlDeviceGetPciInfo_v3(Pointer device, byte[] pciInfo);

    int nvmlDeviceGetNumaNodeId(Pointer device, IntByReference node);

    int nvmlDeviceGetCudaComputeCapability(Pointer device, IntByReference major, IntByReference minor);

    int nvmlDeviceGetTopologyCommonAncestor(Pointer device1, Pointer device2, IntByReference level);

    int nvmlDeviceGetP2PStatus(Pointer device1, Pointer device2, int capsIndex, IntByReference status);

    int nvmlDeviceGetNvLinkState(Pointer device, int link, IntByReference isActive);

    int nvmlDeviceGetNvLinkRemotePciInfo_v2(Pointer device, int link, byte[] pciInfo);

    int nvmlDeviceGetNvLinkRemoteDeviceType(Pointer device, int link, IntByReference type);
}
