package io.tensorlane.runtime.probe;

import java.util.List;

/**
 * What the driver answered, before interpretation: NVML per GPU and per pair, plus CUDA's P2P attributes. Unknown
 * answers (NOT_SUPPORTED, missing function) are null. {@link TopologyMapper} turns this into a GpuTopologyStatus;
 * tests feed it recorded values.
 */
public record RawTopology(
        String driverVersion,
        List<Gpu> gpus,
        List<Pair> pairs,
        List<CudaDevice> cudaDevices,
        List<CudaPair> cudaPairs) {

    /** One GPU as NVML reports it (index = NVML index). */
    public record Gpu(
            int index,
            String name,
            String uuid,
            Long memoryBytes,
            String pciBusId,
            Integer numaNode,
            String nvmlComputeCapability,
            List<NvLinkEnd> activeNvLinks) {}

    /** The far end of one active NVLink: its PCI bus id and device type (Nvml.NVLINK_DEVICE_TYPE_*; null unknown). */
    public record NvLinkEnd(String remotePciBusId, Integer remoteType) {}

    /**
     * NVML's answers for a pair a < b: common ancestor level (nvmlGpuTopologyLevel_t: 0, 10, 20, 30, 40, 50) and
     * nvmlGpuP2PStatus_t for read, write, atomics, NVLink (0 = OK); null where NVML could not answer.
     */
    public record Pair(
            int a, int b, Integer ancestorLevel, Integer read, Integer write, Integer atomics, Integer nvlink) {}

    /** One CUDA device: its ordinal, PCI location and compute capability. */
    public record CudaDevice(int ordinal, int pciDomain, int pciBus, int pciDevice, int ccMajor, int ccMinor) {}

    /** CUDA's P2P attributes for the ordered pair src -> dst (ordinals). */
    public record CudaPair(int src, int dst, boolean accessSupported, boolean nativeAtomics, int performanceRank) {}
}
