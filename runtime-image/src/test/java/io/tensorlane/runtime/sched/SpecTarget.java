package io.tensorlane.runtime.sched;

import io.tensorlane.runtime.text.Sampler;
import io.tensorlane.runtime.text.SamplingParams;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * A CPU target model for the speculation tests, with a real (fake) paged KV cache like {@link FakeExecutor}: every
 * step writes each token's id and position to its slot, and each logits row's context is read back through the row's
 * block table (a wrong slot, a stale block or a bad rollback changes the output or fails the position check). The next
 * token is {@code rule(context)}; sampled rows draw by the host sampler from logits that favour that token, seeded by
 * (seed, counter) as the GPU draws. With {@code heldCheck}, every step also checks that the allocator holds exactly the
 * blocks of its (single) sequence's tokens: guesses' blocks were given back.
 */
final class SpecTarget implements StepExecutor {
    final int vocab;
    private final int bs;
    private final int[] kv;
    private final int[] kvPos;
    private final ToIntFunction<int[]> rule;
    final List<StepBatch> batches = Collections.synchronizedList(new ArrayList<>());
    volatile BlockAllocator heldCheck;
    private volatile java.util.concurrent.CountDownLatch hold = new java.util.concurrent.CountDownLatch(0);

    SpecTarget(int vocab, int blocks, int bs, ToIntFunction<int[]> rule) {
        this.vocab = vocab;
        this.bs = bs;
        this.kv = new int[blocks * bs];
        this.kvPos = new int[blocks * bs];
        this.rule = rule;
        Arrays.fill(kvPos, -1);
    }

    /**
     * Repeats the context's last 12 tokens (so prompt lookup guesses right), except where a context hash says otherwise
     * (1 in 7: a token from the hash, after which the repetition goes on from there); counts up under 12 tokens.
     */
    static int periodic(int[] ctx, int vocab) {
        int n = ctx.length;
        int h = Arrays.hashCode(ctx);
        if (Math.floorMod(h, 7) == 0) {
            return Math.floorMod(h >>> 3, vocab - 1);
        }
        return n < 12 ? (ctx[n - 1] + 1) % (vocab - 1) : ctx[n - 12];
    }

    /**
     * After a token seen before, the smallest id the context lacks; after a new one, the first token again. So prompt
     * lookup guesses after every repeated first token (what followed it last time, an id of the context) and is always
     * wrong.
     */
    static int unseen(int[] ctx) {
        java.util.BitSet seen = new java.util.BitSet();
        for (int i = 0; i < ctx.length - 1; i++) {
            seen.set(ctx[i]);
        }
        if (!seen.get(ctx[ctx.length - 1])) {
            return ctx[0];
        }
        seen.set(ctx[ctx.length - 1]);
        return seen.nextClearBit(0);
    }

    @Override
    public int vocabSize() {
        return vocab;
    }

    /**
     * Steps wait from here until {@link #release()}: requests submitted in between are all queued before the second
     * step is planned (the first may have been planned when only the first request had arrived).
     */
    void hold() {
        hold = new java.util.concurrent.CountDownLatch(1);
    }

    void release() {
        hold.countDown();
    }

    @Override
    public StepResult step(StepBatch b, boolean logits) {
        try {
            if (!hold.await(10, java.util.concurrent.TimeUnit.SECONDS)) {
                throw new IllegalStateException("test hold not released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        batches.add(b);
        BlockAllocator check = heldCheck;
        if (check != null) {
            int end = 0;
            for (int p : b.positions()) {
                end = Math.max(end, p + 1);
            }
            int held = check.blocks() - check.freeBlocks();
            if (held != check.blocksFor(end)) {
                throw new AssertionError("step up to position " + (end - 1) + " finds " + held
                        + " blocks held, expected " + check.blocksFor(end));
            }
        }
        for (int t = 0; t < b.tokens(); t++) {
            kv[b.slots()[t]] = b.tokenIds()[t];
            kvPos[b.slots()[t]] = b.positions()[t];
        }
        int m = b.logitTokens().length;
        int[] ids = new int[m];
        float[] out = logits ? new float[m * vocab] : null;
        for (int i = 0; i < m; i++) {
            int t = b.logitTokens()[i];
            int[] ctx = context(b, b.tokenRow()[t], b.positions()[t]);
            int next = rule.applyAsInt(ctx);
            float[] row = new float[vocab];
            fill(row, ctx, next);
            if (out != null) {
                System.arraycopy(row, 0, out, i * vocab, vocab);
            }
            SamplingParams p = b.sampling().params(i);
            ids[i] = p.isGreedy()
                    ? next
                    : Sampler.sample(
                            row,
                            0,
                            vocab,
                            p,
                            Sampler.rngFor(p.seed() * 1_000_003L + b.sampling().counter(i)));
        }
        return new StepResult(ids, out);
    }

    private int[] context(StepBatch b, int row, int pos) {
        int[] ctx = new int[pos + 1];
        for (int p = 0; p <= pos; p++) {
            int slot = b.blockTables()[row * b.maxBlocksPerSeq() + p / bs] * bs + p % bs;
            if (kvPos[slot] != p) {
                throw new AssertionError("KV slot " + slot + " holds position " + kvPos[slot] + ", expected " + p);
            }
            ctx[p] = kv[slot];
        }
        return ctx;
    }

    /** Logits in [0, 2) from the context, the rule's token at 3 (so a T=1 draw takes it about a third of the time). */
    private void fill(float[] row, int[] ctx, int next) {
        long h = Arrays.hashCode(ctx);
        for (int v = 0; v < vocab; v++) {
            long x = (h + v) * 0x9E3779B97F4A7C15L;
            row[v] = ((x >>> 40) & 0xFFFF) / 32768f;
        }
        row[next] = 3f + vocab / 32f;
    }
}
