package io.tensorlane.runtime.nccl;

import com.sun.jna.Library;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;

/** The few NCCL entry points Tensorlane uses (nccl.h), bound with JNA. */
public interface NcclLibrary extends Library {
    int ncclSuccess = 0;
    int ncclSum = 0;
    int ncclFloat16 = 6;
    int ncclFloat32 = 7;
    int ncclBfloat16 = 9;

    int ncclGetVersion(IntByReference version);

    /** comms: ndev consecutive ncclComm_t handles (8 bytes each). */
    int ncclCommInitAll(Pointer comms, int ndev, int[] devlist);

    int ncclCommDestroy(Pointer comm);

    int ncclAllReduce(
            Pointer sendbuff, Pointer recvbuff, long count, int datatype, int op, Pointer comm, Pointer stream);

    int ncclGroupStart();

    int ncclGroupEnd();

    String ncclGetErrorString(int result);
}
