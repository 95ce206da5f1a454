package io.tensorlane.runtime.engine;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.List;
import java.util.OptionalInt;
import java.util.logging.Logger;
import jcuda.NativePointerObject;
import jcuda.Pointer;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/** Small helpers over the JCuda driver API: checked calls and raw addresses. */
public final class Cuda {
    private static final Logger LOG = Logger.getLogger(Cuda.class.getName());
    private static final Method NATIVE_POINTER;
    private static final Field BYTE_OFFSET;
    private static volatile boolean initialized;

    static {
        try {
            NATIVE_POINTER = NativePointerObject.class.getDeclaredMethod("getNativePointer");
            NATIVE_POINTER.setAccessible(true);
            BYTE_OFFSET = Pointer.class.getDeclaredField("byteOffset");
            BYTE_OFFSET.setAccessible(true);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private Cuda() {}

    /** Throws {@link CudaException} naming {@code what} unless {@code result} is CUDA_SUCCESS. */
    public static void check(int result, String what) {
        if (result != CUresult.CUDA_SUCCESS) {
            throw new CudaException(what, result);
        }
    }

    /**
     * {@link #init()} for ranks on {@code devices}: where a device hosts several (virtual ranks), their driver settings
     * first ({@link Communicator#prepareVirtualRanks}), which count only before the driver starts.
     */
    public static void init(List<Integer> devices) {
        if (CommunicatorConfig.sharesAGpu(devices)) {
            Communicator.prepareVirtualRanks();
        }
        init();
    }

    /**
     * {@link #init()} for a command that places its ranks by the GPU count (selftest, bench: rank r on GPU r mod count,
     * unless {@code explicit} devices are given for a world size): the virtual-rank settings first when some world size
     * in {@code worldSizes} will put two ranks on one GPU ({@link SharedGpuForecast}, from {@code driverGpus}, the GPUs
     * counted without starting the driver, and CUDA_VISIBLE_DEVICES). Without them 8 ranks share 8 hardware queues and
     * a rank's graph-captured run of calls can queue behind another rank's spinning kernel; ranks on GPUs of their own
     * run with the driver's defaults, as in a pod.
     */
    public static void initForWorlds(List<Integer> worldSizes, List<Integer> explicit, OptionalInt driverGpus) {
        OptionalInt visible = SharedGpuForecast.visibleGpus(System.getenv("CUDA_VISIBLE_DEVICES"), driverGpus);
        boolean shared = SharedGpuForecast.ranksShareAGpu(worldSizes, explicit, visible);
        LOG.info(() -> "GPUs visible before the driver starts: "
                + (visible.isPresent() ? String.valueOf(visible.getAsInt()) : "unknown") + "; world sizes " + worldSizes
                + (shared ? " put ranks on a shared GPU: virtual-rank driver settings on" : ": one GPU per rank"));
        if (shared) {
            Communicator.prepareVirtualRanks();
        }
        init();
    }

    /** cuInit once; JCuda exceptions off (we check every return code ourselves). */
    public static synchronized void init() {
        if (!initialized) {
            try {
                JCudaDriver.setExceptionsEnabled(false);
            } catch (UnsatisfiedLinkError e) {
                throw new CudaUnavailableException(
                        "cannot load the CUDA driver through JCuda (is the NVIDIA driver's libcuda.so.1 on the "
                                + "library path?): "
                                + e.getMessage()
                                        .lines()
                                        .filter(l -> l.contains("libcuda"))
                                        .findFirst()
                                        .orElse(e.getMessage()
                                                .lines()
                                                .findFirst()
                                                .orElse("")));
            }
            int rc = JCudaDriver.cuInit(0);
            if (rc != CUresult.CUDA_SUCCESS) {
                throw new CudaUnavailableException("cuInit failed: " + CUresult.stringFor(rc) + " (no usable GPU?)");
            }
            initialized = true;
        }
    }

    /** The raw address a JCuda pointer object stands for (device pointers: the device virtual address). */
    public static long address(NativePointerObject p) {
        try {
            long base = (long) NATIVE_POINTER.invoke(p);
            long offset = p instanceof Pointer ? (long) BYTE_OFFSET.get(p) : 0L;
            return base + offset;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read JCuda pointer address", e);
        }
    }

    /** Multiprocessors of the current context's device (the grid sizes that fill it). */
    public static int multiprocessorsOfCurrentDevice() {
        jcuda.driver.CUdevice dev = new jcuda.driver.CUdevice();
        check(JCudaDriver.cuCtxGetDevice(dev), "cuCtxGetDevice");
        int[] sms = {0};
        check(
                JCudaDriver.cuDeviceGetAttribute(
                        sms, jcuda.driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
                "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
        return sms[0];
    }

    /** Whether work enqueued on {@code s} now is being captured into a CUDA graph (cuStreamIsCapturing). */
    public static boolean isCapturing(jcuda.driver.CUstream s) {
        int[] status = {0};
        check(JCudaDriver.cuStreamIsCapturing(s, status), "cuStreamIsCapturing");
        return status[0] == jcuda.driver.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE;
    }
}
