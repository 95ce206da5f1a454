package io.tensorlane.runtime.sched;

/**
 * The test oracle of {@link NgramIndex}: the first n-gram proposer, which scans the whole sequence on every call,
 * O(length x n). For the longest suffix of {@code n} tokens down to 1 it looks for the latest earlier occurrence (the
 * start positions before the suffix's own, the most recent first) and copies the up to {@code k} tokens after it.
 */
final class NgramScan {
    private NgramScan() {}

    static int propose(int[] tokens, int length, int n, int k, int[] out) {
        if (k <= 0 || length < 2) {
            return 0;
        }
        for (int size = Math.min(n, length - 1); size >= 1; size--) {
            int suffix = length - size;
            for (int start = suffix - 1; start >= 0; start--) {
                if (matches(tokens, start, suffix, size)) {
                    int from = start + size;
                    int count = Math.min(k, length - from);
                    System.arraycopy(tokens, from, out, 0, count);
                    return count;
                }
            }
        }
        return 0;
    }

    private static boolean matches(int[] t, int a, int b, int size) {
        for (int i = 0; i < size; i++) {
            if (t[a + i] != t[b + i]) {
                return false;
            }
        }
        return true;
    }
}
