package io.tensorlane.runtime.cli;

import static io.tensorlane.runtime.cli.KernelCheckMath.floats;
import static io.tensorlane.runtime.cli.KernelCheckMath.ints;
import static jcuda.driver.JCudaDriver.cuMemsetD8;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.cli.KernelCheckCommand.Result;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.engine.HostTensors;
import io.tensorlane.runtime.llm.AttentionKernels;
import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.llm.ModelReference;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s {@code attention_rope} cases: a decode step's rope, KV write and attention in one kernel
 * ({@link AttentionKernels#launchWithRope}) against {@code tl_qkv_rope} then the attention with the combine kernel, on
 * the same inputs. The output and both caches must be equal bit for bit, with the key slices merged by the combine
 * kernel and by their last block, each launched three times over one workspace (the counters must come back to zero).
 * The caches start with NaN in every slot no sequence holds, the step's own slots included, so a key read back from
 * the cache instead of the block's row, or a row left unwritten, fails.
 */
final class KernelCheckAttentionRope {
    /** The head configurations of the attention cases: every query heads per block (1, 2, 4) at some head dim. */
    private static final int[][] HEADS = {{8, 2}, {4, 4}, {16, 2}, {12, 1}, {32, 8}};

    private final ModelKernels k;
    private final CUstream stream;
    private final SplittableRandom rnd;
    private final Runnable sync;
    private final Consumer<Result> add;
    private final KernelCheckAttention attention;

    KernelCheckAttentionRope(
            ModelKernels k, CUstream stream, SplittableRandom rnd, Runnable sync, Consumer<Result> add) {
        this.k = k;
        this.stream = stream;
        this.rnd = rnd;
        this.sync = sync;
        this.add = add;
        this.attention = new KernelCheckAttention(k, stream, rnd, sync);
    }

    /**
     * Every case for {@code t}: one token at position 300 (the engine's use: a step of one token) and a decode batch of
     * six sequences (positions 300, 0, 16, 15, 511 and 47: the first key of a sequence, a token at a block's first and
     * last place), with and without bias and q/k norms, over a T cache and an FP8 one.
     */
    void all(DType t, KernelCheckFp8.Guard guard) {
        int[][] one = {{300, 1}};
        int[][] batch = {{300, 1}, {0, 1}, {16, 1}, {15, 1}, {511, 1}, {47, 1}};
        for (int[] hc : HEADS) {
            for (int hd : new int[] {64, 128, 256}) {
                for (int[][] chunks : new int[][][] {one, batch}) {
                    for (boolean kv8 : new boolean[] {false, true}) {
                        boolean extras = chunks == batch; // bias and q/k norms on the batch, none on the one token
                        String nm = (kv8 ? "kv8," : "") + "n=" + chunks.length + ",hq=" + hc[0] + ",hk=" + hc[1]
                                + ",hd=" + hd + (extras ? ",bias,qknorm" : "");
                        guard.run("attention_rope", t, nm, () -> check(t, hc[0], hc[1], hd, chunks, extras, kv8, nm));
                    }
                }
            }
        }
    }

    /** The step's inputs on the host. */
    private record Inputs(
            KernelCheckAttention.Batch b,
            byte[] qkv,
            byte[] bias,
            byte[] qNorm,
            byte[] kNorm,
            float[][] rope,
            int[] slots,
            byte[] kc,
            byte[] vc,
            float[] kvScales) {}

    /** What a launch left: the output and both caches, raw. */
    private record Outputs(byte[] out, byte[] kc, byte[] vc) {}

    private void check(DType t, int hq, int hk, int hd, int[][] chunks, boolean extras, boolean kv8, String nm) {
        KernelCheckAttention.Batch b = attention.batch(t, hq, hk, hd, chunks, false);
        int heads = hq + 2 * hk;
        int[] slots = new int[b.n()];
        for (int i = 0; i < b.n(); i++) {
            slots[i] = ModelReference.slot(
                    b.tables(), b.maxBlocksPerSeq(), b.blockSize(), b.tokenSeq()[i], b.tokenPos()[i]);
        }
        byte[] kc = kv8 ? codes(b) : b.kc().clone();
        byte[] vc = kv8 ? codes(b) : b.vc().clone();
        int rowBytes = b.row() * (kv8 ? 1 : t.bytes());
        for (int slot : slots) { // the step's own keys: not in the cache until a kernel writes them
            Arrays.fill(kc, slot * rowBytes, (slot + 1) * rowBytes, (byte) (kv8 ? 0x7F : 0xFF));
            Arrays.fill(vc, slot * rowBytes, (slot + 1) * rowBytes, (byte) (kv8 ? 0x7F : 0xFF));
        }
        Inputs in = new Inputs(
                b,
                HostTensors.random(t, (long) b.n() * heads * hd, rnd.nextLong()),
                extras ? KernelCheckMath.encode(t, uniform(heads * hd, -0.5, 0.5)) : null,
                extras ? KernelCheckMath.encode(t, uniform(hd, 0.5, 1.5)) : null,
                extras ? KernelCheckMath.encode(t, uniform(hd, 0.5, 1.5)) : null,
                ModelReference.ropeTables(1024, hd, 1e6),
                slots,
                kc,
                vc,
                kv8 ? new float[] {1f / 200, 1f / 300} : null);
        double scale = 1 / Math.sqrt(hd);
        AttentionKernels ak = k.attentionKernels();
        boolean was = ak.fusedCombine();
        try {
            ak.fusedCombine(false);
            Outputs ref = run(in, scale, false, 1);
            for (boolean fusedCombine : new boolean[] {false, true}) {
                ak.fusedCombine(fusedCombine);
                Outputs got = run(in, scale, true, 3);
                String name = nm + (fusedCombine ? ",merge=fused" : ",merge=kernel");
                long outDiff = differing(got.out(), ref.out());
                long kDiff = differing(got.kc(), ref.kc());
                long vDiff = differing(got.vc(), ref.vc());
                long bad = outDiff + kDiff + vDiff;
                add.accept(new Result(
                        "attention_rope",
                        t.name(),
                        name + (bad == 0 ? "" : ",bytes differing out/k/v=" + outDiff + "/" + kDiff + "/" + vDiff),
                        bad,
                        bad,
                        bad == 0));
            }
        } finally {
            ak.fusedCombine(was);
        }
    }

    /** The step through the fused kernel ({@code fused}, launched {@code launches} times) or the two launches. */
    private Outputs run(Inputs in, double scale, boolean fused, int launches) {
        KernelCheckAttention.Batch b = in.b();
        DType t = b.t();
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dQkv = a.upload(in.qkv());
            long dBias = in.bias() == null ? 0 : a.upload(in.bias());
            long dQn = in.qNorm() == null ? 0 : a.upload(in.qNorm());
            long dKn = in.kNorm() == null ? 0 : a.upload(in.kNorm());
            long dCos = a.upload(floats(in.rope()[0]));
            long dSin = a.upload(floats(in.rope()[1]));
            long dSlots = a.upload(ints(in.slots()));
            long dK = a.upload(in.kc());
            long dV = a.upload(in.vc());
            long dT = a.upload(ints(b.tables()));
            long dSeq = a.upload(ints(b.tokenSeq()));
            long dPos = a.upload(ints(b.tokenPos()));
            long dScales = in.kvScales() == null ? 0 : a.upload(floats(in.kvScales()));
            long outBytes = (long) b.n() * b.hq() * b.hd() * t.bytes();
            long dOut = a.poisoned(outBytes);
            long dQ = a.poisoned(outBytes);
            long dWs = KernelCheckAttention.workspace(a, b);
            float eps = 1e-6f;
            for (int l = 0; l < launches; l++) {
                Cuda.check(cuMemsetD8(new CUdeviceptr().withByteOffset(dOut), (byte) 0xFF, outBytes), "cuMemsetD8");
                if (fused) {
                    k.attentionKernels()
                            .launchWithRope(
                                    t,
                                    new AttentionKernels.Rope(dQkv, dBias, dQn, dKn, eps, dCos, dSin, dSlots),
                                    dK,
                                    dV,
                                    dT,
                                    dSeq,
                                    dPos,
                                    b.maxBlocksPerSeq(),
                                    b.blockSize(),
                                    dOut,
                                    dWs,
                                    b.n(),
                                    b.hq(),
                                    b.hk(),
                                    b.hd(),
                                    (float) scale,
                                    dScales,
                                    stream);
                } else {
                    k.qkvRope(
                            t, dQkv, dBias, dQn, dKn, eps, dCos, dSin, dPos, dSlots, dQ, dK, dV, b.n(), b.hq(), b.hk(),
                            b.hd(), dScales, stream);
                    attention.launch(b, dQ, dK, dV, dT, dSeq, dPos, dOut, dWs, 0, 0, dScales, scale);
                }
            }
            sync.run();
            return new Outputs(
                    a.download(dOut, (int) outBytes), a.download(dK, in.kc().length), a.download(dV, in.vc().length));
        }
    }

    /** An FP8 cache of {@code b}'s layout: random finite e4m3 codes where a sequence holds a key, NaN (0x7F) elsewhere. */
    private byte[] codes(KernelCheckAttention.Batch b) {
        byte[] c = new byte[b.used().length * b.row()];
        for (int slot = 0; slot < b.used().length; slot++) {
            for (int e = 0; e < b.row(); e++) {
                c[slot * b.row() + e] =
                        b.used()[slot] ? (byte) (rnd.nextInt(0x7F) | (rnd.nextBoolean() ? 0x80 : 0)) : (byte) 0x7F;
            }
        }
        return c;
    }

    private static long differing(byte[] a, byte[] b) {
        long d = 0;
        for (int i = 0; i < a.length; i++) {
            d += a[i] != b[i] ? 1 : 0;
        }
        return d;
    }

    private double[] uniform(int n, double lo, double hi) {
        double[] v = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = lo + (hi - lo) * rnd.nextDouble();
        }
        return v;
    }
}
