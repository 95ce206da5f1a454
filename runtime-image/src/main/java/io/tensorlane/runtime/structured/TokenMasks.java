package io.tensorlane.runtime.structured;

import dk.brics.automaton.Automaton;
import dk.brics.automaton.RunAutomaton;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A byte automaton mapped onto a vocabulary: from a state, which tokens may come next (a bitmask, bit {@code id % 32} of
 * word {@code id / 32}, the layout the GPU sampler reads) and the state after a token. A token is allowed when the
 * automaton can read all of its bytes from the state and stay alive; EOS is allowed in accepting states only. Masks are
 * computed by walking the vocabulary's trie from the state (a subtree is left as soon as its prefix dies) and cached per
 * state, so a state is computed once per grammar and vocabulary. Thread-safe.
 */
public final class TokenMasks {
    private final RunAutomaton dfa;
    private final TokenVocabulary vocab;
    private final ConcurrentHashMap<Integer, int[]> cache = new ConcurrentHashMap<>();

    public TokenMasks(Automaton automaton, TokenVocabulary vocab) {
        Automaton a = automaton.clone();
        a.minimize();
        a.removeDeadTransitions(); // no state that cannot reach acceptance: every allowed token can be finished
        this.dfa = new RunAutomaton(a, true);
        this.vocab = vocab;
    }

    public int start() {
        return dfa.getInitialState();
    }

    public boolean accepts(int state) {
        return state >= 0 && dfa.isAccept(state);
    }

    /** The state after {@code token} (EOS keeps the state), -1 when the token is not allowed. */
    public int advance(int state, int token) {
        if (state < 0) return -1;
        if (vocab.isEos(token)) return dfa.isAccept(state) ? state : -1;
        byte[] b = vocab.bytes(token);
        if (b == null || b.length == 0) return -1;
        int s = state;
        for (int i = 0; i < b.length && s >= 0; i++) s = dfa.step(s, (char) (b[i] & 0xff));
        return s;
    }

    /** Words of one mask. */
    public int words() {
        return (vocab.size() + 31) / 32;
    }

    /** The tokens allowed after {@code state} (shared: do not modify). */
    public int[] mask(int state) {
        return cache.computeIfAbsent(state, this::compute);
    }

    /** A mask of the EOS ids only. */
    public int[] eosMask() {
        int[] mask = new int[words()];
        for (int e : vocab.eos()) mask[e >>> 5] |= 1 << (e & 31);
        return mask;
    }

    /** Masks computed so far. */
    public int cachedStates() {
        return cache.size();
    }

    private int[] compute(int state) {
        int[] mask = new int[words()];
        if (dfa.isAccept(state)) {
            for (int e : vocab.eos()) mask[e >>> 5] |= 1 << (e & 31);
        }
        int[] nodes = new int[64];
        int[] states = new int[64];
        int top = 0;
        for (int k = vocab.firstChild(0); k >= 0; k = vocab.nextSibling(k)) {
            int s = dfa.step(state, vocab.label(k));
            if (s < 0) continue;
            if (top == nodes.length) {
                nodes = java.util.Arrays.copyOf(nodes, top * 2);
                states = java.util.Arrays.copyOf(states, top * 2);
            }
            nodes[top] = k;
            states[top++] = s;
            while (top > 0) {
                int n = nodes[--top];
                int ns = states[top];
                for (int id = vocab.firstToken(n); id >= 0; id = vocab.nextToken(id)) mask[id >>> 5] |= 1 << (id & 31);
                for (int c = vocab.firstChild(n); c >= 0; c = vocab.nextSibling(c)) {
                    int cs = dfa.step(ns, vocab.label(c));
                    if (cs < 0) continue;
                    if (top == nodes.length) {
                        nodes = java.util.Arrays.copyOf(nodes, top * 2);
                        states = java.util.Arrays.copyOf(states, top * 2);
                    }
                    nodes[top] = c;
                    states[top++] = cs;
                }
            }
        }
        return mask;
    }
}
