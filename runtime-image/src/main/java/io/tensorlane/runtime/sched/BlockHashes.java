package io.tensorlane.runtime.sched;

import java.util.Arrays;

/**
 * The chain of content hashes of one sequence's full KV blocks, computed lazily as its tokens fill blocks: block
 * {@code i}'s hash mixes block {@code i - 1}'s hash (for block 0: the salt) with block {@code i}'s token ids, so equal
 * hashes mean equal prefixes up to and including that block (up to a 64-bit collision of the chain; the allocator also
 * compares the block's own token ids and its parent's hash before it hands a cached block out). The salt stands for
 * everything besides the tokens that changes the KV: the model and its weights, the KV dtype, later a LoRA adapter.
 */
final class BlockHashes {
    private final long salt;
    private long[] hashes = new long[8];
    private int n;

    BlockHashes(long salt) {
        this.salt = salt;
    }

    /** The hash of full block {@code block} of {@code tokens} (the caller makes sure the block is full). */
    long get(int block, int[] tokens, int blockSize) {
        while (n <= block) {
            if (n == hashes.length) {
                hashes = Arrays.copyOf(hashes, n * 2);
            }
            hashes[n] = hash(n == 0 ? salt : hashes[n - 1], tokens, n * blockSize, blockSize);
            n++;
        }
        return hashes[block];
    }

    /** The hash that block {@code block}'s parent contributes: the previous block's hash, or the salt for block 0. */
    long parent(int block, int[] tokens, int blockSize) {
        return block == 0 ? salt : get(block - 1, tokens, blockSize);
    }

    /** One block's hash from its parent's and its {@code len} token ids from {@code from}. */
    static long hash(long parent, int[] tokens, int from, int len) {
        long h = mix(parent ^ 0x9E3779B97F4A7C15L) + len;
        for (int i = 0; i < len; i++) {
            h = Long.rotateLeft(h ^ ((tokens[from + i] + 1L) * 0xC2B2AE3D27D4EB4FL), 31) * 0x9E3779B97F4A7C15L;
        }
        return mix(h);
    }

    /** A salt from the text that names what the KV depends on besides the tokens (the model, its dtype). */
    static long salt(String identity) {
        long h = 0x84222325CBF29CE4L;
        for (int i = 0; i < identity.length(); i++) {
            h = (h ^ identity.charAt(i)) * 0x100000001B3L;
        }
        return mix(h);
    }

    /** MurmurHash3's 64-bit finalizer. */
    private static long mix(long z) {
        z = (z ^ (z >>> 33)) * 0xFF51AFD7ED558CCDL;
        z = (z ^ (z >>> 33)) * 0xC4CEB9FE1A85EC53L;
        return z ^ (z >>> 33);
    }
}
