package io.tensorlane.runtime.sched;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How the engine speculates ({@code --speculative} / {@code TENSORLANE_SPECULATIVE}): {@code ngram:k=4,n=3} proposes
 * up to {@code k} tokens per step by prompt lookup over suffixes of up to {@code n} tokens ({@link NgramProposer});
 * {@code draft:DIR,k=4[,batch=B]} proposes the next k tokens by a smaller model with the target's tokenizer, in steps
 * with at most B decoding sequences (default 1; {@link #batch}) ({@link
 * DraftProposer}; the engine side, which loads it beside the target, is {@code io.tensorlane.runtime.llm.DraftModel}).
 * {@code off} / {@code none} / empty: no speculation. Verify steps replay CUDA graphs like decode steps (the engine's
 * {@code GraphBuckets}; {@code TENSORLANE_SPEC_GRAPHS=off}: eagerly).
 *
 * @param method   {@link Method#NGRAM} or {@link Method#DRAFT}
 * @param k        proposed tokens per sequence and step, 1..{@value #MAX_K}
 * @param n        n-gram: the longest suffix matched, 1..{@value #MAX_N}
 * @param draftDir draft: the draft model's directory (null for n-gram)
 * @param batch    draft: the most decoding sequences a step may have for the draft to guess (each costs k draft steps
 *                 of batch 1, so past a few sequences a step's guesses cost more than they save; vLLM's
 *                 {@code disable_by_batch_size}); 0: no limit (n-gram's guesses cost next to nothing)
 */
public record SpeculativeConfig(Method method, int k, int n, Path draftDir, int batch) {
    public static final int MAX_K = 16;
    public static final int MAX_N = 16;
    public static final int DEFAULT_K = 4;
    public static final int DEFAULT_N = 3;
    /** draft: the default {@link #batch}, speculation at batch 1 only (where the draft's k steps a sequence pay). */
    public static final int DEFAULT_DRAFT_BATCH = 1;
    /** The largest {@link #batch} accepted. */
    public static final int MAX_BATCH = 4096;

    /** The config with {@link #batch}'s default: {@value #DEFAULT_DRAFT_BATCH} for a draft model, none for n-gram. */
    public SpeculativeConfig(Method method, int k, int n, Path draftDir) {
        this(method, k, n, draftDir, method == Method.DRAFT ? DEFAULT_DRAFT_BATCH : 0);
    }

    public enum Method {
        NGRAM,
        DRAFT
    }

    public SpeculativeConfig {
        java.util.Objects.requireNonNull(method, "method");
        if (method == Method.DRAFT && draftDir == null) {
            throw new IllegalArgumentException("draft speculation needs the draft model's directory");
        }
        if (k < 1 || k > MAX_K) {
            throw new IllegalArgumentException("speculative k must be 1.." + MAX_K + ", got " + k);
        }
        if (n < 1 || n > MAX_N) {
            throw new IllegalArgumentException("speculative n must be 1.." + MAX_N + ", got " + n);
        }
        if (batch < 0 || batch > MAX_BATCH) {
            throw new IllegalArgumentException("speculative batch must be 0.." + MAX_BATCH + ", got " + batch);
        }
    }

    /**
     * The n-gram proposer this config describes. A draft model's proposer needs the draft loaded on the GPU: {@code
     * io.tensorlane.runtime.llm.DraftModel#proposer}.
     */
    public Proposer proposer() {
        if (method != Method.NGRAM) {
            throw new IllegalStateException("draft speculation proposes through the loaded draft model (DraftModel)");
        }
        return new NgramProposer(n);
    }

    /** Logits rows a step may need with {@code maxSeqs} sequences each verifying k proposed tokens. */
    public int logitRows(int maxSeqs) {
        return Math.multiplyExact(maxSeqs, k + 1);
    }

    @Override
    public String toString() {
        return method == Method.NGRAM
                ? "ngram:k=" + k + ",n=" + n
                : "draft:" + draftDir + ",k=" + k + (batch != DEFAULT_DRAFT_BATCH ? ",batch=" + batch : "");
    }

    /**
     * Parses {@code spec}; null for no speculation (null, blank, {@code off}, {@code none}). {@code source} names where
     * the value came from ({@code --speculative}, the variable) in every error message, with the field at fault.
     */
    public static SpeculativeConfig parse(String spec, String source) {
        if (spec == null || spec.isBlank()) {
            return null;
        }
        String s = spec.trim();
        if (s.equalsIgnoreCase("off") || s.equalsIgnoreCase("none")) {
            return null;
        }
        int colon = s.indexOf(':');
        String method = (colon < 0 ? s : s.substring(0, colon)).trim().toLowerCase(java.util.Locale.ROOT);
        String rest = colon < 0 ? "" : s.substring(colon + 1);
        String[] parts = rest.isBlank() ? new String[0] : rest.split(",", -1);
        String where = source + " '" + s + "'";
        switch (method) {
            case "ngram" -> {
                Map<String, String> kv = fields(parts, 0, where, "k", "n");
                int k = number(kv, "k", DEFAULT_K, MAX_K, where);
                int n = number(kv, "n", DEFAULT_N, MAX_N, where);
                return new SpeculativeConfig(Method.NGRAM, k, n, null);
            }
            case "draft" -> {
                if (parts.length == 0 || parts[0].isBlank() || parts[0].contains("=")) {
                    throw new IllegalArgumentException(
                            where + ": draft needs the draft model's directory first, e.g. draft:/models/small,k=4");
                }
                Map<String, String> kv = fields(parts, 1, where, "k", "batch");
                int k = number(kv, "k", DEFAULT_K, MAX_K, where);
                int batch = number(kv, "batch", DEFAULT_DRAFT_BATCH, MAX_BATCH, where);
                return new SpeculativeConfig(Method.DRAFT, k, DEFAULT_N, Path.of(parts[0].trim()), batch);
            }
            default ->
                throw new IllegalArgumentException(
                        where + ": unknown method '" + method + "' (ngram:k=4,n=3, draft:DIR,k=4, or off)");
        }
    }

    private static Map<String, String> fields(String[] parts, int from, String where, String... allowed) {
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = from; i < parts.length; i++) {
            String p = parts[i].trim();
            int eq = p.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException(where + ": expected name=value, got '" + p + "'");
            }
            String name = p.substring(0, eq).trim().toLowerCase(java.util.Locale.ROOT);
            if (!java.util.List.of(allowed).contains(name)) {
                throw new IllegalArgumentException(
                        where + ": unknown field '" + name + "' (allowed: " + String.join(", ", allowed) + ")");
            }
            if (out.put(name, p.substring(eq + 1).trim()) != null) {
                throw new IllegalArgumentException(where + ": field '" + name + "' given twice");
            }
        }
        return out;
    }

    private static int number(Map<String, String> kv, String name, int dflt, int max, String where) {
        String v = kv.get(name);
        if (v == null) {
            return dflt;
        }
        int x;
        try {
            x = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    where + ": " + name + " must be a whole number 1.." + max + ", got '" + v + "'");
        }
        if (x < 1 || x > max) {
            throw new IllegalArgumentException(where + ": " + name + " must be 1.." + max + ", got " + x);
        }
        return x;
    }
}
