package io.tensorlane.runtime.structured;

import io.tensorlane.runtime.sched.TokenConstraint;

/**
 * One sequence's walk through a grammar's {@link TokenMasks}: the state after the generated tokens seen so far, and
 * the mask from there. A token the mask did not allow (only an executor that ignores masks could draw one) ends the
 * grammar: from then on only EOS is allowed, so the answer stops instead of going on unconstrained.
 */
public final class GrammarConstraint implements TokenConstraint {
    private final TokenMasks masks;
    private final int[] eosOnly;
    private int state;
    private int seen;

    public GrammarConstraint(TokenMasks masks) {
        this.masks = masks;
        this.state = masks.start();
        this.eosOnly = masks.eosMask();
    }

    @Override
    public int[] mask(int[] generated, int offset, int count) {
        for (; seen < count; seen++) {
            if (state >= 0) state = masks.advance(state, generated[offset + seen]);
        }
        return state < 0 ? eosOnly : masks.mask(state);
    }

    /** Whether the tokens the last {@link #mask} call walked (all but any drawn since) form a complete text. */
    public boolean complete() {
        return masks.accepts(state);
    }
}
