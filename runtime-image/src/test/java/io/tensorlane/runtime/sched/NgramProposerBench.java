package io.tensorlane.runtime.sched;

import java.util.Random;

/**
 * Prints (asserts nothing) the time of one n-gram proposal at a 32k context, the whole-sequence scan ({@link
 * NgramScan}) against the index ({@link NgramIndex}: one append and one proposal per step, as decoding does), for a
 * sequence with no earlier match (the scan's worst case: every size scanned to the start) and a repetitive one. Run:
 * {@code java -cp runtime-image/target/classes:runtime-image/target/test-classes
 * io.tensorlane.runtime.sched.NgramProposerBench}.
 */
public final class NgramProposerBench {
    private NgramProposerBench() {}

    public static void main(String[] args) {
        int context = args.length > 0 ? Integer.parseInt(args[0]) : 32768;
        int n = 3;
        int k = 4;
        for (String kind :
                new String[] {"no match (distinct tokens)", "repetitive (period 500, 2% edits, vocab 32000)"}) {
            for (int round = 0; round < 4; round++) { // the first rounds warm the JIT
                Random rnd = new Random(round);
                int steps = 2000;
                int[] seq = new int[context + steps];
                for (int i = 0; i < seq.length; i++) {
                    boolean fresh = kind.startsWith("no") || i < 500 || rnd.nextInt(50) == 0;
                    seq[i] = fresh ? (kind.startsWith("no") ? i : rnd.nextInt(32000)) : seq[i - 500];
                }
                int[] out = new int[k];
                long sink = 0;
                long t0 = System.nanoTime();
                for (int s = 0; s < steps; s++) {
                    sink += NgramScan.propose(seq, context + s, n, k, out);
                }
                long scan = (System.nanoTime() - t0) / steps;
                long t1 = System.nanoTime();
                NgramIndex index = new NgramIndex(n, seq.length);
                sink += index.propose(seq, context, k, out);
                long build = System.nanoTime() - t1;
                long worst = 0;
                long t2 = System.nanoTime();
                for (int s = 1; s < steps; s++) {
                    long a = System.nanoTime();
                    sink += index.propose(seq, context + s, k, out);
                    worst = Math.max(worst, System.nanoTime() - a);
                }
                long step = (System.nanoTime() - t2) / (steps - 1);
                System.out.printf(
                        "%s, context %d, n %d, k %d: scan %,d ns/proposal; index %,d ns/step (append + proposal,"
                                + " slowest %,d ns), first build %,d us, %,d KiB (sink %d)%n",
                        kind, context, n, k, scan, step, worst, build / 1000, index.footprintBytes() / 1024, sink);
            }
        }
    }
}
