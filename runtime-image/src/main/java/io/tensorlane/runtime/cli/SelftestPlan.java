package io.tensorlane.runtime.cli;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.AlgorithmTable;
import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.DType;
import java.util.ArrayList;
import java.util.List;

/** What a selftest will run (pure: built and printed by --dry-run without a GPU). */
public record SelftestPlan(
        List<Integer> worldSizes, List<DType> dtypes, List<Algorithm> algorithms, List<Long> counts) {
    /** Odd and even element counts: single element, partial 16-byte vectors, block and chunk remainders. */
    public static final List<Long> DEFAULT_COUNTS = List.of(1L, 3L, 8L, 9L, 1000L, 4097L, 65537L, 300_007L, 2_000_003L);

    public record Case(int world, DType dtype, Algorithm algorithm, long count) {}

    public SelftestPlan {
        worldSizes = List.copyOf(worldSizes);
        dtypes = List.copyOf(dtypes);
        algorithms = List.copyOf(algorithms);
        counts = List.copyOf(counts);
        for (int w : worldSizes) {
            if (w < 2 || w > BufferLayout.MAX_RANKS) {
                throw new IllegalArgumentException("world sizes must be 2.." + BufferLayout.MAX_RANKS + ", got " + w);
            }
        }
        for (Algorithm a : algorithms) {
            if (!a.isCustom()) {
                throw new IllegalArgumentException("selftest checks the custom kernels; " + a + " is not one");
            }
        }
        for (long c : counts) {
            if (c < 1) {
                throw new IllegalArgumentException("element counts must be >= 1, got " + c);
            }
        }
        if (worldSizes.isEmpty() || dtypes.isEmpty() || algorithms.isEmpty() || counts.isEmpty()) {
            throw new IllegalArgumentException("selftest needs at least one world size, dtype, algorithm and count");
        }
    }

    /** The layout's message size: the largest case in bytes. */
    public long maxMessageBytes() {
        int widest = dtypes.stream().mapToInt(DType::bytes).max().orElseThrow();
        return counts.stream().mapToLong(c -> c * widest).max().orElseThrow();
    }

    public BufferLayout layout(int world) {
        return BufferLayout.of(world, maxMessageBytes());
    }

    public AlgorithmTable table(int world) {
        return AlgorithmTable.defaults(world, layout(world).maxMessageBytes());
    }

    public List<Case> cases(int world) {
        List<Case> out = new ArrayList<>();
        for (DType d : dtypes) {
            for (Algorithm a : algorithms) {
                for (long c : counts) {
                    out.add(new Case(world, d, a, c));
                }
            }
        }
        return out;
    }

    public int totalCases() {
        return worldSizes.size() * dtypes.size() * algorithms.size() * counts.size();
    }

    /** Human description of the plan: per world size, the buffers and the table. */
    public List<String> describe() {
        List<String> out = new ArrayList<>();
        out.add("selftest plan: world sizes " + worldSizes + ", dtypes " + dtypes + ", algorithms " + algorithms
                + ", element counts " + counts);
        out.add("  " + totalCases()
                + " cases + per world size one table-selected (Auto) call per dtype, one CUDA-graph replay check");
        for (int w : worldSizes) {
            BufferLayout l = layout(w);
            StringBuilder b = new StringBuilder("  world " + w + ": buffers per rank");
            l.buffers()
                    .forEach(x -> b.append(' ')
                            .append(x.name())
                            .append('=')
                            .append(x.bytes())
                            .append(x.peerVisible() ? "(peer)" : ""));
            b.append("; ipc ")
                    .append(l.ipcBytesPerRank())
                    .append(" B, total ")
                    .append(l.totalBytesPerRank())
                    .append(" B per rank");
            out.add(b.toString());
            StringBuilder t = new StringBuilder("    table:");
            table(w).rows()
                    .forEach(r ->
                            t.append(" <=").append(r.upToBytes()).append('=').append(r.algorithm()));
            out.add(t.toString());
        }
        return out;
    }
}
