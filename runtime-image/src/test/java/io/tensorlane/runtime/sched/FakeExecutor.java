package io.tensorlane.runtime.sched;

import io.tensorlane.runtime.text.Sampler;
import io.tensorlane.runtime.text.SamplingParams;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;

/**
 * A CPU stand-in for the engine with a real (fake) paged KV cache: every step writes each token's id to its slot, then
 * each logits row's next token is a hash of the whole context read back through the row's block table, and of the
 * position (sampled rows: drawn by the host sampler from logits derived from that hash, seeded by the row's seed and
 * counter, as the GPU draws them). Wrong slots, block tables or recompute after preemption therefore change the output. Records every batch;
 * optionally gated (each step waits for a permit) and failing on chosen steps.
 */
final class FakeExecutor implements StepExecutor {
    final int vocab;
    private final int blockSize;
    private final int[] kv;
    private final int[] kvPos;
    final List<StepBatch> batches = Collections.synchronizedList(new ArrayList<>());
    final List<Boolean> wantLogits = Collections.synchronizedList(new ArrayList<>());
    final AtomicInteger entered = new AtomicInteger();
    private final Semaphore gate = new Semaphore(0);
    volatile boolean gated;
    volatile IntPredicate failOnStep = i -> false;
    volatile boolean fatal = true;

    FakeExecutor(int vocab, int blocks, int blockSize) {
        this.vocab = vocab;
        this.blockSize = blockSize;
        this.kv = new int[blocks * blockSize];
        this.kvPos = new int[blocks * blockSize];
        Arrays.fill(kvPos, -1);
    }

    void allow(int steps) {
        gate.release(steps);
    }

    @Override
    public int vocabSize() {
        return vocab;
    }

    @Override
    public boolean isFatal(Throwable failure) {
        return fatal;
    }

    @Override
    public StepResult step(StepBatch b, boolean logits) {
        int index = entered.getAndIncrement();
        if (gated) {
            try {
                if (!gate.tryAcquire(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("test gate not opened");
                }
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }
        batches.add(b);
        wantLogits.add(logits);
        if (failOnStep.test(index)) {
            throw new IllegalStateException("injected failure in step " + index);
        }
        for (int t = 0; t < b.tokens(); t++) {
            kv[b.slots()[t]] = b.tokenIds()[t];
            kvPos[b.slots()[t]] = b.positions()[t];
        }
        int m = b.logitTokens().length;
        int[] argmax = new int[m];
        float[] out = logits ? new float[m * vocab] : null;
        for (int i = 0; i < m; i++) {
            int t = b.logitTokens()[i];
            long h = contextHash(b, b.tokenRow()[t], b.positions()[t]);
            argmax[i] = next(h, vocab);
            if (out != null) {
                fillLogits(out, i * vocab, vocab, h);
            }
            SamplingParams p = b.sampling().params(i);
            if (!p.isGreedy()) { // the GPU draws from the row's logits; here the host sampler does, seeded by (seed,
                // counter)
                float[] row = new float[vocab];
                fillLogits(row, 0, vocab, h);
                argmax[i] = Sampler.sample(
                        row,
                        0,
                        vocab,
                        p,
                        Sampler.rngFor(p.seed() * 1_000_003L + b.sampling().counter(i)));
            }
        }
        return new StepResult(argmax, out);
    }

    private long contextHash(StepBatch b, int row, int pos) {
        long h = 17;
        for (int p = 0; p <= pos; p++) {
            int slot = b.blockTables()[row * b.maxBlocksPerSeq() + p / blockSize] * blockSize + p % blockSize;
            if (kvPos[slot] != p) {
                throw new AssertionError("KV slot " + slot + " holds position " + kvPos[slot] + ", expected " + p);
            }
            h = h * 31 + kv[slot] + 1;
        }
        return h * 7 + pos;
    }

    /** The next token after a context with hash {@code h}: the argmax of {@link #fillLogits}. */
    static int next(long h, int vocab) {
        return (int) Math.floorMod(h ^ (h >>> 17), (long) vocab);
    }

    /** Pseudo-random logits in [0, 2) with the argmax token at 4. */
    static void fillLogits(float[] out, int off, int vocab, long h) {
        for (int v = 0; v < vocab; v++) {
            long x = (h + v) * 0x9E3779B97F4A7C15L;
            out[off + v] = ((x >>> 40) & 0xFFFF) / 32768f;
        }
        out[off + next(h, vocab)] = 4f;
    }

    /** What a greedy run of {@code prompt} yields (the same hash, computed without a cache). */
    static int[] reference(int[] prompt, int maxTokens, int vocab) {
        int[] seq = Arrays.copyOf(prompt, prompt.length + maxTokens);
        int len = prompt.length;
        for (int i = 0; i < maxTokens; i++) {
            long h = 17;
            for (int p = 0; p < len; p++) {
                h = h * 31 + seq[p] + 1;
            }
            h = h * 7 + (len - 1);
            seq[len++] = next(h, vocab);
        }
        return Arrays.copyOfRange(seq, prompt.length, len);
    }
}
