package io.tensorlane.runtime.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Which edges of a captured CUDA graph may become programmatic (programmatic dependent launch, sm_90 and later): the
 * downstream kernel is launched while the upstream one still runs, and waits for it on the device instead
 * ({@code tlpdl::enter()}, kernels/src/main/cuda/tl_pdl.cuh). A pure function of the graph's nodes and edges.
 *
 * <p>An edge qualifies when both ends are kernel nodes, the edge is an ordinary one, and the downstream kernel is one of
 * {@code waiting}'s modules (the model module, whose every entry point waits first: KernelSourcesTest). Everything else
 * keeps full serialization: a cuBLAS kernel or an allreduce downstream (they do not wait on the device), memcpy, memset
 * and event nodes on either side. Transitive order still holds: a waiting kernel cannot finish before the kernels it
 * waited for, so a kernel after it sees their writes too.
 */
public final class GraphEdges {
    private GraphEdges() {}

    /** A node: whether it is a kernel, and the module of its function (0 when not a kernel or unknown). */
    public record Node(boolean kernel, long module) {
        public static final Node OTHER = new Node(false, 0L);
    }

    /** An edge from {@code from} to {@code to}; {@code programmatic} for one that already is. */
    public record Edge(long from, long to, boolean programmatic) {}

    /** The edges of {@code edges} to make programmatic, in their order. */
    public static List<Edge> programmatic(List<Edge> edges, Map<Long, Node> nodes, java.util.Set<Long> waiting) {
        List<Edge> out = new ArrayList<>();
        for (Edge e : edges) {
            Node from = nodes.getOrDefault(e.from(), Node.OTHER);
            Node to = nodes.getOrDefault(e.to(), Node.OTHER);
            if (!e.programmatic() && from.kernel() && to.kernel() && waiting.contains(to.module())) {
                out.add(e);
            }
        }
        return out;
    }
}
