package io.tensorlane.runtime.serve;

import java.util.List;

/**
 * The synthetic step: {@code layers} row-parallel layers of width {@code hidden}, run once per token count in
 * {@code tokens}. Each layer's allreduce carries {@code tokens x hidden} bf16 values; with the default hidden 5376, 4
 * tokens is the seed's 42 KiB (43,008-byte) attention allreduce, 32 tokens 336 KiB, 256 tokens 2.6 MiB.
 */
public record StepShape(int layers, int hidden, List<Integer> tokens) {
    public static final StepShape DEFAULT = new StepShape(4, 5376, List.of(4, 32, 256));

    public StepShape {
        if (layers < 1 || layers > 1024) {
            throw new IllegalArgumentException("--layers must be 1..1024, got " + layers);
        }
        if (hidden < 8 || hidden % 8 != 0 || hidden > 65536) {
            throw new IllegalArgumentException("--hidden must be a multiple of 8 in 8..65536, got " + hidden);
        }
        if (tokens == null || tokens.isEmpty() || tokens.stream().anyMatch(t -> t == null || t < 1 || t > 65536)) {
            throw new IllegalArgumentException("--tokens must be a list of counts in 1..65536, got " + tokens);
        }
        tokens = List.copyOf(tokens);
    }

    /** Bytes of one allreduce for {@code t} tokens (bf16). */
    public long messageBytes(int t) {
        return 2L * t * hidden;
    }

    public int maxTokens() {
        return tokens.stream().mapToInt(Integer::intValue).max().orElseThrow();
    }

    public long largestMessageBytes() {
        return messageBytes(maxTokens());
    }

    /** The per-rank shard of the hidden dimension (at least 8). */
    public int shard(int worldSize) {
        return Math.max(8, hidden / worldSize);
    }
}
