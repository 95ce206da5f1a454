package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.sched.SpecRule;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The host side of kernelcheck's spec_verify cases: the port of tl_spec.cuh's uniforms and its acceptance. */
class KernelCheckSpecTest {
    @Test
    void mix64IsSplitmix64() {
        // splitmix64's first outputs from state 0 (Vigna's reference): mix64(0), mix64(golden ratio)
        assertThat(KernelCheckSpec.mix64(0)).isEqualTo(0xE220A8397B1DCDAFL);
        assertThat(KernelCheckSpec.mix64(0x9E3779B97F4A7C15L)).isEqualTo(0x6E789E6AA1B965F4L);
    }

    @Test
    void uniformsAreInsideTheOpenInterval() {
        assertThat(KernelCheckSpec.unit(0)).isPositive();
        assertThat(KernelCheckSpec.unit(-1L)).isLessThan(1f);
    }

    @Test
    void theFp32AcceptanceAgreesWithTheHostRule() {
        SplittableRandom r = new SplittableRandom(5);
        int vocab = 16;
        int kk = 3;
        int seqs = 2000;
        float[] p = new float[(kk + 1) * vocab];
        float[] q = new float[seqs * kk * vocab];
        int[] draft = new int[seqs * kk];
        for (int i = 0; i < p.length; i++) {
            p[i] = (float) r.nextDouble() / vocab;
        }
        for (int i = 0; i < q.length; i++) {
            q[i] = (float) r.nextDouble() / vocab;
        }
        for (int i = 0; i < draft.length; i++) {
            draft[i] = r.nextInt(vocab);
        }
        int differ = 0;
        int kept = 0;
        for (int s = 0; s < seqs; s++) {
            long seed = r.nextLong();
            int counter = s;
            int a = KernelCheckSpec.hostAccepted(p, q, draft, s, kk, vocab, seed, counter);
            long base = KernelCheckSpec.mix64(seed ^ ((counter & 0xFFFFFFFFL) * 0xD1B54A32D192ED03L));
            double[] u = new double[kk];
            for (int i = 0; i < kk; i++) {
                u[i] = KernelCheckSpec.unit(KernelCheckSpec.mix64(base + i));
            }
            double[] pd = new double[(kk + 1) * vocab];
            double[] qd = new double[kk * vocab];
            for (int i = 0; i < pd.length; i++) {
                pd[i] = p[i];
            }
            for (int i = 0; i < qd.length; i++) {
                qd[i] = q[s * kk * vocab + i];
            }
            int[] d = java.util.Arrays.copyOfRange(draft, s * kk, s * kk + kk);
            int host = SpecRule.verify(pd, qd, d, kk, vocab, u, 0.5).accepted();
            differ += host != a ? 1 : 0;
            kept += a;
        }
        assertThat(differ).isLessThanOrEqualTo(2); // fp32 vs fp64 products at the boundary only
        assertThat(kept).isPositive().isLessThan(seqs * kk);
    }
}
