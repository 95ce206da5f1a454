package io.tensorlane.topology;

import io.tensorlane.api.v1alpha1.GpuInfo;
import io.tensorlane.api.v1alpha1.GpuLink;
import io.tensorlane.api.v1alpha1.GpuLink.LinkType;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.TopologySummary;
import io.tensorlane.api.v1alpha1.TopologySummary.Interconnect;
import io.tensorlane.api.v1alpha1.TopologySummary.P2p;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Computes a node's {@link TopologySummary} from its GPUs and link matrix. Pure: the same input always gives the same
 * summary; nothing is read from the environment. Shared by the operator and the runtime's probe.
 *
 * <p>Rules:
 * <ul>
 *   <li><b>interconnect</b>: one GPU or none: NotApplicable; every pair of GPUs linked by NV: NVLink; no NV pair: PCIe;
 *       otherwise Mixed. A pair without a link entry counts as not NV.</li>
 *   <li><b>p2p</b>: one GPU or none: NotApplicable; every pair {@link GpuLink#p2pUsable() usable}: Full; none: None;
 *       otherwise Partial. A pair without a link entry counts as not usable (conservative).</li>
 *   <li><b>islands</b>: the coarsest split the matrix shows. Let W be the worst (farthest) path type over all pairs.
 *       W in {NV, PIX, PXB}: one island (everything is NVLink or behind PCIe switches of one tree). W in {PHB, NODE,
 *       SYS}: connected components of the pairs that are strictly closer than W; so a two-socket box splits by NUMA
 *       node (NODE inside, SYS across) and a one-socket box splits by PCIe switch. NV pairs always join. Empty when
 *       any pair's path type is unknown (absent link or absent type).</li>
 *   <li><b>confidence</b>: High for a probe result with a complete matrix, Low otherwise (heuristic, or probe data
 *       with unknown pairs).</li>
 * </ul>
 * Links whose indices are not GPUs of the node, or that link a GPU to itself, are ignored ({@link #problems} names
 * them); {@code a > b} is accepted as the same pair.
 */
public final class TopologyClassifier {
    public static final String HIGH = "High";
    public static final String LOW = "Low";
    public static final String MIXED_PRODUCT = "mixed";

    private TopologyClassifier() {}

    /** The summary of a status's GPUs and links (its own summary, if any, is not read). */
    public static TopologySummary classify(GpuTopologyStatus status) {
        Objects.requireNonNull(status, "status");
        List<GpuInfo> gpus = status.gpus == null ? List.of() : status.gpus;
        Map<Pair, GpuLink> matrix = matrix(gpus, status.links);
        TopologySummary s = new TopologySummary();
        s.gpuCount = gpus.size();
        s.product = product(gpus);
        s.gpuMemoryBytes = gpus.stream()
                .map(g -> g.memoryBytes)
                .filter(Objects::nonNull)
                .min(Long::compare)
                .orElse(null);
        List<Integer> indices = indices(gpus);
        List<Pair> pairs = allPairs(indices);
        s.interconnect = interconnect(pairs, matrix);
        s.p2p = p2p(pairs, matrix);
        s.islands = islands(indices, pairs, matrix);
        boolean complete = pairs.stream().allMatch(p -> matrix.containsKey(p) && matrix.get(p).type != null);
        s.confidence = status.source == GpuTopologyStatus.Source.probe && complete ? HIGH : LOW;
        return s;
    }

    /** Returns the status with its summary set to {@link #classify(GpuTopologyStatus)}. */
    public static GpuTopologyStatus withSummary(GpuTopologyStatus status) {
        status.summary = classify(status);
        return status;
    }

    /** Human-readable problems with the matrix (ignored links, duplicate pairs, GPUs without an index); empty if none. */
    public static List<String> problems(GpuTopologyStatus status) {
        List<String> out = new ArrayList<>();
        List<GpuInfo> gpus = status.gpus == null ? List.of() : status.gpus;
        TreeSet<Integer> seen = new TreeSet<>();
        for (int i = 0; i < gpus.size(); i++) {
            Integer idx = gpus.get(i).index;
            if (idx == null) {
                out.add("gpus[" + i + "] has no index");
            } else if (!seen.add(idx)) {
                out.add("gpu index " + idx + " appears twice");
            }
        }
        Map<Pair, Integer> count = new HashMap<>();
        List<GpuLink> links = status.links == null ? List.of() : status.links;
        for (int i = 0; i < links.size(); i++) {
            GpuLink l = links.get(i);
            if (l == null
                    || l.a == null
                    || l.b == null
                    || l.a.equals(l.b)
                    || !seen.contains(l.a)
                    || !seen.contains(l.b)) {
                out.add("links[" + i + "] does not join two distinct GPUs of this node; ignored");
            } else if (count.merge(Pair.of(l.a, l.b), 1, Integer::sum) > 1) {
                out.add("links[" + i + "] repeats pair " + Pair.of(l.a, l.b) + "; the first entry is used");
            }
        }
        return out;
    }

    private static List<Integer> indices(List<GpuInfo> gpus) {
        return new ArrayList<>(new TreeSet<>(
                gpus.stream().map(g -> g.index).filter(Objects::nonNull).toList()));
    }

    private static Map<Pair, GpuLink> matrix(List<GpuInfo> gpus, List<GpuLink> links) {
        TreeSet<Integer> known = new TreeSet<>(indices(gpus));
        Map<Pair, GpuLink> m = new HashMap<>();
        for (GpuLink l : links == null ? List.<GpuLink>of() : links) {
            if (l != null
                    && l.a != null
                    && l.b != null
                    && !l.a.equals(l.b)
                    && known.contains(l.a)
                    && known.contains(l.b)) {
                m.putIfAbsent(Pair.of(l.a, l.b), l);
            }
        }
        return m;
    }

    private static List<Pair> allPairs(List<Integer> indices) {
        List<Pair> pairs = new ArrayList<>();
        for (int i = 0; i < indices.size(); i++) {
            for (int j = i + 1; j < indices.size(); j++) {
                pairs.add(new Pair(indices.get(i), indices.get(j)));
            }
        }
        return pairs;
    }

    private static String product(List<GpuInfo> gpus) {
        TreeSet<String> names = new TreeSet<>();
        gpus.forEach(g -> names.add(g.product == null ? "" : g.product));
        if (names.isEmpty()) {
            return null;
        }
        return names.size() == 1 ? emptyToNull(names.first()) : MIXED_PRODUCT;
    }

    private static String emptyToNull(String s) {
        return s.isEmpty() ? null : s;
    }

    private static Interconnect interconnect(List<Pair> pairs, Map<Pair, GpuLink> m) {
        if (pairs.isEmpty()) {
            return Interconnect.NotApplicable;
        }
        long nv = pairs.stream()
                .filter(p -> m.containsKey(p) && m.get(p).type == LinkType.NV)
                .count();
        return nv == pairs.size() ? Interconnect.NVLink : nv == 0 ? Interconnect.PCIe : Interconnect.Mixed;
    }

    private static P2p p2p(List<Pair> pairs, Map<Pair, GpuLink> m) {
        if (pairs.isEmpty()) {
            return P2p.NotApplicable;
        }
        long ok = pairs.stream()
                .filter(p -> m.containsKey(p) && m.get(p).p2pUsable())
                .count();
        return ok == pairs.size() ? P2p.Full : ok == 0 ? P2p.None : P2p.Partial;
    }

    private static List<List<Integer>> islands(List<Integer> indices, List<Pair> pairs, Map<Pair, GpuLink> m) {
        if (indices.isEmpty()) {
            return new ArrayList<>();
        }
        LinkType worst = LinkType.NV;
        for (Pair p : pairs) {
            GpuLink l = m.get(p);
            if (l == null || l.type == null) {
                return new ArrayList<>();
            }
            if (l.type.compareTo(worst) > 0) {
                worst = l.type;
            }
        }
        Map<Integer, Integer> parent = new HashMap<>();
        indices.forEach(i -> parent.put(i, i));
        for (Pair p : pairs) {
            LinkType t = m.get(p).type;
            if (worst.compareTo(LinkType.PXB) <= 0 || t.compareTo(worst) < 0) {
                parent.put(root(parent, p.a()), root(parent, p.b()));
            }
        }
        Map<Integer, List<Integer>> groups = new TreeMap<>();
        for (Integer i : indices) {
            groups.computeIfAbsent(root(parent, i), k -> new ArrayList<>()).add(i);
        }
        List<List<Integer>> out = new ArrayList<>(groups.values());
        out.sort((x, y) -> Integer.compare(x.get(0), y.get(0)));
        return out;
    }

    private static int root(Map<Integer, Integer> parent, int i) {
        while (parent.get(i) != i) {
            i = parent.get(i);
        }
        return i;
    }

    /** An unordered GPU pair, stored with a < b. */
    record Pair(int a, int b) {
        static Pair of(int x, int y) {
            return x < y ? new Pair(x, y) : new Pair(y, x);
        }

        @Override
        public String toString() {
            return a + "-" + b;
        }
    }
}
