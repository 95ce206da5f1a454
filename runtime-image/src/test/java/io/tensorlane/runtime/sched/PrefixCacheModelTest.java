package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.text.TopLogprobs;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link PrefixCache} and {@link BlockAllocator} driven by random admissions, computes, decodes and releases, against a
 * reference model that records, per block, the whole token prefix whose KV it holds (written when a sequence computes
 * the block). After every operation: the allocator's reference counts equal the model's (the tables that hold each
 * block), free blocks are exactly the unheld ones, and every full computed block of every live sequence holds exactly
 * that sequence's own tokens up to its end. At admission the cache must find at least every block that a live sequence
 * holds with the same prefix (a held cached block can never be evicted).
 */
class PrefixCacheModelTest {
    static final int BS = 4;
    static final int BLOCKS = 40;
    static final SequenceListener NONE = new SequenceListener() {
        @Override
        public boolean onToken(int token, TopLogprobs logprobs) {
            return true;
        }

        @Override
        public void onFinish(FinishReason reason, int promptTokens, int completionTokens) {}
    };

    private final BlockAllocator blocks = new BlockAllocator(BLOCKS, BS);
    private final PrefixCache cache = new PrefixCache(blocks, true);
    /** The model: the token prefix (from position 0 to the block's end) whose KV each block holds, or null. */
    private final int[][] content = new int[BLOCKS][];

    private final List<Sequence> live = new ArrayList<>();

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {11, 12, 13, 14, 15})
    void theCacheAgreesWithTheReferenceModel(long seed) {
        Random rnd = new Random(seed);
        List<int[]> prefixes = List.of(randomTokens(rnd, 8), randomTokens(rnd, 13), randomTokens(rnd, 3));
        int hits = 0;
        for (int op = 0; op < 3000; op++) {
            int what = rnd.nextInt(10);
            if (what < 4 || live.isEmpty()) {
                hits += admit(rnd, prefixes);
            } else if (what < 7) {
                decode(live.get(rnd.nextInt(live.size())), rnd);
            } else {
                Sequence s = live.remove(rnd.nextInt(live.size()));
                cache.release(s);
            }
            checkModel();
        }
        assertThat(hits).as("the workload hit the cache").isPositive();
        assertThat(blocks.evictions()).as("and evicted from it").isPositive();
        for (Sequence s : live) {
            cache.release(s);
        }
        live.clear();
        checkModel();
        assertThat(blocks.freeBlocks()).isEqualTo(BLOCKS);
    }

    private static int[] randomTokens(Random rnd, int n) {
        return IntStream.range(0, n).map(i -> rnd.nextInt(50)).toArray();
    }

    /** Admits a new sequence (a shared prefix + a random tail), computes its prompt; returns the blocks it took. */
    private int admit(Random rnd, List<int[]> prefixes) {
        int[] head = prefixes.get(rnd.nextInt(prefixes.size()));
        int[] p = IntStream.concat(Arrays.stream(head), Arrays.stream(randomTokens(rnd, rnd.nextInt(10))))
                .toArray();
        if (rnd.nextInt(3) == 0 && !live.isEmpty()) { // the same tokens as a live sequence (n > 1, a resent turn)
            Sequence o = live.get(rnd.nextInt(live.size()));
            p = Arrays.copyOf(o.tokens, o.length);
        }
        Sequence s = new Sequence(SeqRequest.greedy("s", p, 24), NONE, null, 0, 77L, java.util.Set.of());
        int k = cache.cachedBlocks(s);
        assertThat(k).isLessThanOrEqualTo((s.length - 1) / BS);
        assertThat(k).as("held cached blocks are found").isGreaterThanOrEqualTo(heldChain(s));
        cache.take(s, k);
        for (int i = 0; i < k; i++) {
            assertThat(content[s.table.get(i)])
                    .as("a taken block holds this sequence's prefix")
                    .containsExactly(Arrays.copyOf(s.tokens, (i + 1) * BS));
        }
        live.add(s);
        if (!grow(s, s.length)) {
            live.remove(s);
            cache.release(s);
            return 0;
        }
        compute(s);
        return k;
    }

    /** One more token: the block for it, then its KV computed. */
    private void decode(Sequence s, Random rnd) {
        if (s.length == s.tokens.length || !grow(s, s.length + 1)) {
            return;
        }
        s.tokens[s.length++] = rnd.nextInt(50);
        compute(s);
    }

    /** Blocks for {@code tokens} tokens of the live {@code s}: a new block must have been held by no one else. */
    private boolean grow(Sequence s, int tokens) {
        int before = s.table.size();
        if (!blocks.ensure(s.table, tokens)) {
            return false;
        }
        for (int b : s.table.subList(before, s.table.size())) {
            assertThat(holders(b))
                    .as("a newly allocated block %d is held by no one else", b)
                    .isEqualTo(1);
            content[b] = null; // its KV is overwritten from now on
        }
        return true;
    }

    /** The step: KV written from {@code computed} to {@code length}; the model records full blocks' content. */
    private void compute(Sequence s) {
        int from = s.computed;
        s.computed = s.length;
        for (int i = from / BS; i < s.computed / BS; i++) {
            content[s.table.get(i)] = Arrays.copyOf(s.tokens, (i + 1) * BS);
        }
        cache.registerComputed(s);
    }

    /** The longest chain of blocks some live sequence holds, cached, with {@code s}'s prefix (before its last token). */
    private int heldChain(Sequence s) {
        int k = 0;
        outer:
        while (k < (s.length - 1) / BS) {
            int[] want = Arrays.copyOf(s.tokens, (k + 1) * BS);
            for (Sequence o : live) {
                for (int b : o.table) {
                    if (blocks.isCached(b) && Arrays.equals(content[b], want)) {
                        k++;
                        continue outer;
                    }
                }
            }
            break;
        }
        return k;
    }

    private int holders(int block) {
        int n = 0;
        for (Sequence o : live) {
            for (int b : o.table) {
                n += b == block ? 1 : 0;
            }
        }
        return n;
    }

    private void checkModel() {
        int unheld = 0;
        for (int b = 0; b < BLOCKS; b++) {
            int h = holders(b);
            assertThat(blocks.refCount(b)).as("references of block %d", b).isEqualTo(h);
            unheld += h == 0 ? 1 : 0;
        }
        assertThat(blocks.freeBlocks()).isEqualTo(unheld);
        for (Sequence s : live) {
            for (int i = 0; i < s.computed / BS; i++) {
                assertThat(content[s.table.get(i)])
                        .as("block %d of a live sequence holds its own tokens", i)
                        .containsExactly(Arrays.copyOf(s.tokens, (i + 1) * BS));
            }
        }
    }
}
