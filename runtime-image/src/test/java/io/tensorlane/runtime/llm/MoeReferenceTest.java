package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** The host routing rule (what kernelcheck holds tl_moe_route to) against hand-computed tables. */
class MoeReferenceTest {
    @Test
    void topTwoOfFourWithRenormalisation() {
        // logits ln(1), ln(4), ln(2), ln(3): p = 0.1, 0.4, 0.2, 0.3
        double[] logits = {0, Math.log(4), Math.log(2), Math.log(3)};
        MoeReference.Routing plain = MoeReference.route(logits, 1, 4, 2, false);
        assertThat(plain.ids()).containsExactly(1, 3);
        assertThat(plain.weights()[0]).isCloseTo(0.4, within(1e-12));
        assertThat(plain.weights()[1]).isCloseTo(0.3, within(1e-12));
        MoeReference.Routing norm = MoeReference.route(logits, 1, 4, 2, true);
        assertThat(norm.ids()).containsExactly(1, 3);
        assertThat(norm.weights()[0]).isCloseTo(4.0 / 7, within(1e-12));
        assertThat(norm.weights()[1]).isCloseTo(3.0 / 7, within(1e-12));
    }

    @Test
    void tiesGoToTheLowerExpertAndTokensAreIndependent() {
        double[] logits = {
            1, 2, 2, 0, // token 0: experts 1 and 2 tie
            5, 5, 5, 5 // token 1: all tie
        };
        MoeReference.Routing r = MoeReference.route(logits, 2, 4, 3, true);
        assertThat(r.ids()).containsExactly(1, 2, 0, 0, 1, 2);
        assertThat(r.weights()[3]).isCloseTo(1.0 / 3, within(1e-12));
    }

    @Test
    void downSumsEachTokensWeightedExperts() {
        // two experts of one output row and two inputs: expert 0 = [1, 2], expert 1 = [3, -1]
        double[] w = {1, 2, 3, -1};
        double[] act = {1, 1, 2, 0}; // token 0's pairs: (expert 1, [1, 1]), (expert 0, [2, 0])
        int[] ids = {1, 0};
        double[] weights = {0.75, 0.25};
        double[] y = MoeReference.down(act, w, ids, weights, 1, 2, 2, 1);
        assertThat(y).containsExactly(0.75 * (3 - 1) + 0.25 * 2);
        double[] x = {1, 1};
        assertThat(MoeReference.gateUp(x, w, ids, 1, 2, 2, 1)).containsExactly(2, 3);
    }
}
