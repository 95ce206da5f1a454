package io.tensorlane.runtime.nccl;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.CommunicatorConfig;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.engine.Rank;
import java.util.List;
import jcuda.NativePointerObject;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;

/**
 * NCCL communicators for the GPUs of this process (ncclCommInitAll): the baseline and the fallback. NCCL refuses
 * two ranks on one GPU, so virtual ranks cannot use it. Each rank calls {@link #allReduce} from its own thread
 * (the one with that device's context current), or one thread calls {@link #allReduceAll} inside a group.
 */
public final class NcclComm implements Rank.Fallback, AutoCloseable {
    private final Nccl nccl;
    private final Pointer[] comms;
    private final List<Integer> devices;

    public NcclComm(Nccl nccl, List<Integer> devices) {
        if (CommunicatorConfig.sharesAGpu(devices)) {
            throw new IllegalArgumentException(
                    "NCCL needs distinct GPUs per rank, got " + devices + " (virtual ranks are custom-kernel only)");
        }
        this.nccl = nccl;
        this.devices = List.copyOf(devices);
        Memory handles = new Memory(8L * devices.size());
        nccl.check(
                nccl.lib()
                        .ncclCommInitAll(
                                handles,
                                devices.size(),
                                devices.stream().mapToInt(Integer::intValue).toArray()),
                "ncclCommInitAll");
        comms = new Pointer[devices.size()];
        for (int i = 0; i < comms.length; i++) {
            comms[i] = handles.getPointer(8L * i);
        }
    }

    public int worldSize() {
        return comms.length;
    }

    public List<Integer> devices() {
        return devices;
    }

    public static int ncclType(DType d) {
        return switch (d) {
            case fp32 -> NcclLibrary.ncclFloat32;
            case fp16 -> NcclLibrary.ncclFloat16;
            case bf16 -> NcclLibrary.ncclBfloat16;
        };
    }

    private static Pointer ptr(NativePointerObject p) {
        return new Pointer(Cuda.address(p));
    }

    @Override
    public void allReduce(int rank, CUdeviceptr input, CUdeviceptr output, long count, DType dtype, CUstream stream) {
        nccl.check(
                nccl.lib()
                        .ncclAllReduce(
                                ptr(input),
                                ptr(output),
                                count,
                                ncclType(dtype),
                                NcclLibrary.ncclSum,
                                comms[rank],
                                ptr(stream)),
                "ncclAllReduce(rank " + rank + ")");
    }

    /** All ranks from one thread, in one NCCL group. */
    public void allReduceAll(
            List<CUdeviceptr> inputs, List<CUdeviceptr> outputs, long count, DType dtype, List<CUstream> streams) {
        nccl.check(nccl.lib().ncclGroupStart(), "ncclGroupStart");
        try {
            for (int r = 0; r < comms.length; r++) {
                allReduce(r, inputs.get(r), outputs.get(r), count, dtype, streams.get(r));
            }
        } finally {
            nccl.check(nccl.lib().ncclGroupEnd(), "ncclGroupEnd");
        }
    }

    @Override
    public void close() {
        for (Pointer c : comms) {
            if (c != null) {
                nccl.lib().ncclCommDestroy(c);
            }
        }
    }
}
