package io.tensorlane.runtime.llm;

import io.tensorlane.contract.Algorithm;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/** Allreduce calls and bytes (per rank) per algorithm; written by the stepping thread, read by metric scrapes. */
public final class AllreduceCounts {
    private final Map<Algorithm, LongAdder> calls = new EnumMap<>(Algorithm.class);
    private final Map<Algorithm, LongAdder> bytes = new EnumMap<>(Algorithm.class);

    AllreduceCounts() {
        for (Algorithm a : Algorithm.values()) {
            calls.put(a, new LongAdder());
            bytes.put(a, new LongAdder());
        }
    }

    void add(Algorithm a, long n, long bytesEach) {
        calls.get(a).add(n);
        bytes.get(a).add(n * bytesEach);
    }

    public long calls(Algorithm a) {
        return calls.get(a).sum();
    }

    public long bytes(Algorithm a) {
        return bytes.get(a).sum();
    }
}
