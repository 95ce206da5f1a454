package io.tensorlane.runtime.cli;

import static io.tensorlane.runtime.cli.KernelCheckMath.ints;
import static io.tensorlane.runtime.cli.KernelCheckMath.toInts;

import io.tensorlane.runtime.llm.ModelKernels;
import java.util.Arrays;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s cases of tl_chain_advance_i32 (chained greedy draft steps): from a step's greedy ids, the next
 * one-token step's inputs. Checked against the host rule (StepBatch's: slot = table[position / block] * block +
 * position % block) at a block's inside and its edge, from a chunk's last logits row and from a one-token step, and a
 * chain's last call, which writes only its id: every other int of every buffer is left as it was.
 */
final class KernelCheckChain {
    private static final int SENTINEL = -777;

    private final ModelKernels k;
    private final CUstream stream;
    private final Runnable sync;

    KernelCheckChain(ModelKernels k, CUstream stream, Runnable sync) {
        this.k = k;
        this.stream = stream;
        this.sync = sync;
    }

    /**
     * One launch: the greedy ids {@code outIds}, the step's {@code positions}, row 0's block table {@code table} of
     * {@code block} tokens a block; {@code idsIndex}, {@code posIndex}, step {@code j}, {@code last}. "" when every
     * buffer holds what the host rule says, else what differs.
     */
    String check(
            int[] outIds, int idsIndex, int[] positions, int posIndex, int[] table, int block, int j, boolean last) {
        int n = positions.length;
        int[] ids = filled(n, 11);
        int[] tokenRow = filled(n, 5);
        int[] logitTokens = filled(n, 3);
        int[] slots = filled(n, 9);
        int[] chainOut = filled(j + 3, SENTINEL);
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dOut = a.upload(ints(outIds));
            long dIds = a.upload(ints(ids));
            long dPos = a.upload(ints(positions));
            long dSlots = a.upload(ints(slots));
            long dRow = a.upload(ints(tokenRow));
            long dLogit = a.upload(ints(logitTokens));
            long dTable = a.upload(ints(table));
            long dChain = a.upload(ints(chainOut));
            k.sampler()
                    .chainAdvance(
                            dOut, idsIndex, posIndex, dIds, dPos, dSlots, dRow, dLogit, dTable, block, dChain, j, last,
                            stream);
            sync.run();
            int id = outIds[idsIndex];
            int[] wantChain = chainOut.clone();
            wantChain[j] = id;
            int[] wantIds = ids.clone();
            int[] wantPos = positions.clone();
            int[] wantSlots = slots.clone();
            int[] wantRow = tokenRow.clone();
            int[] wantLogit = logitTokens.clone();
            if (!last) {
                int pos = positions[posIndex] + 1;
                wantIds[0] = id;
                wantPos[0] = pos;
                wantSlots[0] = table[pos / block] * block + pos % block;
                wantRow[0] = 0;
                wantLogit[0] = 0;
            }
            StringBuilder bad = new StringBuilder();
            differs(bad, "chain_out", wantChain, toInts(a.download(dChain, 4 * chainOut.length)));
            differs(bad, "ids", wantIds, toInts(a.download(dIds, 4 * n)));
            differs(bad, "positions", wantPos, toInts(a.download(dPos, 4 * n)));
            differs(bad, "slots", wantSlots, toInts(a.download(dSlots, 4 * n)));
            differs(bad, "token_row", wantRow, toInts(a.download(dRow, 4 * n)));
            differs(bad, "logit_tokens", wantLogit, toInts(a.download(dLogit, 4 * n)));
            return bad.toString();
        }
    }

    private static int[] filled(int n, int v) {
        int[] a = new int[n];
        Arrays.fill(a, v);
        return a;
    }

    private static void differs(StringBuilder bad, String name, int[] want, int[] got) {
        if (!Arrays.equals(want, got)) {
            bad.append(bad.isEmpty() ? "" : "; ")
                    .append(name)
                    .append(": want ")
                    .append(Arrays.toString(want))
                    .append(", got ")
                    .append(Arrays.toString(got));
        }
    }
}
