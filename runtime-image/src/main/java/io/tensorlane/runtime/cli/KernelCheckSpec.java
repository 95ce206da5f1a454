package io.tensorlane.runtime.cli;

import static io.tensorlane.runtime.cli.KernelCheckMath.floats;
import static io.tensorlane.runtime.cli.KernelCheckMath.ints;
import static io.tensorlane.runtime.cli.KernelCheckMath.toInts;

import io.tensorlane.runtime.llm.SpecKernels;
import io.tensorlane.runtime.sched.SpecRule;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.SplittableRandom;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s speculative-decoding cases (tl_spec_verify_f32, the rejection-sampling verify): thousands of
 * sequences verify guesses drawn from q against fixed target rows p. Checked: every sequence's count of kept guesses
 * equals the host rule's with the kernel's uniforms (ported here, the comparison in fp32 as the kernel's); every
 * token drawn has positive weight; the first emitted token follows p_0 and, after a kept first guess, the second
 * follows p_1 (chi-square at p = 1e-4, what {@link SpecRule} proves); the same seeds give the same verdicts; rows are
 * read only up to {@code vocab} (NaN padding to the stride). Edge cases: q = p keeps every guess; a guess of an id
 * with p = 0 is always rejected and never drawn.
 */
final class KernelCheckSpec {
    private final SpecKernels k;
    private final CUstream stream;
    private final SplittableRandom rnd;
    private final Runnable sync;

    KernelCheckSpec(SpecKernels k, CUstream stream, SplittableRandom rnd, Runnable sync) {
        this.k = k;
        this.stream = stream;
        this.rnd = rnd;
        this.sync = sync;
    }

    /** The kernel's outputs for {@code seqs} sequences sharing p's k + 1 rows, each with its k rows of q. */
    private record Run(int[] accepted, int[] next) {}

    private Run launch(float[] p, float[] q, int[] draft, int kk, int vocab, int stride, int seqs, long[] seeds) {
        int[] kOf = new int[seqs];
        int[] pRow = new int[seqs];
        int[] qRow = new int[seqs];
        int[] counter = new int[seqs];
        for (int s = 0; s < seqs; s++) {
            kOf[s] = kk;
            qRow[s] = s * kk;
            counter[s] = 7 + s % 5;
        }
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dP = a.upload(floats(p));
            long dQ = a.upload(floats(q));
            long dD = a.upload(ints(draft.length == 0 ? new int[1] : draft));
            long dK = a.upload(ints(kOf));
            long dPr = a.upload(ints(pRow));
            long dQr = a.upload(ints(qRow));
            long dSeed = a.upload(longs(seeds));
            long dC = a.upload(ints(counter));
            long dA = a.poisoned(4L * seqs);
            long dN = a.poisoned(4L * seqs);
            k.verify(dP, dQ, stride, dD, dK, dPr, dQr, dSeed, dC, vocab, seqs, dA, dN, stream);
            sync.run();
            return new Run(toInts(a.download(dA, 4 * seqs)), toInts(a.download(dN, 4 * seqs)));
        }
    }

    /**
     * {@code seqs} sequences of {@code kk} guesses over {@code vocab} ids; p and q random (q with some zero ids). The
     * chi-square statistics against their critical values come back in the outcome; a failure names what failed.
     */
    KernelCheckSampling.Outcome distribution(int vocab, int kk, int seqs) {
        int stride = vocab + 5;
        double[][] pr = new double[kk + 1][];
        double[][] qr = new double[kk][];
        float[] p = new float[(kk + 1) * stride];
        Arrays.fill(p, Float.NaN); // padding past vocab: never read
        for (int i = 0; i <= kk; i++) {
            pr[i] = simplex(vocab, false);
            for (int v = 0; v < vocab; v++) {
                p[i * stride + v] = (float) pr[i][v];
            }
        }
        for (int i = 0; i < kk; i++) {
            qr[i] = simplex(vocab, i % 2 == 1);
        }
        float[] q = new float[seqs * kk * stride];
        Arrays.fill(q, Float.NaN);
        int[] draft = new int[seqs * kk];
        long[] seeds = new long[seqs];
        for (int s = 0; s < seqs; s++) {
            seeds[s] = rnd.nextLong();
            for (int i = 0; i < kk; i++) {
                for (int v = 0; v < vocab; v++) {
                    q[(s * kk + i) * stride + v] = (float) qr[i][v];
                }
                draft[s * kk + i] = SpecRule.inverseCdf(qr[i], rnd.nextDouble());
            }
        }
        Run r = launch(p, q, draft, kk, vocab, stride, seqs, seeds);
        Run again = launch(p, q, draft, kk, vocab, stride, seqs, seeds);
        if (!Arrays.equals(r.accepted(), again.accepted()) || !Arrays.equals(r.next(), again.next())) {
            return fail("the same seeds gave other verdicts");
        }
        long[] first = new long[vocab];
        long[] second = new long[vocab];
        int mismatches = 0;
        for (int s = 0; s < seqs; s++) {
            int a = r.accepted()[s];
            int n = r.next()[s];
            if (a < 0 || a > kk || n < 0 || n >= vocab) {
                return fail("sequence " + s + ": accepted " + a + ", next " + n);
            }
            int host = hostAccepted(p, q, draft, s, kk, stride, seeds[s], 7 + s % 5);
            if (host != a) {
                mismatches++;
            }
            // the weight of the drawn id: the residual at a rejection (p itself where the residual is all zero)
            double w = a == kk ? pr[kk][n] : residualMass(pr[a], qr[a]) > 0 ? pr[a][n] - qr[a][n] : pr[a][n];
            if (!(w > 0)) {
                return fail("sequence " + s + " drew id " + n + " of weight 0 after " + a + " kept guesses");
            }
            first[a >= 1 ? draft[s * kk] : n]++;
            if (a >= 1 && kk >= 2) {
                second[a >= 2 ? draft[s * kk + 1] : n]++;
            }
        }
        if (mismatches > 0) {
            return fail(mismatches + " of " + seqs + " sequences kept another count of guesses than the host rule");
        }
        double[] c1 = KernelCheckSampling.chiSquare(first, pr[0]);
        double[] c2 = KernelCheckSampling.chiSquare(second, pr[1]);
        String f = c1[0] > c1[1]
                ? "first token: chi-square " + c1[0] + " > " + c1[1]
                : c2[0] > c2[1] ? "second token: chi-square " + c2[0] + " > " + c2[1] : "";
        return new KernelCheckSampling.Outcome(f, c1[0], c1[1]); // the first token's; the second's checked alike
    }

    /** q = p: every guess kept; a guess of an id with p = 0 (q's point mass): always rejected, that id never drawn. */
    String edgeCases(int vocab, int kk, int seqs) {
        int stride = vocab;
        float[] p = new float[(kk + 1) * stride];
        double[] row = simplex(vocab, false);
        for (int i = 0; i <= kk; i++) {
            for (int v = 0; v < vocab; v++) {
                p[i * stride + v] = (float) row[v];
            }
        }
        float[] q = new float[seqs * kk * stride];
        int[] draft = new int[seqs * kk];
        long[] seeds = new long[seqs];
        for (int s = 0; s < seqs; s++) {
            seeds[s] = rnd.nextLong();
            System.arraycopy(p, 0, q, s * kk * stride, kk * stride);
            for (int i = 0; i < kk; i++) {
                draft[s * kk + i] = SpecRule.inverseCdf(row, rnd.nextDouble());
            }
        }
        Run same = launch(p, q, draft, kk, vocab, stride, seqs, seeds);
        for (int s = 0; s < seqs; s++) {
            if (same.accepted()[s] != kk || same.next()[s] < 0 || same.next()[s] >= vocab) {
                return "q = p: sequence " + s + " kept " + same.accepted()[s] + " of " + kk + ", next "
                        + same.next()[s];
            }
        }
        int banned = 3;
        for (int i = 0; i <= kk; i++) {
            p[i * stride + banned] = 0f; // rows need not sum to 1 exactly for this case
        }
        Arrays.fill(q, 0f);
        for (int s = 0; s < seqs; s++) {
            for (int i = 0; i < kk; i++) {
                q[(s * kk + i) * stride + banned] = 1f;
                draft[s * kk + i] = banned;
            }
        }
        Run never = launch(p, q, draft, kk, vocab, stride, seqs, seeds);
        for (int s = 0; s < seqs; s++) {
            if (never.accepted()[s] != 0 || never.next()[s] == banned || never.next()[s] < 0) {
                return "p(guess) = 0: sequence " + s + " kept " + never.accepted()[s] + ", next " + never.next()[s];
            }
        }
        return "";
    }

    /** The kernel's acceptance for sequence s: its uniforms (splitmix64 as tl_spec.cuh) and its fp32 comparison. */
    static int hostAccepted(float[] p, float[] q, int[] draft, int s, int kk, int stride, long seed, int counter) {
        long base = mix64(seed ^ ((counter & 0xFFFFFFFFL) * 0xD1B54A32D192ED03L));
        int a = 0;
        for (; a < kk; a++) {
            int d = draft[s * kk + a];
            float pd = p[a * stride + d];
            float qd = q[(s * kk + a) * stride + d];
            float u = unit(mix64(base + a));
            if (!(u * qd < pd)) {
                break;
            }
        }
        return a;
    }

    static long mix64(long z) {
        z += 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    static float unit(long h) {
        return ((float) (h >>> 41) + 0.5f) * 1.1920928955078125e-7f;
    }

    private double[] simplex(int v, boolean sparse) {
        double[] x = new double[v];
        double s = 0;
        for (int i = 0; i < v; i++) {
            x[i] = sparse && i % 3 == 0 ? 0 : 0.05 + rnd.nextDouble();
            s += x[i];
        }
        for (int i = 0; i < v; i++) {
            x[i] /= s;
        }
        return x;
    }

    private static double residualMass(double[] p, double[] q) {
        double s = 0;
        for (int i = 0; i < p.length; i++) {
            s += Math.max(0, p[i] - q[i]);
        }
        return s;
    }

    private static KernelCheckSampling.Outcome fail(String why) {
        return new KernelCheckSampling.Outcome(why, Double.NaN, Double.NaN);
    }

    static byte[] longs(long[] v) {
        ByteBuffer b = ByteBuffer.allocate(8 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (long x : v) {
            b.putLong(x);
        }
        return b.array();
    }
}
