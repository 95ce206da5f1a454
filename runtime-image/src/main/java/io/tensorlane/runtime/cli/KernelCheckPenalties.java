package io.tensorlane.runtime.cli;

import static io.tensorlane.runtime.cli.KernelCheckMath.floats;
import static io.tensorlane.runtime.cli.KernelCheckMath.ints;
import static io.tensorlane.runtime.cli.KernelCheckMath.toInts;

import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.sched.PenaltyReference;
import io.tensorlane.runtime.sched.PenaltyState;
import io.tensorlane.runtime.sched.RowPenalty;
import io.tensorlane.runtime.sched.SamplingPenalties;
import io.tensorlane.runtime.sched.SamplingRows;
import io.tensorlane.runtime.text.SamplingParams;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s penalty cases (tl_sample_f32 with presence/frequency/repetition penalties, logit_bias and
 * min_tokens bans, issue #30): a batch mixing penalised, plain and masked rows (and rows both penalised and masked),
 * greedy and seeded. The kernel rewrites a penalised row's logits in place: they must equal the host reference
 * ({@link PenaltyReference}) bit for bit, every other row's logits must be untouched, and every row must draw exactly
 * what the same batch draws when the host applied the penalties beforehand (the sampling after the rewrite is the same
 * arithmetic). Plain and masked rows must draw what they draw in a batch without any penalised row. Greedy rows with a
 * +100 bias must take the biased id, rows whose argmax is banned must not.
 */
final class KernelCheckPenalties {
    private final ModelKernels k;
    private final CUstream stream;
    private final SplittableRandom rnd;
    private final Runnable sync;

    KernelCheckPenalties(ModelKernels k, CUstream stream, SplittableRandom rnd, Runnable sync) {
        this.k = k;
        this.stream = stream;
        this.rnd = rnd;
        this.sync = sync;
    }

    private record Drawn(int[] ids, float[] logits) {}

    /** One batch; returns what failed ("" when every row drew as it must). */
    String mixedBatch(int vocab, long seed) {
        SamplingParams[] kinds = {
            SamplingParams.greedy(),
            new SamplingParams(1f, 1f, 0, 0f, seed),
            new SamplingParams(0.7f, 1f, 40, 0f, seed + 1),
            new SamplingParams(1.1f, 0.9f, 0, 0.02f, seed + 2)
        };
        // per kind: penalised, plain, masked, penalised and masked, forced by a bias, argmax banned
        int per = 6;
        int m = per * kinds.length;
        float[] x = new float[m * vocab];
        for (int i = 0; i < x.length; i++) x[i] = (float) (rnd.nextGaussian() * 4);
        SamplingRows withPen = new SamplingRows(m);
        SamplingRows prePen = new SamplingRows(m);
        SamplingRows plain = new SamplingRows(m);
        float[] xRef = x.clone();
        int[] forced = new int[m];
        int[] banned = new int[m];
        java.util.Arrays.fill(forced, -1);
        java.util.Arrays.fill(banned, -1);
        for (int r = 0; r < m; r++) {
            SamplingParams p = kinds[r / per];
            int kind = r % per;
            for (SamplingRows s : new SamplingRows[] {withPen, prePen, plain}) s.set(r, p, r);
            if (kind == 2 || kind == 3) {
                int[] mask = KernelCheckMaskedSampling.mask(
                        KernelCheckMaskedSampling.lowest(x, r * vocab, vocab, 64), SamplingRows.maskWords(vocab));
                for (SamplingRows s : new SamplingRows[] {withPen, prePen, plain}) s.mask(r, mask);
            }
            if (kind == 1 || kind == 2) continue;
            RowPenalty pen = penalty(x, r, vocab, kind, forced, banned);
            withPen.penalty(r, pen);
            PenaltyReference.apply(xRef, r * vocab, vocab, pen);
        }
        Drawn got = draw(x, m, vocab, withPen);
        Drawn ref = draw(xRef, m, vocab, prePen);
        Drawn alone = draw(x, m, vocab, plain);
        StringBuilder fail = new StringBuilder();
        for (int r = 0; r < m; r++) {
            boolean penalised = withPen.penalty(r) != null;
            int diff = firstDifference(got.logits(), penalised ? xRef : x, r * vocab, vocab);
            if (diff >= 0) {
                fail.append(penalised ? "penalised" : "plain")
                        .append(" row ")
                        .append(r)
                        .append(": logit ")
                        .append(diff)
                        .append(" is ")
                        .append(got.logits()[r * vocab + diff])
                        .append(", want ")
                        .append((penalised ? xRef : x)[r * vocab + diff])
                        .append("; ");
            }
            if (got.ids()[r] != ref.ids()[r]) {
                fail.append("row ")
                        .append(r)
                        .append(" drew ")
                        .append(got.ids()[r])
                        .append(", with host-applied penalties ")
                        .append(ref.ids()[r])
                        .append("; ");
            }
            if (!penalised && got.ids()[r] != alone.ids()[r]) {
                fail.append("unpenalised row ")
                        .append(r)
                        .append(" drew ")
                        .append(got.ids()[r])
                        .append(" beside penalised rows, ")
                        .append(alone.ids()[r])
                        .append(" without; ");
            }
            if (r / per == 0 && forced[r] >= 0 && got.ids()[r] != forced[r]) {
                fail.append("greedy row ")
                        .append(r)
                        .append(" with +100 on ")
                        .append(forced[r])
                        .append(" drew ")
                        .append(got.ids()[r])
                        .append("; ");
            }
            if (banned[r] >= 0 && got.ids()[r] == banned[r]) {
                fail.append("row ")
                        .append(r)
                        .append(" drew its banned id ")
                        .append(banned[r])
                        .append("; ");
            }
        }
        return fail.toString();
    }

    /** A row's penalty as the engine builds it (PenaltyState over a random prompt and output). */
    private RowPenalty penalty(float[] x, int r, int vocab, int kind, int[] forced, int[] banned) {
        int argmax = KernelCheckMaskedSampling.best(x, r * vocab, range(vocab));
        int promptLen = 50 + rnd.nextInt(200), gen = rnd.nextInt(40);
        int[] tokens = new int[promptLen + gen];
        for (int i = 0; i < tokens.length; i++) {
            // repeats on purpose; a few on the row's best ids, so the penalties change what is drawn
            tokens[i] = rnd.nextInt(4) == 0 ? argmax : rnd.nextInt(8) == 0 ? vocab - 1 : rnd.nextInt(vocab);
        }
        Map<Integer, Float> bias = new HashMap<>();
        for (int i = 0; i < 5; i++) bias.put(rnd.nextInt(vocab), (float) (rnd.nextDouble() * 20 - 10));
        Set<Integer> ban = Set.of();
        int minTokens = 0;
        if (kind == 4) {
            forced[r] = rnd.nextInt(vocab);
            bias.put(forced[r], 100f);
        } else if (kind == 5) {
            banned[r] = argmax;
            ban = new java.util.HashSet<>(java.util.List.of(argmax, 0));
            minTokens = gen + 1;
        }
        SamplingPenalties sp = new SamplingPenalties(
                kind == 0 ? 0.3f : 0.5f, kind == 3 ? -0.4f : 0.7f, kind == 0 ? 1.3f : 0.8f, bias, minTokens);
        return PenaltyState.of(sp, java.util.Arrays.copyOf(tokens, promptLen), ban)
                .row(tokens, gen);
    }

    private static int[] range(int n) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) a[i] = i;
        return a;
    }

    /** The first index where the rows differ bitwise (-1: none). */
    private static int firstDifference(float[] a, float[] b, int off, int n) {
        for (int i = 0; i < n; i++) {
            if (Float.floatToRawIntBits(a[off + i]) != Float.floatToRawIntBits(b[off + i])) return i;
        }
        return -1;
    }

    private Drawn draw(float[] x, int m, int vocab, SamplingRows sr) {
        int cap = SamplingRows.capacity(m);
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dX = a.upload(floats(x));
            long dP = a.upload(ints(sr.packWithMasks(cap, vocab)));
            int[] pen = sr.packPenalties();
            long dPen = a.upload(ints(pen.length == 0 ? new int[2] : pen));
            long dOut = a.poisoned(m * 4L);
            k.sampler().sample(dX, m, vocab, vocab, dP, cap, dPen, dOut, stream);
            sync.run();
            int[] bits = toInts(a.download(dX, m * vocab * 4));
            float[] logits = new float[bits.length];
            for (int i = 0; i < bits.length; i++) logits[i] = Float.intBitsToFloat(bits[i]);
            return new Drawn(toInts(a.download(dOut, m * 4)), logits);
        }
    }
}
