package io.tensorlane.runtime.llm;

import io.tensorlane.contract.Algorithm;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ObjLongConsumer;

/**
 * Allreduce calls and bytes (per rank) per algorithm, and the GPU times of the sampled calls (one step in {@value
 * StepRunner#ALLREDUCE_SAMPLE_EVERY} is timed, see {@link AllreduceTimer}); written by the stepping threads, read by
 * metric scrapes.
 */
public final class AllreduceCounts {
    private final Map<Algorithm, LongAdder> calls = new EnumMap<>(Algorithm.class);
    private final Map<Algorithm, LongAdder> bytes = new EnumMap<>(Algorithm.class);
    private final Map<Algorithm, LongAdder> sampledCalls = new EnumMap<>(Algorithm.class);
    private final Map<Algorithm, LongAdder> sampledNanos = new EnumMap<>(Algorithm.class);
    private volatile ObjLongConsumer<Algorithm> sampleSink = (a, ns) -> {};

    AllreduceCounts() {
        for (Algorithm a : Algorithm.values()) {
            calls.put(a, new LongAdder());
            bytes.put(a, new LongAdder());
            sampledCalls.put(a, new LongAdder());
            sampledNanos.put(a, new LongAdder());
        }
    }

    void add(Algorithm a, long n, long bytesEach) {
        calls.get(a).add(n);
        bytes.get(a).add(n * bytesEach);
    }

    /** One timed call of {@code a}: {@code nanos} of GPU time on rank 0's stream. */
    void addSampled(Algorithm a, long nanos) {
        sampledCalls.get(a).increment();
        sampledNanos.get(a).add(nanos);
        sampleSink.accept(a, nanos);
    }

    /** Where each timed call goes as well (serve's latency histogram); replaces the previous sink. */
    public void onSample(ObjLongConsumer<Algorithm> sink) {
        sampleSink = sink;
    }

    public long calls(Algorithm a) {
        return calls.get(a).sum();
    }

    public long bytes(Algorithm a) {
        return bytes.get(a).sum();
    }

    /** Calls of {@code a} that were timed. */
    public long sampledCalls(Algorithm a) {
        return sampledCalls.get(a).sum();
    }

    /** Their GPU time in nanoseconds, summed. */
    public long sampledNanos(Algorithm a) {
        return sampledNanos.get(a).sum();
    }
}
