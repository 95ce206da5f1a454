package io.tensorlane.runtime.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** NvmlTopologyReader against a recorded NVML: answers as the one-H200 VM and an NVLink box gave or would give them. */
class NvmlTopologyReaderTest {

    @Test
    void readsOneH200LikeTheDeviceVm() {
        RecordedNvml nvml = new RecordedNvml(1);
        RawTopology raw = new NvmlTopologyReader(nvml).read();
        assertThat(raw.driverVersion()).isEqualTo("580.159.04");
        assertThat(raw.gpus()).singleElement().satisfies(g -> {
            assertThat(g.name()).isEqualTo("NVIDIA H200");
            assertThat(g.uuid()).isEqualTo("GPU-0");
            assertThat(g.memoryBytes()).isEqualTo(150754820096L);
            assertThat(g.pciBusId()).isEqualTo("00000000:18:00.0");
            assertThat(g.numaNode()).as("NOT_SUPPORTED means unknown").isNull();
            assertThat(g.nvmlComputeCapability()).isEqualTo("9.0");
            assertThat(g.activeNvLinks()).isEmpty();
        });
        assertThat(raw.pairs()).isEmpty();
        assertThat(nvml.shutdowns).isEqualTo(1);
    }

    @Test
    void readsPairsAndActiveLinksAndSurvivesMissingFunctions() {
        RecordedNvml nvml = new RecordedNvml(2);
        nvml.activeLinks = 3;
        nvml.remoteTypeMissing = true; // an older driver without nvmlDeviceGetNvLinkRemoteDeviceType
        RawTopology raw = new NvmlTopologyReader(nvml).read();
        assertThat(raw.pairs()).containsExactly(new RawTopology.Pair(0, 1, 10, 0, 0, 5, 0));
        assertThat(raw.gpus().get(0).activeNvLinks())
                .containsExactly(
                        new RawTopology.NvLinkEnd("00000000:19:00.0", null),
                        new RawTopology.NvLinkEnd("00000000:19:00.0", null),
                        new RawTopology.NvLinkEnd("00000000:19:00.0", null));
        TopologyMapper.Result mapped = TopologyMapper.map(raw, "t", "t");
        assertThat(mapped.status().links.get(0).nvlinks).isEqualTo(3);
        assertThat(mapped.status().summary.interconnect.name()).isEqualTo("NVLink");
    }

    @Test
    void initFailureIsOneLine() {
        RecordedNvml nvml = new RecordedNvml(1);
        nvml.initResult = Nvml.ERROR_DRIVER_NOT_LOADED;
        assertThatThrownBy(() -> new NvmlTopologyReader(nvml).read())
                .isInstanceOf(ProbeException.class)
                .hasMessage("NVML init failed: Driver Not Loaded (nvmlReturn 9)")
                .extracting(e -> ((ProbeException) e).kind())
                .isEqualTo(ProbeException.Kind.NO_GPU);
    }

    @Test
    void noGpuIsOneLineAndShutsDown() {
        RecordedNvml nvml = new RecordedNvml(0);
        assertThatThrownBy(() -> new NvmlTopologyReader(nvml).read())
                .isInstanceOf(ProbeException.class)
                .hasMessage("NVML sees no GPU on this machine");
        assertThat(nvml.shutdowns).isEqualTo(1);
    }

    /** NVML as recorded: device i has bus 0x18 + i; P2P read/write/NVLink OK, atomics NOT_SUPPORTED; NUMA unsupported. */
    static final class RecordedNvml implements Nvml {
        final int count;
        int initResult = SUCCESS;
        int activeLinks;
        boolean remoteTypeMissing;
        int shutdowns;

        RecordedNvml(int count) {
            this.count = count;
        }

        static int dev(Pointer p) {
            return (int) Pointer.nativeValue(p) - 1;
        }

        static void put(byte[] buf, int offset, String s) {
            byte[] b = s.getBytes(StandardCharsets.US_ASCII);
            System.arraycopy(b, 0, buf, offset, b.length);
        }

        @Override
        public int nvmlInit_v2() {
            return initResult;
        }

        @Override
        public int nvmlShutdown() {
            shutdowns++;
            return SUCCESS;
        }

        @Override
        public String nvmlErrorString(int result) {
            return result == 9 ? "Driver Not Loaded" : "Unknown Error";
        }

        @Override
        public int nvmlSystemGetDriverVersion(byte[] v, int n) {
            put(v, 0, "580.159.04");
            return SUCCESS;
        }

        @Override
        public int nvmlDeviceGetCount_v2(IntByReference c) {
            c.setValue(count);
            return SUCCESS;
        }

        @Override
        public int nvmlDeviceGetHandleByIndex_v2(int index, PointerByReference device) {
            device.setValue(new Pointer(index + 1));
            return SUCCESS;
        }

        @Override
        public int nvmlDeviceGetName(Pointer d, byte[] b, int n) {
            put(b, 0, "NVIDIA H200");
            return SUCCESS;
        }

        @Override
        public int nvmlDeviceGetUUID(Pointer d, byte[] b, int n) {
            put(b, 0, "GPU-" + dev(d));
            return SUCCESS;
        }

        @Override
        public int nvmlDeviceGetMemoryInfo(Pointer d, long[] m) {
            m[0] = 150754820096L;
            m[1] = 150000000000L;
            m[2] = m[0] - m[1];
            return SUCCESS;
        }

        @Override
        public int nvmlDeviceGetPciInfo_v3(Pointer d, byte[] pci) {
            put(pci, 0, String.format("0000:%02X:00.0", 0x18 + dev(d)));
            put(pci, PCI_INFO_BUS_ID_OFFSET, String.format("00000000:%02X:00.0", 0x18 + dev(d)));
            return SUCCESS;
        }

        @Override
        public int nvmlDeviceGetNumaNodeId(Pointer d, IntByReference node) {
            return ERROR_NOT_SUPPORTED;
        }

        @Override
        public int nvmlDeviceGetCudaComputeCapability(Pointer d, IntByReference major, IntByReference minor) {
            major.setValue(9);
            minor.setValue(0);
            return SUCCESS;
        }

        @Override
        public int nvmlDeviceGetTopologyCommonAncestor(Pointer a, Pointer b, IntByReference level) {
            level.setValue(10);
            return SUCCESS;
        }

        @Override
        public int nvmlDeviceGetP2PStatus(Pointer a, Pointer b, int caps, IntByReference status) {
            status.setValue(caps == P2P_CAPS_ATOMICS ? 5 : P2P_STATUS_OK);
            return SUCCESS;
        }

        @Override
        public int nvmlDeviceGetNvLinkState(Pointer d, int link, IntByReference isActive) {
            if (activeLinks == 0) {
                return ERROR_NOT_SUPPORTED;
            }
            isActive.setValue(link < activeLinks ? 1 : 0);
            return SUCCESS;
        }

        @Override
        public int nvmlDeviceGetNvLinkRemotePciInfo_v2(Pointer d, int link, byte[] pci) {
            put(pci, PCI_INFO_BUS_ID_OFFSET, String.format("00000000:%02X:00.0", 0x18 + (1 - dev(d))));
            return SUCCESS;
        }

        @Override
        public int nvmlDeviceGetNvLinkRemoteDeviceType(Pointer d, int link, IntByReference type) {
            if (remoteTypeMissing) {
                throw new UnsatisfiedLinkError("Error looking up function 'nvmlDeviceGetNvLinkRemoteDeviceType'");
            }
            type.setValue(NVLINK_DEVICE_TYPE_GPU);
            return SUCCESS;
        }
    }
}
