package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Function;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The allocator's self-audit against the block tables: consistent states pass; each way the bookkeeping can go wrong
 * through the allocator's own API (a table released twice, a reference nobody holds, a sequence holding a cached block
 * of other tokens or of another prefix) is reported, naming the block.
 */
class BlockAuditTest {
    static final int BS = 4;
    static final long SALT = BlockHashes.salt("audit-test");

    /** An allocator of 8 blocks and the holders of one scenario. */
    record Scene(BlockAllocator blocks, List<BlockAudit.Holder> holders) {}

    static int[] tokens(int n, int salt) {
        return IntStream.range(0, n).map(i -> (i * 7 + salt * 13 + 1) % 50).toArray();
    }

    /** A holder of {@code tokens} whose first {@code computed} tokens are in {@code table}. */
    static BlockAudit.Holder holder(String id, List<Integer> table, int[] tokens, int computed) {
        return new BlockAudit.Holder(id, table, tokens, computed, new BlockHashes(SALT));
    }

    /** Registers the full computed blocks of {@code h}, as the prefix cache does after a step. */
    static void register(BlockAllocator a, BlockAudit.Holder h) {
        for (int i = 0; i < h.computed() / BS; i++) {
            a.register(
                    h.table().get(i),
                    h.hashes().get(i, h.tokens(), BS),
                    h.hashes().parent(i, h.tokens(), BS),
                    h.tokens(),
                    i * BS);
        }
    }

    /** A sequence of {@code n} computed tokens with its blocks allocated and registered. */
    static BlockAudit.Holder computed(BlockAllocator a, String id, int[] tokens, int n) {
        List<Integer> table = new ArrayList<>();
        assertThat(a.ensure(table, n)).isTrue();
        BlockAudit.Holder h = holder(id, table, tokens, n);
        register(a, h);
        return h;
    }

    /** A holder that takes {@code from}'s first {@code k} cached blocks, as admission does. */
    static BlockAudit.Holder sharing(BlockAllocator a, String id, BlockAudit.Holder from, int[] tokens, int k) {
        List<Integer> table = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            a.take(from.table().get(i));
            table.add(from.table().get(i));
        }
        return holder(id, table, tokens, k * BS);
    }

    static Arguments scene(String name, Function<BlockAllocator, List<BlockAudit.Holder>> build, String problem) {
        return Arguments.of(name, build, problem);
    }

    static Stream<Arguments> scenes() {
        int[] p = tokens(12, 1);
        int[] q = tokens(12, 2);
        return Stream.of(
                scene("nothing allocated", a -> List.of(), null),
                scene("one sequence, blocks registered", a -> List.of(computed(a, "a", p, 10)), null),
                scene(
                        "two sequences share a cached prefix",
                        a -> {
                            BlockAudit.Holder x = computed(a, "a", p, 10);
                            return List.of(x, sharing(a, "b", x, p, 2));
                        },
                        null),
                scene(
                        "released: cached blocks evictable, nobody holds anything",
                        a -> {
                            BlockAudit.Holder x = computed(a, "a", p, 12);
                            a.release(x.table());
                            return List.of();
                        },
                        null),
                scene(
                        "a block evicted and reused by another sequence",
                        a -> {
                            a.release(computed(a, "a", p, 12).table());
                            return List.of(computed(a, "b", q, 12), computed(a, "c", tokens(8, 3), 8));
                        },
                        null),
                scene(
                        "freed while read: a table released while its sequence still reads it",
                        a -> {
                            BlockAudit.Holder x = computed(a, "a", p, 10);
                            a.release(new ArrayList<>(x.table()));
                            return List.of(x);
                        },
                        "has 0 references, 1 tables hold it (freed while read)"),
                scene(
                        "leaked: blocks allocated, no table holds them",
                        a -> {
                            a.allocate(2);
                            return List.of();
                        },
                        "has 1 references, 0 tables hold it (leaked)"),
                scene(
                        "a reference taken without a table",
                        a -> {
                            BlockAudit.Holder x = computed(a, "a", p, 10);
                            a.take(x.table().get(0));
                            return List.of(x);
                        },
                        "has 2 references, 1 tables hold it"),
                scene(
                        "a block twice in one table",
                        a -> {
                            BlockAudit.Holder x = computed(a, "a", p, 4);
                            a.take(x.table().get(0));
                            x.table().add(x.table().get(0));
                            return List.of(x);
                        },
                        "holds block 0 twice"),
                scene(
                        "a sequence reads a cached block of other tokens",
                        a -> {
                            BlockAudit.Holder x = computed(a, "a", p, 8);
                            return List.of(x, sharing(a, "b", x, q, 1));
                        },
                        "b reads block 0 at index 0, which holds other tokens"),
                scene(
                        "the same tokens after another prefix",
                        a -> {
                            BlockAudit.Holder x = computed(a, "a", p, 8);
                            int[] r = p.clone();
                            r[0] = p[0] + 1; // block 0 differs, block 1 holds the same ids
                            BlockAudit.Holder y = holder("b", new ArrayList<>(), r, 8);
                            a.ensure(y.table(), 4);
                            a.take(x.table().get(1));
                            y.table().add(x.table().get(1));
                            return List.of(x, y);
                        },
                        "b reads block 1 at index 1, registered under another prefix's hash"),
                scene(
                        "a cached block past what its sequence computed",
                        a -> {
                            BlockAudit.Holder x = computed(a, "a", p, 8);
                            return List.of(
                                    x, holder("b", sharing(a, "b", x, p, 2).table(), p, 4));
                        },
                        "b holds registered block 1 at index 1 but has computed only 4 tokens"),
                scene(
                        "a table names a block outside the cache",
                        a -> List.of(holder("a", List.of(99), p, 0)),
                        "a holds block 99, not a block of this cache (0..7)"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenes")
    void theAuditPassesConsistentStatesAndNamesEveryInconsistency(
            String name, Function<BlockAllocator, List<BlockAudit.Holder>> build, String problem) {
        BlockAllocator a = new BlockAllocator(8, BS);
        List<String> found = BlockAudit.check(a, build.apply(a));
        if (problem == null) {
            assertThat(found).as(name).isEmpty();
        } else {
            assertThat(found).as(name).anySatisfy(f -> assertThat(f).contains(problem));
        }
    }

    @Test
    void theMessageListsTheFirstProblemsAndCountsTheRest() {
        List<String> many = new ArrayList<>(Collections.nCopies(BlockAudit.MAX_LISTED + 3, "x"));
        many.set(0, "first");
        String m = BlockAudit.describe(many);
        assertThat(m).startsWith("KV block audit failed: first; x").endsWith("; and 3 more");
        assertThat(BlockAudit.describe(List.of("one"))).isEqualTo("KV block audit failed: one");
    }
}
