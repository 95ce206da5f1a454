package io.tensorlane.runtime.cli;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.cli.KernelCheckCommand.Result;
import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.text.SamplingParams;
import java.io.PrintWriter;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s cases of the token-choosing kernels, once per run (fp32 logits, not per element type): greedy
 * and seeded sampling with every filter ({@link KernelCheckSampling}), token masks ({@link KernelCheckMaskedSampling}),
 * the speculative verify ({@link KernelCheckSpec}) and penalties ({@link KernelCheckPenalties}); one result line each,
 * with the chi-square statistic where the check is a distribution test.
 */
final class KernelCheckSamplingCases {
    private final ModelKernels k;
    private final CUstream stream;
    private final SplittableRandom rnd;
    private final Runnable sync;
    private final PrintWriter out;
    private final Consumer<Result> results;

    KernelCheckSamplingCases(
            ModelKernels k,
            CUstream stream,
            SplittableRandom rnd,
            Runnable sync,
            PrintWriter out,
            Consumer<Result> results) {
        this.k = k;
        this.stream = stream;
        this.rnd = rnd;
        this.sync = sync;
        this.out = out;
        this.results = results;
    }

    /** The cases, each run by {@code guard}. */
    void all(KernelCheckFp8.Guard guard) {
        samplingCases(guard);
        specCases(guard);
        penaltyCases(guard);
        chainCases(guard);
    }

    /**
     * tl_chain_advance_i32 ({@link KernelCheckChain}): the next one-token step's inputs, bit for bit (guarded as kernel
     * {@code chain_advance}, so {@code --only chain_advance} runs these alone).
     */
    private void chainCases(KernelCheckFp8.Guard guard) {
        KernelCheckChain c = new KernelCheckChain(k, stream, sync);
        int[] table = {7, 3, 12, 4};
        Object[][] cases = {
            // name, out ids, ids index, positions, position index, block, j, last
            {"chain_advance,chunk of 2,inside a block", new int[] {5, 42}, 1, new int[] {10, 11}, 1, 16, 0, false},
            {"chain_advance,one token,block edge", new int[] {9}, 0, new int[] {15}, 0, 16, 2, false},
            {
                "chain_advance,chunk of 3 (last row),block 8",
                new int[] {1, 2, 77},
                2,
                new int[] {21, 22, 23},
                2,
                8,
                1,
                false
            },
            {"chain_advance,last of a chain", new int[] {31}, 0, new int[] {40}, 0, 16, 3, true},
        };
        for (Object[] cs : cases) {
            String nm = (String) cs[0];
            guard.run(
                    "chain_advance",
                    DType.fp32,
                    nm,
                    () -> report(
                            nm,
                            outcome(c.check(
                                    (int[]) cs[1],
                                    (int) cs[2],
                                    (int[]) cs[3],
                                    (int) cs[4],
                                    table,
                                    (int) cs[5],
                                    (int) cs[6],
                                    (boolean) cs[7]))));
        }
    }

    private void samplingCases(KernelCheckFp8.Guard guard) {
        KernelCheckSampling sc = new KernelCheckSampling(k, stream, rnd, sync);
        guard.run("sample", DType.fp32, "greedy,m=4,vocab=50000,stride=50048", () -> {
            String f = sc.greedy();
            if (!f.isEmpty()) {
                out.println("  sample greedy: " + f);
            }
            results.accept(new Result(
                    "sample",
                    "fp32",
                    "greedy,m=4,vocab=50000,stride=50048",
                    f.isEmpty() ? 0 : 1,
                    f.isEmpty() ? 0 : 1,
                    f.isEmpty()));
        });
        // 8000 seeded draws of one 64-id row per filter combination; chi-square against the kept distribution
        SamplingParams[] ps = {
            new SamplingParams(1f, 1f, 0, 0f, 11),
            new SamplingParams(0.7f, 1f, 10, 0f, 12),
            new SamplingParams(1.3f, 0.8f, 0, 0f, 13),
            new SamplingParams(1f, 1f, 0, 0.1f, 14),
            new SamplingParams(0.9f, 0.9f, 20, 0.05f, 15)
        };
        for (SamplingParams p : ps) {
            String nm = "T=" + p.temperature() + ",k=" + p.topK() + ",p=" + p.topP() + ",minp=" + p.minP();
            guard.run("sample", DType.fp32, nm, () -> report(nm, sc.distribution(64, p, 8000)));
        }
        SamplingParams big = new SamplingParams(0.8f, 0.95f, 50, 0.02f, 16);
        guard.run(
                "sample",
                DType.fp32,
                "vocab=128256,k=50,p=0.95",
                () -> report("vocab=128256,k=50,p=0.95", sc.largeVocabulary(128256, big, 16)));
        SamplingParams nucleus = new SamplingParams(1f, 0.9f, 0, 0f, 17);
        guard.run(
                "sample",
                DType.fp32,
                "vocab=152064,p=0.9",
                () -> report("vocab=152064,p=0.9", sc.largeVocabulary(152064, nucleus, 16)));
        guard.run(
                "sample",
                DType.fp32,
                "dominant id,vocab=151936,draws=1000",
                () -> report("dominant id,vocab=151936,draws=1000", sc.dominantId(151936, 1000)));
        // token masks (structured outputs): masked rows draw allowed ids only, unmasked rows as without masks
        KernelCheckMaskedSampling ms = new KernelCheckMaskedSampling(k, stream, rnd, sync);
        for (long seed = 21; seed <= 25; seed++) {
            String nm = "masked,mixed batch,vocab=151937,seed=" + seed;
            long sd = seed;
            guard.run("sample", DType.fp32, nm, () -> report(nm, outcome(ms.mixedBatch(151937, sd))));
        }
        for (long seed = 31; seed <= 33; seed++) {
            String nm = "masked,6 lowest logits,vocab=4001,seed=" + seed;
            long sd = seed;
            guard.run("sample", DType.fp32, nm, () -> report(nm, ms.lowestLogits(4001, 4000, sd)));
        }
    }

    /** tl_spec_verify_f32 ({@link KernelCheckSpec}): the verdicts against the host rule, the output distribution. */
    private void specCases(KernelCheckFp8.Guard guard) {
        try (io.tensorlane.runtime.llm.SpecKernels sk = new io.tensorlane.runtime.llm.SpecKernels()) {
            KernelCheckSpec c = new KernelCheckSpec(sk, stream, rnd, sync);
            int[][] shapes = {{64, 1, 6000}, {64, 3, 6000}, {200, 5, 4000}};
            for (int[] sh : shapes) {
                String nm = "spec_verify,vocab=" + sh[0] + ",k=" + sh[1] + ",seqs=" + sh[2];
                guard.run("sample", DType.fp32, nm, () -> report(nm, c.distribution(sh[0], sh[1], sh[2])));
            }
            String nm = "spec_verify,q=p and p(guess)=0,vocab=151936,k=4,seqs=32";
            guard.run("sample", DType.fp32, nm, () -> report(nm, outcome(c.edgeCases(151936, 4, 32))));
        } catch (RuntimeException e) { // a missing entry point is a FAIL line of its own, not the end of the run
            out.println("  spec_verify: " + e);
            results.accept(new Result("sample", "fp32", "spec_verify", Double.NaN, Double.NaN, false));
        }
    }

    private void penaltyCases(KernelCheckFp8.Guard guard) {
        // penalties, logit_bias, min_tokens bans (issue #30): bit-exact against the host reference, other rows
        // untouched
        KernelCheckPenalties pc = new KernelCheckPenalties(k, stream, rnd, sync);
        for (long seed = 41; seed <= 45; seed++) {
            int vocab = seed % 2 == 0 ? 151937 : 4001;
            String nm = "penalties,mixed batch,vocab=" + vocab + ",seed=" + seed;
            long sd = seed;
            guard.run("sample", DType.fp32, nm, () -> report(nm, outcome(pc.mixedBatch(vocab, sd))));
        }
    }

    private static KernelCheckSampling.Outcome outcome(String failure) {
        return new KernelCheckSampling.Outcome(failure, Double.NaN, Double.NaN);
    }

    private void report(String name, KernelCheckSampling.Outcome o) {
        if (!o.pass()) {
            out.println("  sample " + name + ": " + o.failure());
        }
        results.accept(new Result(
                "sample",
                "fp32",
                name
                        + (Double.isNaN(o.chi2())
                                ? ""
                                : String.format(java.util.Locale.ROOT, ",chi2=%.1f/%.1f", o.chi2(), o.critical())),
                o.pass() ? 0 : 1,
                o.pass() ? 0 : 1,
                o.pass()));
    }
}
