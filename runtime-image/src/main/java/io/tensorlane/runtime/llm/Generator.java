package io.tensorlane.runtime.llm;

import io.tensorlane.runtime.sched.BlockAllocator;
import io.tensorlane.runtime.sched.SamplingRows;
import io.tensorlane.runtime.sched.StepBatch;
import io.tensorlane.runtime.sched.StepResult;
import io.tensorlane.runtime.text.Sampler;
import io.tensorlane.runtime.text.SamplingParams;
import io.tensorlane.runtime.text.TopLogprobs;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * Offline generation over an {@link LlmEngine}: every prompt prefilled (packed into steps of at most maxBatchTokens
 * tokens, long prompts chunked), then all sequences decoded together, one token per sequence per step. The GPU draws
 * every token (greedy or seeded sampling, {@link SamplingRows}); logits come to the host only for logprobs and prompt
 * logits.
 */
public final class Generator {
    /** One prompt to continue. */
    public record Request(
            int[] promptIds,
            int maxTokens,
            SamplingParams sampling,
            boolean ignoreEos,
            int logprobs,
            boolean promptLogits) {}

    /** What came out of one request. */
    public record Result(
            int[] promptIds, int[] generated, String finishReason, List<TopLogprobs> logprobs, float[] promptLogits) {}

    /** Wall-clock split of a run. */
    public record Stats(
            int prefillTokens, double prefillSeconds, int decodeTokens, int decodeSteps, double decodeSeconds) {}

    private final LlmEngine engine;
    private final Set<Integer> eos;
    private Stats stats;

    public Generator(LlmEngine engine, List<Integer> eosTokenIds) {
        this.engine = engine;
        this.eos = Set.copyOf(eosTokenIds);
    }

    public Stats stats() {
        return stats;
    }

    private static final class Seq {
        final Request req;
        final int index;
        final List<Integer> table = new ArrayList<>();
        int prefilled;
        int[] tokens;
        int length;
        final List<Integer> out = new ArrayList<>();
        final List<TopLogprobs> logprobs = new ArrayList<>();
        float[] promptLogits;
        String finish;

        Seq(Request req, int index) {
            this.req = req;
            this.index = index;
            this.tokens = Arrays.copyOf(req.promptIds(), req.promptIds().length + req.maxTokens());
            this.length = req.promptIds().length;
            if (req.promptLogits()) {
                promptLogits = new float[0];
            }
        }

        boolean needsLogits() {
            return req.logprobs() > 0;
        }
    }

    /** Runs every request to its end; results in request order. */
    public List<Result> run(List<Request> requests) {
        int vocab = engine.config().vocabSize();
        List<Seq> seqs = new ArrayList<>();
        for (int i = 0; i < requests.size(); i++) {
            Request r = requests.get(i);
            if (r.promptIds().length == 0) {
                throw new IllegalArgumentException("prompt " + i + " is empty");
            }
            if (r.promptIds().length + r.maxTokens() > engine.maxModelLen()) {
                throw new IllegalArgumentException(
                        "prompt " + i + " (" + r.promptIds().length + " tokens) + max tokens " + r.maxTokens()
                                + " exceeds the max model length " + engine.maxModelLen());
            }
            for (int id : r.promptIds()) {
                if (id < 0 || id >= vocab) {
                    throw new IllegalArgumentException(
                            "prompt " + i + " has token id " + id + " outside the vocabulary (0.." + (vocab - 1) + ")");
                }
            }
            seqs.add(new Seq(r, i));
        }
        EngineOptions o = engine.options();
        BlockAllocator alloc = engine.blocks();
        long t0 = System.nanoTime();
        int prefillTokens = 0;
        // Prefill: pack chunks until the step's token, row or logits budget is reached.
        int next = 0;
        while (next < seqs.size()) {
            StepBatch.Builder b = new StepBatch.Builder(alloc.blockSize(), engine.maxBlocksPerSeq());
            List<Seq> inStep = new ArrayList<>();
            List<int[]> ranges = new ArrayList<>();
            int logitRows = 0;
            while (next < seqs.size() && b.tokens() < o.maxBatchTokens() && b.rows() < o.maxSeqs()) {
                Seq s = seqs.get(next);
                int remaining = s.req.promptIds().length - s.prefilled;
                int room = o.maxBatchTokens() - b.tokens();
                int chunk = Math.min(remaining, room);
                boolean all = s.req.promptLogits();
                if (all) {
                    chunk = Math.min(chunk, o.maxLogitRows() - logitRows);
                } else if (chunk == remaining && logitRows >= o.maxLogitRows()) {
                    chunk = 0;
                }
                if (chunk <= 0) {
                    break;
                }
                boolean last = s.prefilled + chunk == s.req.promptIds().length;
                if (!alloc.ensure(s.table, s.prefilled + chunk)) {
                    throw new IllegalStateException("the KV cache (" + alloc.blocks() + " blocks) cannot hold "
                            + seqs.size() + " prompts at once; " + "give fewer prompts or more KV cache");
                }
                StepBatch.Logits want =
                        all ? StepBatch.Logits.ALL : last ? StepBatch.Logits.LAST : StepBatch.Logits.NONE;
                int rows = want == StepBatch.Logits.ALL ? chunk : want == StepBatch.Logits.LAST ? 1 : 0;
                b.add(
                        s.table,
                        Arrays.copyOfRange(s.req.promptIds(), s.prefilled, s.prefilled + chunk),
                        s.prefilled,
                        want);
                if (last) {
                    b.sample(s.req.sampling(), 0);
                }
                inStep.add(s);
                ranges.add(new int[] {logitRows, rows, last ? 1 : 0});
                logitRows += rows;
                s.prefilled += chunk;
                prefillTokens += chunk;
                if (last) {
                    next++;
                }
            }
            boolean wantLogits = inStep.stream().anyMatch(s -> s.needsLogits() || s.req.promptLogits());
            StepResult res = engine.step(b.build(), wantLogits);
            for (int i = 0; i < inStep.size(); i++) {
                Seq s = inStep.get(i);
                int[] rg = ranges.get(i);
                if (s.req.promptLogits() && rg[1] > 0) {
                    int old = s.promptLogits.length;
                    s.promptLogits = Arrays.copyOf(s.promptLogits, old + rg[1] * vocab);
                    System.arraycopy(res.logits(), rg[0] * vocab, s.promptLogits, old, rg[1] * vocab);
                }
                if (rg[2] == 1) {
                    accept(s, res, rg[0] + rg[1] - 1, vocab);
                }
            }
        }
        double prefillSeconds = (System.nanoTime() - t0) / 1e9;
        long t1 = System.nanoTime();
        int decodeTokens = 0;
        int steps = 0;
        while (true) {
            List<Seq> active = seqs.stream().filter(s -> s.finish == null).toList();
            if (active.isEmpty()) {
                break;
            }
            for (int from = 0; from < active.size(); from += o.maxSeqs()) {
                List<Seq> group = active.subList(from, Math.min(active.size(), from + o.maxSeqs()));
                StepBatch.Builder b = new StepBatch.Builder(alloc.blockSize(), engine.maxBlocksPerSeq());
                for (Seq s : group) {
                    if (!alloc.ensure(s.table, s.length)) {
                        throw new IllegalStateException("the KV cache (" + alloc.blocks()
                                + " blocks) ran out while decoding " + active.size() + " sequences");
                    }
                    b.add(s.table, new int[] {s.tokens[s.length - 1]}, s.length - 1, StepBatch.Logits.LAST);
                    b.sample(s.req.sampling(), s.out.size());
                }
                boolean wantLogits = group.stream().anyMatch(Seq::needsLogits);
                StepResult res = engine.step(b.build(), wantLogits);
                steps++;
                for (int i = 0; i < group.size(); i++) {
                    accept(group.get(i), res, i, vocab);
                    decodeTokens++;
                }
            }
        }
        stats = new Stats(prefillTokens, prefillSeconds, decodeTokens, steps, (System.nanoTime() - t1) / 1e9);
        List<Result> out = new ArrayList<>();
        for (Seq s : seqs) {
            alloc.release(s.table);
            out.add(new Result(
                    s.req.promptIds(),
                    s.out.stream().mapToInt(Integer::intValue).toArray(),
                    s.finish,
                    s.logprobs,
                    s.promptLogits));
        }
        return out;
    }

    /** Takes the token for logits row {@code row} of {@code res} as {@code s}'s next token. */
    private void accept(Seq s, StepResult res, int row, int vocab) {
        int token = res.ids()[row];
        if (s.req.logprobs() > 0) {
            s.logprobs.add(Sampler.logprobs(res.logits(), row * vocab, vocab, token, s.req.logprobs()));
        }
        s.out.add(token);
        s.tokens[s.length++] = token;
        if (s.out.size() >= s.req.maxTokens()) {
            s.finish = "length";
        } else if (!s.req.ignoreEos() && eos.contains(token)) {
            s.finish = "stop";
        }
    }
}
