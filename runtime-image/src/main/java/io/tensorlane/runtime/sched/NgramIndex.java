package io.tensorlane.runtime.sched;

import java.util.Arrays;

/**
 * One sequence's n-gram index for {@link NgramProposer}: for every end position {@code e} of the sequence and every
 * size {@code s <= n}, the latest earlier end {@code e' < e} of the same {@code s} tokens ({@code tokens[e' - s, e')}
 * equal to {@code tokens[e - s, e)}), found when the token before {@code e} is appended. A proposal at length
 * {@code L} reads that for {@code e = L}, sizes {@code min(n, L - 1)} down to 1, and copies what followed the first
 * hit: O(n + k), and exactly the guess of scanning the whole sequence for the latest earlier occurrence of the longest
 * suffix (the test oracle {@code NgramScan}). Appending a token costs n expected-O(1) hash probes (one linear-probing
 * table per size; the hash is keyed by random per-index constants, so a prompt cannot be crafted to crowd a probe run,
 * and a crowded run would cost time only: a hit is confirmed by comparing the s tokens); a table that doubles rehashes
 * its entries (amortized O(n) per token; one such step at 32k distinct n-grams takes a few ms). A sequence's prompt is
 * taken in {@link #PREPARE_TOKENS} tokens per prefill step ({@link #prepare}), the rest at its first proposal (all of
 * a 32k prompt at once would take a few ms). Cutting the sequence back restores the tables
 * from the same links, O(n) per token removed.
 *
 * <p>Memory, per token of the sequence: its copy of the token (4 bytes), one link per size (4n bytes), and per size at
 * most one table slot of 4 bytes per distinct n-gram at a load of 1/4..1/2 (8..16 bytes): at most about
 * {@code (4 + 20 n)} bytes per token. Arrays grow by doubling but never past {@code capacity} (a sequence's prompt plus
 * {@code max_tokens}, so at most the max model length), hence below {@code (4 + 20 n) * capacity + 72 n} bytes
 * ({@link #footprintBytes}): for the default n = 3 at a 32k context about 2 MiB per speculating sequence, for n = 16
 * at 128k at most 41 MiB. Scheduler thread only.
 */
final class NgramIndex implements Proposer.Session {
    private static final int MIN_TABLE = 16;
    private static final int FIRST_ARRAY = 64;
    /** Prompt tokens {@link #prepare} takes in per call: about a millisecond at n = 3. */
    static final int PREPARE_TOKENS = 8192;

    private final int n;
    private final int capacity;
    /** The hash's start value and (odd) multiplier, random per index. */
    private final long seed;

    private final long mul;
    private int[] toks;
    /**
     * {@code prev[e * n + s - 1]}: the latest end before {@code e} of the s tokens ending at {@code e}, 0 when none
     * (ends are at least s, so 0 is never one); defined for {@code s <= e <= length}.
     */
    private int[] prev;
    /** Per size s - 1: linear-probing slots holding, for every distinct s-gram, its latest end; 0 is empty. */
    private final int[][] tables;

    private final int[] counts;
    private int length;

    NgramIndex(int n, int capacity) {
        this(n, capacity, java.util.concurrent.ThreadLocalRandom.current().nextLong());
    }

    /** With the hash keyed by {@code seed} (tests: a failure reproduces). */
    NgramIndex(int n, int capacity, long seed) {
        if (n < 1 || n > SpeculativeConfig.MAX_N) {
            throw new IllegalArgumentException("n-gram size must be 1.." + SpeculativeConfig.MAX_N + ", got " + n);
        }
        if (capacity < 0) {
            throw new IllegalArgumentException("n-gram index capacity must be >= 0, got " + capacity);
        }
        this.n = n;
        this.capacity = capacity;
        java.util.SplittableRandom keys = new java.util.SplittableRandom(seed);
        this.seed = keys.nextLong();
        this.mul = keys.nextLong() | 1;
        int first = Math.min(capacity, FIRST_ARRAY);
        this.toks = new int[first];
        this.prev = new int[(first + 1) * n];
        this.tables = new int[n][];
        for (int i = 0; i < n; i++) {
            tables[i] = new int[MIN_TABLE];
        }
        this.counts = new int[n];
    }

    /** Tokens indexed. */
    int length() {
        return length;
    }

    /**
     * Catches up with {@code tokens[0, len)} (cut back to {@code len} when shorter than what is indexed, else the new
     * tokens appended; see {@link Proposer.Session#propose} for what a caller may change), then {@link #propose(int,
     * int[])}.
     */
    @Override
    public int propose(int[] tokens, int len, int k, int[] out) {
        catchUp(tokens, len, len);
        return propose(k, out);
    }

    /** Takes in at most {@link #PREPARE_TOKENS} more of {@code tokens[0, len)} (a prefilling sequence's prompt). */
    @Override
    public void prepare(int[] tokens, int len) {
        catchUp(tokens, len, Math.min(len, length + PREPARE_TOKENS));
    }

    /** Cut back to {@code len} when shorter than what is indexed, else {@code tokens[length, to)} appended. */
    private void catchUp(int[] tokens, int len, int to) {
        if (len < length) {
            truncate(len);
            return;
        }
        if (len > capacity) {
            throw new IllegalArgumentException(
                    "sequence of " + len + " tokens past the n-gram index's capacity " + capacity);
        }
        reserve(to);
        while (length < to) {
            append(tokens[length]);
        }
    }

    /** The up to {@code k} tokens that followed the latest earlier occurrence of the longest suffix (n..1 tokens). */
    int propose(int k, int[] out) {
        if (k <= 0 || length < 2) {
            return 0;
        }
        int base = length * n - 1;
        for (int s = Math.min(n, length - 1); s >= 1; s--) {
            int from = prev[base + s];
            if (from != 0) {
                int count = Math.min(k, length - from);
                System.arraycopy(toks, from, out, 0, count);
                return count;
            }
        }
        return 0;
    }

    /** Appends one token and links the n-grams that end after it to their latest earlier occurrences. */
    void append(int token) {
        if (length >= capacity) {
            throw new IllegalStateException("n-gram index is full (capacity " + capacity + " tokens)");
        }
        reserve(length + 1);
        toks[length++] = token;
        int e = length;
        int base = e * n - 1;
        long acc = seed;
        for (int s = 1, top = Math.min(n, e); s <= top; s++) {
            acc = acc * mul + toks[e - s];
            int[] t = tables[s - 1];
            int mask = t.length - 1;
            int i = slot(acc) & mask;
            int found = 0;
            while (t[i] != 0) {
                if (same(t[i], e, s)) {
                    found = t[i];
                    break;
                }
                i = (i + 1) & mask;
            }
            prev[base + s] = found;
            t[i] = e;
            if (found == 0 && ++counts[s - 1] * 2 > t.length) {
                tables[s - 1] = grow(t, s);
            }
        }
    }

    /** Cuts the sequence back to {@code len} tokens, as if the later ones had never been appended. */
    void truncate(int len) {
        if (len < 0 || len > length) {
            throw new IllegalArgumentException("cannot cut an n-gram index of " + length + " tokens to " + len);
        }
        for (int e = length; e > len; e--) {
            long acc = seed;
            for (int s = 1, top = Math.min(n, e); s <= top; s++) {
                acc = acc * mul + toks[e - s];
                int[] t = tables[s - 1];
                int mask = t.length - 1;
                int i = slot(acc) & mask;
                while (t[i] != e) { // e is its n-gram's latest end: every later one is gone already
                    i = (i + 1) & mask;
                }
                int before = prev[e * n - 1 + s];
                if (before != 0) {
                    t[i] = before;
                } else {
                    delete(t, i, s);
                    counts[s - 1]--;
                }
            }
        }
        Arrays.fill(prev, (len + 1) * n, (length + 1) * n, 0);
        length = len;
    }

    /** Bytes of the arrays held now (tests: the bound in the class comment). */
    long footprintBytes() {
        long ints = toks.length + (long) prev.length + counts.length;
        for (int[] t : tables) {
            ints += t.length;
        }
        return 4 * ints;
    }

    private boolean same(int a, int b, int s) {
        return Arrays.equals(toks, a - s, a, toks, b - s, b);
    }

    private int hash(int e, int s) {
        long acc = seed;
        for (int j = 1; j <= s; j++) {
            acc = acc * mul + toks[e - j];
        }
        return slot(acc);
    }

    private static int slot(long h) {
        h ^= h >>> 33;
        h *= 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        h *= 0xC4CEB9FE1A85EC53L;
        h ^= h >>> 33;
        return (int) h;
    }

    private int[] grow(int[] t, int s) {
        int[] g = new int[t.length * 2];
        int mask = g.length - 1;
        for (int e : t) {
            if (e != 0) {
                int i = hash(e, s) & mask;
                while (g[i] != 0) {
                    i = (i + 1) & mask;
                }
                g[i] = e;
            }
        }
        return g;
    }

    /** Empties slot {@code i} of a linear-probing table, shifting back the entries whose probe ran through it. */
    private void delete(int[] t, int i, int s) {
        int mask = t.length - 1;
        int j = i;
        while (true) {
            j = (j + 1) & mask;
            if (t[j] == 0) {
                break;
            }
            int home = hash(t[j], s) & mask;
            boolean stays = i <= j ? i < home && home <= j : i < home || home <= j;
            if (!stays) {
                t[i] = t[j];
                i = j;
            }
        }
        t[i] = 0;
    }

    private void reserve(int len) {
        if (toks.length < len) {
            int size = Math.min(capacity, Math.max(len, toks.length * 2));
            toks = Arrays.copyOf(toks, size);
            prev = Arrays.copyOf(prev, (size + 1) * n);
        }
    }
}
