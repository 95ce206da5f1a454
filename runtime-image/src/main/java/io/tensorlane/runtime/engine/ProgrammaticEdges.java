package io.tensorlane.runtime.engine;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jcuda.driver.CUgraph;

/**
 * Turns a captured graph's qualifying edges ({@link GraphEdges}) into programmatic ones before it is instantiated, so
 * that a decode step's kernels launch while the one before them still runs (the launch gap between two dependent
 * kernels, a few microseconds each, over the ~230 kernels of a batch-1 step of an 8B model). Through JNA on the
 * driver's own library: the edge-data calls (CUDA 12.3 and later) are not in JCuda.
 */
public final class ProgrammaticEdges {
    /** The driver calls used here (cuda.h, CUDA 12.3+; the _v2 names are what CUDA 13's header maps the plain ones to). */
    interface Driver extends Library {
        int cuGraphGetEdges_v2(Pointer graph, Pointer from, Pointer to, Pointer edgeData, LongByReference numEdges);

        int cuGraphNodeGetType(Pointer node, IntByReference type);

        int cuGraphKernelNodeGetParams_v2(Pointer node, Pointer params);

        int cuFuncGetModule(PointerByReference module, Pointer function);

        int cuGraphRemoveDependencies_v2(Pointer graph, Pointer from, Pointer to, Pointer edgeData, long n);

        int cuGraphAddDependencies_v2(Pointer graph, Pointer from, Pointer to, Pointer edgeData, long n);
    }

    static final int NODE_TYPE_KERNEL = 0;
    /** CUgraphEdgeData: from_port, to_port, type, reserved[5]. */
    static final int EDGE_DATA_BYTES = 8;

    static final int PORT_PROGRAMMATIC = 1;
    static final int TYPE_PROGRAMMATIC = 1;
    /** sizeof(CUDA_KERNEL_NODE_PARAMS_v2) is 72 (func first); room to spare. */
    static final int KERNEL_PARAMS_BYTES = 128;

    private ProgrammaticEdges() {}

    /** The driver's library, loaded on first use (by name, else the soname the NVIDIA container toolkit mounts). */
    private static final class Lib {
        static final Driver DRIVER = load();

        private static Driver load() {
            try {
                return Native.load("cuda", Driver.class);
            } catch (UnsatisfiedLinkError e) {
                return Native.load("libcuda.so.1", Driver.class);
            }
        }
    }

    /** Whether the current context's GPU launches programmatically (compute capability 9.0 and later). */
    public static boolean supportedHere() {
        jcuda.driver.CUdevice dev = new jcuda.driver.CUdevice();
        Cuda.check(jcuda.driver.JCudaDriver.cuCtxGetDevice(dev), "cuCtxGetDevice");
        int[] major = {0};
        Cuda.check(
                jcuda.driver.JCudaDriver.cuDeviceGetAttribute(
                        major, jcuda.driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
                "cuDeviceGetAttribute(compute capability)");
        return major[0] >= 9;
    }

    /**
     * Makes every qualifying edge of {@code graph} programmatic, where the downstream kernel is a function of one of the
     * {@code waiting} modules (raw CUmodule addresses); returns how many edges changed.
     */
    public static int apply(CUgraph graph, Set<Long> waiting) {
        if (waiting.contains(0L)) {
            throw new IllegalArgumentException("a null module cannot be a waiting module");
        }
        Driver d = Lib.DRIVER;
        Pointer g = new Pointer(Cuda.address(graph));
        LongByReference count = new LongByReference();
        Cuda.check(d.cuGraphGetEdges_v2(g, null, null, null, count), "cuGraphGetEdges(count)");
        int n = Math.toIntExact(count.getValue());
        if (n == 0) {
            return 0;
        }
        Memory from = new Memory(8L * n);
        Memory to = new Memory(8L * n);
        Memory data = new Memory((long) EDGE_DATA_BYTES * n);
        data.clear();
        count.setValue(n);
        Cuda.check(d.cuGraphGetEdges_v2(g, from, to, data, count), "cuGraphGetEdges");
        List<GraphEdges.Edge> edges = new ArrayList<>(n);
        Map<Long, GraphEdges.Node> nodes = new HashMap<>();
        for (int i = 0; i < n; i++) {
            long a = from.getLong(8L * i);
            long b = to.getLong(8L * i);
            boolean programmatic = data.getByte((long) EDGE_DATA_BYTES * i + 2) != 0;
            edges.add(new GraphEdges.Edge(a, b, programmatic));
            nodes.computeIfAbsent(a, x -> node(d, x));
            nodes.computeIfAbsent(b, x -> node(d, x));
        }
        List<GraphEdges.Edge> change = GraphEdges.programmatic(edges, nodes, waiting);
        if (change.isEmpty()) {
            return 0;
        }
        int m = change.size();
        Memory f = new Memory(8L * m);
        Memory t = new Memory(8L * m);
        Memory ed = new Memory((long) EDGE_DATA_BYTES * m);
        ed.clear();
        for (int i = 0; i < m; i++) {
            f.setLong(8L * i, change.get(i).from());
            t.setLong(8L * i, change.get(i).to());
            ed.setByte((long) EDGE_DATA_BYTES * i, (byte) PORT_PROGRAMMATIC);
            ed.setByte((long) EDGE_DATA_BYTES * i + 2, (byte) TYPE_PROGRAMMATIC);
        }
        Cuda.check(d.cuGraphRemoveDependencies_v2(g, f, t, null, m), "cuGraphRemoveDependencies");
        Cuda.check(d.cuGraphAddDependencies_v2(g, f, t, ed, m), "cuGraphAddDependencies(programmatic)");
        return m;
    }

    private static GraphEdges.Node node(Driver d, long address) {
        Pointer node = new Pointer(address);
        IntByReference type = new IntByReference();
        Cuda.check(d.cuGraphNodeGetType(node, type), "cuGraphNodeGetType");
        if (type.getValue() != NODE_TYPE_KERNEL) {
            return GraphEdges.Node.OTHER;
        }
        Memory params = new Memory(KERNEL_PARAMS_BYTES);
        params.clear();
        Cuda.check(d.cuGraphKernelNodeGetParams_v2(node, params), "cuGraphKernelNodeGetParams");
        long function = params.getLong(0);
        if (function == 0) { // a CUkernel of a library: not one of ours
            return new GraphEdges.Node(true, 0L);
        }
        PointerByReference module = new PointerByReference();
        if (d.cuFuncGetModule(module, new Pointer(function)) != 0) { // a library's function: not one of ours either
            return new GraphEdges.Node(true, 0L);
        }
        return new GraphEdges.Node(true, Pointer.nativeValue(module.getValue()));
    }
}
