package io.tensorlane.runtime.llm;

import java.util.Arrays;

/**
 * Which attention kernel serves which token of a step. Runs of at least {@value #MIN_RUN} consecutive tokens of one
 * sequence at consecutive positions (prefill chunks) are cut into query tiles of at most {@value #TILE_ROWS} rows for
 * the tensor-core kernel ({@code tiles}: pairs (first token, rows)); every other token (decode tokens, short chunks) is
 * listed in {@code rest} for the split-key kernel. With no tiles, {@code rest} is empty and the split-key kernel takes
 * every token in order (as captured decode graphs do).
 */
public record AttentionPlan(int[] tiles, int[] rest) {
    /** Query rows of one tile of the tensor-core kernel (4 warps x 16 rows). */
    public static final int TILE_ROWS = 64;
    /** Shortest run that goes to the tensor-core kernel (one warp's 16 rows). */
    public static final int MIN_RUN = 16;
    /** Every token to the split-key kernel. */
    public static final AttentionPlan NONE = new AttentionPlan(new int[0], new int[0]);

    /** Head dims the tensor-core kernel is built for. */
    public static boolean tiledHeadDim(int hd) {
        return hd == 64 || hd == 128;
    }

    public int numTiles() {
        return tiles.length / 2;
    }

    /** Most tiles a step of {@code maxTokens} tokens can have (each run of r >= 16 tokens makes ceil(r / 64) <= r / 16). */
    public static int maxTiles(int maxTokens) {
        return maxTokens / MIN_RUN;
    }

    /** The plan of a step whose token t belongs to sequence {@code seq[t]} at position {@code pos[t]} (n tokens). */
    public static AttentionPlan of(int[] seq, int[] pos, int n, int headDim) {
        if (!tiledHeadDim(headDim) || n < MIN_RUN) {
            return NONE;
        }
        int[] tiles = new int[2 * maxTiles(n)];
        int[] rest = new int[n];
        int nt = 0;
        int nr = 0;
        int t = 0;
        while (t < n) {
            int end = t + 1;
            while (end < n && seq[end] == seq[t] && pos[end] == pos[end - 1] + 1) {
                end++;
            }
            if (end - t >= MIN_RUN) {
                for (int s = t; s < end; s += TILE_ROWS) {
                    tiles[nt++] = s;
                    tiles[nt++] = Math.min(TILE_ROWS, end - s);
                }
            } else {
                for (int s = t; s < end; s++) {
                    rest[nr++] = s;
                }
            }
            t = end;
        }
        if (nt == 0) {
            return NONE;
        }
        return new AttentionPlan(Arrays.copyOf(tiles, nt), Arrays.copyOf(rest, nr));
    }
}
