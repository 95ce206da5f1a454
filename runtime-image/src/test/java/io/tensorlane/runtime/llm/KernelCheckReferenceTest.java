package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** The fp64 references that {@code kernelcheck} trusts, on tiny hand-computed inputs (no GPU). */
class KernelCheckReferenceTest {
    private static final org.assertj.core.data.Offset<Double> EPS = within(1e-12);

    @Test
    void embedZeroesIdsOutsideTheShard() {
        double[] table = {1, 2, 3, 4, 5, 6}; // rows 10, 11, 12 of the global vocabulary, hidden 2
        double[] out = ModelReference.embed(new int[] {11, 9, 13, 10}, table, 10, 3, 2);
        assertThat(out).containsExactly(3, 4, 0, 0, 0, 0, 1, 2);
    }

    @Test
    void linearIsXTimesWTransposed() {
        // x [2 tokens, 3], w [2 outputs, 3] (nn.Linear layout): y[t,o] = x[t,:] . w[o,:]
        double[] x = {1, 2, 3, 0, -1, 1};
        double[] w = {1, 0, 0, 1, 1, 1};
        assertThat(ModelReference.linear(x, w, 2, 3, 2)).containsExactly(1, 6, 0, 0);
    }

    @Test
    void addRmsNormModes() {
        double[] w = {1, 2};
        double inv = 1 / Math.sqrt(12.5 + 0.5); // mean(3^2, 4^2) + eps
        ModelReference.Norm set = ModelReference.addRmsNorm(new double[] {9, 9}, new double[] {3, 4}, w, 1, 2, 0.5, 0);
        assertThat(set.residual()).containsExactly(3, 4);
        assertThat(set.out()[0]).isCloseTo(3 * inv, EPS);
        assertThat(set.out()[1]).isCloseTo(2 * 4 * inv, EPS);
        ModelReference.Norm add = ModelReference.addRmsNorm(new double[] {1, 1}, new double[] {2, 3}, w, 1, 2, 0.5, 1);
        assertThat(add.residual()).containsExactly(3, 4);
        assertThat(add.out()).containsExactly(set.out());
        ModelReference.Norm keep = ModelReference.addRmsNorm(new double[] {3, 4}, null, w, 1, 2, 0.5, 2);
        assertThat(keep.residual()).containsExactly(3, 4);
        assertThat(keep.out()).containsExactly(set.out());
    }

    @Test
    void ropeTablesAndRotateHalf() {
        float[][] cs = ModelReference.ropeTables(2, 4, 10000);
        assertThat(cs[0]).containsExactly(1f, 1f, (float) Math.cos(1), (float) Math.cos(0.01));
        assertThat(cs[1]).containsExactly(0f, 0f, (float) Math.sin(1), (float) Math.sin(0.01));
        // hd 4: pairs (0,2) and (1,3); position 1 of hand-made tables c = [0.5, 0], s = [0.5, 1]
        double[] cos = {1, 1, 0.5, 0};
        double[] sin = {0, 0, 0.5, 1};
        double[] x = {1, 2, 3, 4};
        assertThat(ModelReference.rope(x, 0, 4, cos, sin, 0)).containsExactly(1, 2, 3, 4);
        assertThat(ModelReference.rope(x, 0, 4, cos, sin, 1))
                .containsExactly(1 * 0.5 - 3 * 0.5, 2 * 0 - 4 * 1, 3 * 0.5 + 1 * 0.5, 4 * 0 + 2 * 1);
    }

    @Test
    void qkvRopeAppliesBiasNormAndRopeToQAndKButOnlyBiasToV() {
        // hq = hk = 1, hd = 2: row = [q0 q1 | k0 k1 | v0 v1]; position 1 rotates by 90 degrees (c = 0, s = 1)
        double[] qkv = {1, 2, 3, 4, 5, 6};
        double[] bias = {1, 0, 0, 1, 1, 1};
        double[] cos = {1, 0};
        double[] sin = {0, 1};
        ModelReference.Qkv r = ModelReference.qkvRope(qkv, bias, null, null, 0, cos, sin, new int[] {1}, 1, 1, 1, 2);
        // q = [2, 2] -> [2*0 - 2*1, 2*0 + 2*1]; k = [3, 5] -> [-5, 3]; v = [6, 7]
        assertThat(r.q()).containsExactly(-2, 2);
        assertThat(r.k()).containsExactly(-5, 3);
        assertThat(r.v()).containsExactly(6, 7);
        // per-head norm (weights [1, 2], eps 0) before the rotation: q = [2, 2] -> rms 2 -> [1, 2] -> [-2, 1]
        ModelReference.Qkv n = ModelReference.qkvRope(
                qkv, bias, new double[] {1, 2}, new double[] {1, 1}, 0, cos, sin, new int[] {1}, 1, 1, 1, 2);
        assertThat(n.q()[0]).isCloseTo(-2, EPS);
        assertThat(n.q()[1]).isCloseTo(1, EPS);
        double rk = Math.sqrt((9 + 25) / 2.0);
        assertThat(n.k()[0]).isCloseTo(-5 / rk, EPS);
        assertThat(n.k()[1]).isCloseTo(3 / rk, EPS);
        assertThat(n.v()).containsExactly(6, 7);
    }

    @Test
    void pagedCausalGqaAttention() {
        // block size 1, one sequence whose table is shuffled: key 0 in slot 1, key 1 in slot 0. hq 2, hk 1, hd 2, scale
        // 1.
        int[] tables = {1, 0};
        double[] k = {Math.log(3), 0, /* slot 1 = key 0 */ 0, 0};
        double[] v = {0, 8, /* slot 1 = key 0 */ 4, 0};
        // token 0 at position 1 (sees keys 0 and 1), token 1 at position 0 (sees key 0 only); both heads share kv head
        // 0
        double[] q = {1, 0, 2, 0, /* token 1 */ 1, 0, 1, 0};
        double[] out =
                ModelReference.attention(q, k, v, tables, new int[] {0, 0}, new int[] {1, 0}, 2, 1, 2, 2, 1, 2, 1.0);
        // head 0: scores [0, ln 3] -> weights [1/4, 3/4] -> [1, 6]; head 1: scores [0, 2 ln 3] -> [1/10, 9/10] -> [0.4,
        // 7.2]
        assertThat(out[0]).isCloseTo(1, EPS);
        assertThat(out[1]).isCloseTo(6, EPS);
        assertThat(out[2]).isCloseTo(0.4, EPS);
        assertThat(out[3]).isCloseTo(7.2, EPS);
        assertThat(out[4]).isCloseTo(4, EPS);
        assertThat(out[5]).isCloseTo(0, EPS);
        assertThat(out[6]).isCloseTo(4, EPS);
        assertThat(out[7]).isCloseTo(0, EPS);
        assertThat(ModelReference.slot(new int[] {7, 3, 5, 2}, 2, 16, 1, 17)).isEqualTo(2 * 16 + 1);
    }

    @Test
    void siluMulAndGather() {
        double[] out = ModelReference.siluMul(new double[] {0, 2, 5, 3}, 1, 2);
        assertThat(out[0]).isCloseTo(0, EPS);
        assertThat(out[1]).isCloseTo(2 / (1 + Math.exp(-2)) * 3, EPS);
        assertThat(ModelReference.gatherRows(new double[] {1, 2, 3, 4, 5, 6}, new int[] {2, 0, 2}, 2))
                .containsExactly(5, 6, 1, 2, 5, 6);
    }

    @Test
    void argmaxTiesGoLowAndNanNeverWins() {
        float nan = Float.NaN;
        float[] x = {
            1,
            3,
            3,
            9, /* row 1 */
            nan,
            2,
            nan,
            2, /* row 2 */
            nan,
            nan,
            nan,
            0, /* row 3 */
            Float.NEGATIVE_INFINITY,
            Float.NEGATIVE_INFINITY,
            nan,
            0
        };
        // vocab 3, stride 4: the 4th column is padding and must be ignored; row 3: a tie of -inf goes to the lower
        // index
        assertThat(ModelReference.argmax(x, 4, 3, 4)).containsExactly(1, 1, 0, 0);
    }
}
