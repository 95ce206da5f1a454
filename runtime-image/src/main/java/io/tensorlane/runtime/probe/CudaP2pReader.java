package io.tensorlane.runtime.probe;

import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuDeviceGetCount;
import static jcuda.driver.JCudaDriver.cuDeviceGetP2PAttribute;
import static jcuda.driver.JCudaDriver.cuInit;

import java.util.ArrayList;
import java.util.List;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_P2PAttribute;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUresult;

/**
 * CUDA's view (driver API through JCuda): each device's PCI location and compute capability, and for every ordered
 * pair the P2P attributes access-supported, native-atomics and performance rank. Used to cross-check NVML.
 */
public final class CudaP2pReader {
    private CudaP2pReader() {}

    /** CUDA's answers, or a one-line reason why CUDA could not be asked. */
    public record Answer(List<RawTopology.CudaDevice> devices, List<RawTopology.CudaPair> pairs, String unavailable) {}

    public static Answer read() {
        try {
            int rc = cuInit(0);
            if (rc != CUresult.CUDA_SUCCESS) {
                return unavailable("cuInit failed: " + CUresult.stringFor(rc));
            }
            int[] n = new int[1];
            rc = cuDeviceGetCount(n);
            if (rc != CUresult.CUDA_SUCCESS) {
                return unavailable("cuDeviceGetCount failed: " + CUresult.stringFor(rc));
            }
            List<CUdevice> handles = new ArrayList<>();
            List<RawTopology.CudaDevice> devices = new ArrayList<>();
            for (int i = 0; i < n[0]; i++) {
                CUdevice d = new CUdevice();
                cuDeviceGet(d, i);
                handles.add(d);
                devices.add(new RawTopology.CudaDevice(
                        i,
                        attr(d, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
                        attr(d, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
                        attr(d, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID),
                        attr(d, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                        attr(d, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)));
            }
            List<RawTopology.CudaPair> pairs = new ArrayList<>();
            for (int s = 0; s < n[0]; s++) {
                for (int d = 0; d < n[0]; d++) {
                    if (s != d) {
                        pairs.add(new RawTopology.CudaPair(
                                s,
                                d,
                                p2p(
                                                handles.get(s),
                                                handles.get(d),
                                                CUdevice_P2PAttribute.CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED)
                                        == 1,
                                p2p(
                                                handles.get(s),
                                                handles.get(d),
                                                CUdevice_P2PAttribute.CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED)
                                        == 1,
                                p2p(
                                        handles.get(s),
                                        handles.get(d),
                                        CUdevice_P2PAttribute.CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK)));
                    }
                }
            }
            return new Answer(devices, pairs, null);
        } catch (LinkageError | RuntimeException e) {
            return unavailable(
                    "CUDA driver library not usable (" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")");
        }
    }

    private static Answer unavailable(String why) {
        return new Answer(List.of(), List.of(), why);
    }

    private static int attr(CUdevice d, int attribute) {
        int[] v = new int[1];
        return cuDeviceGetAttribute(v, attribute, d) == CUresult.CUDA_SUCCESS ? v[0] : -1;
    }

    private static int p2p(CUdevice src, CUdevice dst, int attribute) {
        int[] v = new int[1];
        return cuDeviceGetP2PAttribute(v, attribute, src, dst) == CUresult.CUDA_SUCCESS ? v[0] : -1;
    }
}
