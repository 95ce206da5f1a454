package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The content-addressed block pool: hashes, reference counts, eviction order. */
class BlockAllocatorTest {
    static final int BS = 4;

    static int[] toks(int... t) {
        return t;
    }

    static Stream<Arguments> hashes() {
        int[] a = toks(1, 2, 3, 4);
        return Stream.of(
                Arguments.of("same parent, same tokens", 7L, a, 7L, toks(1, 2, 3, 4), true),
                Arguments.of("other parent (another prefix before)", 7L, a, 8L, toks(1, 2, 3, 4), false),
                Arguments.of("one token differs", 7L, a, 7L, toks(1, 2, 3, 5), false),
                Arguments.of("same tokens in another order", 7L, a, 7L, toks(2, 1, 3, 4), false),
                Arguments.of("token 0 vs parent bits", 0L, toks(0, 0, 0, 0), 0L, toks(0, 0, 0, 1), false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hashes")
    void aBlockHashCoversItsParentAndEveryTokenInOrder(
            String name, long p1, int[] t1, long p2, int[] t2, boolean equal) {
        assertThat(BlockHashes.hash(p1, t1, 0, BS) == BlockHashes.hash(p2, t2, 0, BS))
                .isEqualTo(equal);
    }

    @Test
    void theChainOfASequenceDependsOnTheSaltAndEveryEarlierBlock() {
        int[] s = toks(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
        int[] t = toks(1, 2, 3, 9, 5, 6, 7, 8, 9, 10, 11, 12); // block 0 differs, blocks 1-2 equal
        BlockHashes a = new BlockHashes(BlockHashes.salt("model-a"));
        BlockHashes a2 = new BlockHashes(BlockHashes.salt("model-a"));
        BlockHashes b = new BlockHashes(BlockHashes.salt("model-b"));
        BlockHashes at = new BlockHashes(BlockHashes.salt("model-a"));
        for (int i = 0; i < 3; i++) {
            assertThat(a.get(i, s, BS)).isEqualTo(a2.get(i, s, BS));
            assertThat(a.get(i, s, BS)).as("salt").isNotEqualTo(b.get(i, s, BS));
            assertThat(a.get(i, s, BS)).as("earlier block differs").isNotEqualTo(at.get(i, t, BS));
        }
        assertThat(a.parent(0, s, BS)).isEqualTo(BlockHashes.salt("model-a"));
        assertThat(a.parent(2, s, BS)).isEqualTo(a.get(1, s, BS));
        assertThat(a.get(1, s, BS)).isEqualTo(BlockHashes.hash(a.get(0, s, BS), s, BS, BS));
    }

    @Test
    void referenceCountsTrackTablesAndACachedBlockOutlivesItsLastReference() {
        BlockAllocator a = new BlockAllocator(4, BS);
        int[] t = toks(5, 6, 7, 8);
        List<Integer> one = new ArrayList<>(a.allocate(2));
        int b = one.get(0);
        assertThat(a.register(b, 42L, 1L, t, 0)).isTrue();
        assertThat(a.register(b, 42L, 1L, t, 0)).as("already registered").isFalse();
        assertThat(a.register(one.get(1), 42L, 1L, t, 0))
                .as("same content elsewhere")
                .isFalse();
        assertThat(a.lookup(42L, 1L, t, 0)).isEqualTo(b);
        List<Integer> two = new ArrayList<>();
        a.take(b);
        two.add(b);
        assertThat(a.refCount(b)).isEqualTo(2);
        a.release(one);
        assertThat(a.refCount(b)).isEqualTo(1);
        assertThat(a.freeBlocks()).isEqualTo(3);
        a.release(two);
        assertThat(a.refCount(b)).isZero();
        assertThat(a.freeBlocks()).as("an evictable block counts as free").isEqualTo(4);
        assertThat(a.usage()).isZero();
        assertThat(a.isCached(b)).isTrue();
        assertThat(a.lookup(42L, 1L, t, 0)).isEqualTo(b);
        a.take(b);
        assertThat(a.freeBlocks()).as("taken back: no longer evictable").isEqualTo(3);
        assertThat(a.allocate(3)).doesNotContain(b);
        assertThat(a.freeBlocks()).isZero();
        assertThat(a.canAllocate(1)).isFalse();
    }

    @Test
    void lookupComparesTheTokensAndTheParentNotOnlyTheHash() {
        BlockAllocator a = new BlockAllocator(2, BS);
        int b = a.allocate(1).get(0);
        a.register(b, 99L, 3L, toks(1, 2, 3, 4), 0);
        assertThat(a.lookup(99L, 3L, toks(0, 1, 2, 3, 4), 1))
                .as("tokens at an offset")
                .isEqualTo(b);
        assertThat(a.lookup(99L, 3L, toks(1, 2, 3, 5), 0))
                .as("a colliding hash, other tokens")
                .isEqualTo(-1);
        assertThat(a.lookup(99L, 4L, toks(1, 2, 3, 4), 0)).as("other parent").isEqualTo(-1);
        assertThat(a.lookup(98L, 3L, toks(1, 2, 3, 4), 0)).isEqualTo(-1);
    }

    /** Cases: blocks registered and released in a given order; which ones survive {@code allocate(k)}. */
    static Stream<Arguments> eviction() {
        return Stream.of(
                // 4 blocks: 0..2 registered, released one table at a time in this order; block 3 plain and free.
                Arguments.of(
                        "plain free blocks go first", List.of(List.of(0), List.of(1), List.of(2)), 1, List.of(0, 1, 2)),
                Arguments.of(
                        "then least recently released", List.of(List.of(0), List.of(1), List.of(2)), 2, List.of(1, 2)),
                Arguments.of(
                        "order of release, not of index", List.of(List.of(2), List.of(0), List.of(1)), 3, List.of(1)),
                Arguments.of("a table is released tail first", List.of(List.of(0, 1, 2)), 3, List.of(0)),
                Arguments.of("everything", List.of(List.of(0, 1, 2)), 4, List.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("eviction")
    void evictionIsLeastRecentlyReleasedFirstAndTailFirstWithinATable(
            String name, List<List<Integer>> releases, int allocate, List<Integer> survivors) {
        BlockAllocator a = new BlockAllocator(4, BS);
        List<Integer> all = a.allocate(4);
        assertThat(all).containsExactly(0, 1, 2, 3);
        for (int b = 0; b < 3; b++) {
            a.register(b, 100L + b, 0L, toks(b, b, b, b), 0);
        }
        a.release(new ArrayList<>(List.of(3)));
        for (List<Integer> t : releases) {
            a.release(new ArrayList<>(t));
        }
        assertThat(a.cachedBlocks()).isEqualTo(3);
        a.allocate(allocate);
        List<Integer> left = new ArrayList<>();
        for (int b = 0; b < 3; b++) {
            if (a.lookup(100L + b, 0L, toks(b, b, b, b), 0) == b) {
                left.add(b);
            }
        }
        assertThat(left).isEqualTo(survivors);
        assertThat(a.cachedBlocks()).isEqualTo(survivors.size());
        assertThat(a.evictions()).isEqualTo(3 - survivors.size());
    }

    @Test
    void misuseIsRefused() {
        BlockAllocator a = new BlockAllocator(2, BS);
        List<Integer> t = new ArrayList<>(a.allocate(1));
        List<Integer> copy = new ArrayList<>(t);
        a.release(t);
        assertThatThrownBy(() -> a.release(copy)).hasMessageContaining("released more often than taken");
        assertThatThrownBy(() -> a.register(copy.get(0), 1L, 0L, toks(1, 2, 3, 4), 0))
                .hasMessageContaining("registered while free");
        assertThatThrownBy(() -> a.take(copy.get(0))).hasMessageContaining("not cached");
        assertThatThrownBy(() -> a.refCount(5)).hasMessageContaining("not a block");
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "{0} tokens keep {1} blocks")
    @org.junit.jupiter.params.provider.CsvSource({"20,5", "17,5", "16,4", "13,4", "1,1", "0,0", "24,6"})
    void truncateGivesBackTheBlocksPastTheTokensLastFirst(long tokens, int kept) {
        BlockAllocator a = new BlockAllocator(8, BS);
        List<Integer> t = new ArrayList<>();
        assertThat(a.ensure(t, 24)).isTrue(); // 6 blocks
        List<Integer> before = new ArrayList<>(t);
        a.truncate(t, tokens);
        assertThat(t).containsExactlyElementsOf(before.subList(0, kept));
        assertThat(a.freeBlocks()).isEqualTo(8 - kept);
        // the freed blocks come back first, the last freed (the earliest dropped) at the head of the free list
        if (kept < 6) {
            assertThat(a.allocate(1)).containsExactly(before.get(kept));
        }
    }

    @Test
    void truncateRefusesToDropACachedBlock() {
        BlockAllocator a = new BlockAllocator(4, BS);
        List<Integer> t = new ArrayList<>();
        a.ensure(t, 8);
        a.register(t.get(1), 5L, 0L, toks(1, 2, 3, 4), 0);
        assertThatThrownBy(() -> a.truncate(t, 4)).hasMessageContaining("is cached");
    }
}
