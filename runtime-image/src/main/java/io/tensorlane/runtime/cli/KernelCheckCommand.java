package io.tensorlane.runtime.cli;

import static io.tensorlane.runtime.cli.KernelCheckMath.compare;
import io.tensorlane.runtime.cli.KernelCheckMath.Stat;
import static io.tensorlane.runtime.cli.KernelCheckMath.encode;
import static io.tensorlane.runtime.cli.KernelCheckMath.floats;
import static io.tensorlane.runtime.cli.KernelCheckMath.ints;
import static io.tensorlane.runtime.cli.KernelCheckMath.maxAbs;
import static io.tensorlane.runtime.cli.KernelCheckMath.poisonBroken;
import static io.tensorlane.runtime.cli.KernelCheckMath.toDouble;
import static io.tensorlane.runtime.cli.KernelCheckMath.toInts;
import static io.tensorlane.runtime.cli.KernelCheckMath.unbox;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetCount;
import static jcuda.driver.JCudaDriver.cuDeviceGetName;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import io.tensorlane.contract.DType;
import io.tensorlane.kernels.Fatbin;
import io.tensorlane.kernels.Kernels;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.engine.HostTensors;
import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.text.SamplingParams;
import io.tensorlane.runtime.llm.ModelReference;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUstream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Correctness of the model kernels (tl_model.cu) on one GPU against fp64 host references ({@link ModelReference}).
 *
 * <p>Every case uses fresh random inputs in the element type, fills each output buffer with 0xFF bytes first (NaN in
 * bf16/fp16/fp32, -1 in int32: an element the kernel forgot stays NaN and fails), runs the kernel, copies back and
 * compares element by element with the bound {@code |out - ref| <= u*|ref| + kappa*M} where u is the unit roundoff of
 * the output type (one final rounding), M the magnitude of the case's values and kappa a small allowance for the fp32
 * arithmetic inside the kernel. Copies (embed, gather) and argmax must match exactly.
 */
@Command(name = "kernelcheck", mixinStandardHelpOptions = true,
    description = "Check the model kernels (embed, add_rmsnorm, qkv_rope, attention, silu_mul, gather_rows, sample) on one GPU "
        + "against fp64 host references: random inputs, poisoned outputs; prints one line per case "
        + "'kernel dtype case maxAbsErr maxRelErr PASS|FAIL' and exits 0 only if every case passes.")
public final class KernelCheckCommand implements Callable<Integer> {
  /** fp32 allowance (relative to the case's magnitude) for elementwise kernels, norms and RoPE. */
  static final double KAPPA = 1e-5;
  /** fp32 allowance for attention (sums over up to a few hundred keys, exp2 approximation). */
  static final double KAPPA_ATTENTION = 4e-5;

  @Spec
  CommandSpec spec;

  @Option(names = "--device", defaultValue = "0", description = "GPU ordinal (default ${DEFAULT-VALUE}).")
  int device;

  @Option(names = "--dtypes", split = ",", defaultValue = "bf16,fp16", description = "Element types (default ${DEFAULT-VALUE}).")
  List<String> dtypes;

  @Option(names = "--seed", defaultValue = "20261130", description = "Random seed (default ${DEFAULT-VALUE}).")
  long seed;

  /** One checked case. */
  record Result(String kernel, String dtype, String name, double maxAbs, double maxRel, boolean pass) {
    String line() {
      return String.format(java.util.Locale.ROOT, "%-14s %-5s %-40s %.3e %.3e %s", kernel, dtype, name, maxAbs, maxRel, pass ? "PASS" : "FAIL");
    }
  }

  private final List<Result> results = new ArrayList<>();
  private PrintWriter out;
  private ModelKernels k;
  private CUstream stream;
  private SplittableRandom rnd;

  @Override
  public Integer call() {
    out = spec.commandLine().getOut();
    List<DType> types = dtypes.stream().map(DType::parse).toList();
    for (DType t : types) {
      if (t == DType.fp32) {
        throw new IllegalArgumentException("the model kernels take bf16 or fp16, not fp32");
      }
    }
    if (!Kernels.modelFatbinPresent()) {
      out.println("kernelcheck: " + Kernels.MODEL_FATBIN_RESOURCE + " is missing (kernels built with -Dtensorlane.skipNvcc?)");
      out.flush();
      return ExitCodes.RUNTIME;
    }
    out.println("model kernels: " + Fatbin.entries(Kernels.modelFatbin()));
    Cuda.init(); // throws CudaUnavailableException (clear message, exit code RUNTIME) without a GPU
    int[] count = {0};
    Cuda.check(cuDeviceGetCount(count), "cuDeviceGetCount");
    if (device < 0 || device >= count[0]) {
      throw new IllegalArgumentException("--device " + device + " but " + count[0] + " GPU(s) visible");
    }
    CUdevice dev = new CUdevice();
    Cuda.check(cuDeviceGet(dev, device), "cuDeviceGet");
    byte[] name = new byte[256];
    cuDeviceGetName(name, name.length, dev);
    out.println("GPU " + device + ": " + new String(name, java.nio.charset.StandardCharsets.US_ASCII).trim().replace("\0", ""));
    CUcontext ctx = new CUcontext();
    Cuda.check(cuDevicePrimaryCtxRetain(ctx, dev), "cuDevicePrimaryCtxRetain");
    try {
      Cuda.check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
      stream = new CUstream();
      Cuda.check(cuStreamCreate(stream, 0), "cuStreamCreate");
      rnd = new SplittableRandom(seed);
      out.printf("seed %d; pass: every element finite and |out-ref| <= u*|ref| + kappa*M (u: unit roundoff of the output type, "
          + "M: magnitude of the case, kappa %.0e, attention %.0e); copies and greedy sampling exact, seeded sampling by a chi-square test at p = 1e-4; outputs poisoned with 0xFF first%n", seed, KAPPA,
          KAPPA_ATTENTION);
      out.println("kernel         dtype case                                     maxAbsErr maxRelErr result");
      try (ModelKernels kernels = new ModelKernels()) {
        k = kernels;
        for (DType t : types) {
          runAll(t);
        }
        samplingCases();
      } finally {
        cuStreamDestroy(stream);
      }
    } finally {
      cuDevicePrimaryCtxRelease(dev);
    }
    long failed = results.stream().filter(r -> !r.pass()).count();
    out.printf("kernelcheck: %d passed, %d failed%n", results.size() - failed, failed);
    out.flush();
    return failed == 0 ? ExitCodes.OK : ExitCodes.CHECK_FAILED;
  }

  private void runAll(DType t) {
    for (int hidden : new int[] {512, 4096}) {
      guard("embed", t, "hidden=" + hidden, () -> embedCase(t, hidden));
    }
    for (int hidden : new int[] {512, 4096}) {
      for (int mode = 0; mode <= 2; mode++) {
        int m = mode;
        guard("add_rmsnorm", t, "hidden=" + hidden + ",mode=" + mode, () -> rmsnormCase(t, hidden, m));
      }
    }
    for (int hd : new int[] {64, 128}) {
      for (int variant = 0; variant < 4; variant++) {
        boolean bias = (variant & 1) != 0;
        boolean norm = (variant & 2) != 0;
        guard("qkv_rope", t, "hd=" + hd + ",bias=" + bias + ",qknorm=" + norm, () -> ropeCase(t, hd, bias, norm));
      }
    }
    // SHUFFLED, 39 query tokens. Split-key kernel at head dim 64/128 (256), key slices: {8,2} 4 (4), {4,4} 2 (2),
    // {16,2} 2 (1), {12,1} 3 (2), {32,8} 1 (1): one slice writes the output without the combine kernel. Head dim 96: the
    // per-head kernel. PREFILL (head dims 64, 128): 6 tensor-core tiles and 12 tokens left to the split-key kernel.
    KernelCheckAttention ac = new KernelCheckAttention(k, stream, rnd, this::sync);
    int[][] headConfigs = {{8, 2}, {4, 4}, {16, 2}, {12, 1}, {32, 8}};
    for (KernelCheckAttention.Layout layout : KernelCheckAttention.Layout.values()) {
      for (int[] hc : headConfigs) {
        for (int hd : layout == KernelCheckAttention.Layout.PREFILL ? new int[] {64, 128} : new int[] {64, 96, 128, 256}) {
          for (double sharp : new double[] {1, 8}) {
            String nm = (layout == KernelCheckAttention.Layout.PREFILL ? "prefill," : "") + "hq=" + hc[0] + ",hk=" + hc[1] + ",hd=" + hd
                + ",scale=" + (int) sharp + "/sqrt(hd)";
            guard("attention", t, nm, () -> {
              KernelCheckAttention.Outcome o = ac.attention(t, hc[0], hc[1], hd, sharp / Math.sqrt(hd), layout);
              add(result("attention", t, nm + (o.tiles() > 0 ? ",tiles=" + o.tiles() + "+" + o.rest() : ""), o.stat()));
            });
          }
        }
      }
    }
    guard("silu_mul", t, "n=5,inter=1000", () -> siluCase(t));
    guard("gather_rows", t, "m=6,cols=700", () -> gatherCase(t));
  }

  private interface Case {
    void run() throws Exception;
  }

  /** Runs a case; an exception (a CUDA error, an illegal address) is a FAIL line of its own. */
  private void guard(String kernel, DType t, String name, Case c) {
    try {
      c.run();
    } catch (Exception e) {
      out.println("  " + kernel + " " + t + " " + name + ": " + e);
      add(new Result(kernel, t.name(), name, Double.NaN, Double.NaN, false));
    }
  }

  private void add(Result r) {
    results.add(r);
    out.println(r.line());
    out.flush();
  }

  // ---- cases ----

  private void embedCase(DType t, int hidden) {
    int vocabStart = 256;
    int vocabRows = 300;
    int[] ids = {256, 555, 556, 255, 0, 999, 300, -5, 400};
    int n = ids.length;
    byte[] table = HostTensors.random(t, (long) vocabRows * hidden, rnd.nextLong());
    try (KernelCheckArena a = new KernelCheckArena()) {
      long dIds = a.upload(ints(ids));
      long dTable = a.upload(table);
      long dOut = a.poisoned((long) n * hidden * t.bytes());
      k.embed(t, dIds, n, dTable, vocabStart, vocabRows, hidden, dOut, stream);
      sync();
      double[] ref = ModelReference.embed(ids, HostTensors.decode(table, t), vocabStart, vocabRows, hidden);
      add(result("embed", t, "hidden=" + hidden, compare(HostTensors.decode(a.download(dOut, n * hidden * t.bytes()), t), ref, 0, 0, 0)));
    }
  }

  private void rmsnormCase(DType t, int hidden, int mode) {
    int n = 5;
    float eps = 1e-6f;
    float[] residual = new float[n * hidden];
    for (int i = 0; i < residual.length; i++) {
      residual[i] = (float) (rnd.nextDouble() * 4 - 2);
    }
    byte[] delta = HostTensors.random(t, (long) n * hidden, rnd.nextLong());
    byte[] weight = encode(t, uniform(hidden, 0.5, 1.5));
    try (KernelCheckArena a = new KernelCheckArena()) {
      long dRes = mode == 0 ? a.poisoned((long) n * hidden * 4) : a.upload(floats(residual));
      long dDelta = mode == 2 ? 0 : a.upload(delta);
      long dWeight = a.upload(weight);
      long dOut = a.poisoned((long) n * hidden * t.bytes());
      k.addRmsNorm(t, dRes, dDelta, dWeight, dOut, n, hidden, eps, mode, stream);
      sync();
      double[] resIn = new double[residual.length];
      for (int i = 0; i < residual.length; i++) {
        resIn[i] = residual[i];
      }
      ModelReference.Norm ref = ModelReference.addRmsNorm(resIn, HostTensors.decode(delta, t), HostTensors.decode(weight, t), n, hidden,
          eps, mode);
      double[] gotRes = HostTensors.decode(a.download(dRes, n * hidden * 4), DType.fp32);
      double[] gotOut = HostTensors.decode(a.download(dOut, n * hidden * t.bytes()), t);
      String nm = "hidden=" + hidden + ",mode=" + mode;
      add(result("add_rmsnorm", t, nm + ",residual", compare(gotRes, ref.residual(), HostTensors.unitRoundoff(DType.fp32), 0, 0)));
      add(result("add_rmsnorm", t, nm + ",out", compare(gotOut, ref.out(), HostTensors.unitRoundoff(t), KAPPA, maxAbs(ref.out()))));
    }
  }

  private void ropeCase(DType t, int hd, boolean withBias, boolean withNorm) {
    int hq = 8;
    int hk = 2;
    int heads = hq + 2 * hk;
    int maxPos = 4096;
    int[] positions = {0, 1, 17, 4095, 300, 2048, 5};
    int[] slots = {3, 17, -1, 0, 23, -1, 9};
    int n = positions.length;
    int numSlots = 24;
    float eps = 1e-6f;
    float[][] cs = ModelReference.ropeTables(maxPos, hd, 1e6);
    byte[] qkv = HostTensors.random(t, (long) n * heads * hd, rnd.nextLong());
    byte[] bias = withBias ? encode(t, uniform(heads * hd, -0.5, 0.5)) : null;
    byte[] qNorm = withNorm ? encode(t, uniform(hd, 0.5, 1.5)) : null;
    byte[] kNorm = withNorm ? encode(t, uniform(hd, 0.5, 1.5)) : null;
    long cacheBytes = (long) numSlots * hk * hd * t.bytes();
    try (KernelCheckArena a = new KernelCheckArena()) {
      long dQkv = a.upload(qkv);
      long dBias = bias == null ? 0 : a.upload(bias);
      long dQn = qNorm == null ? 0 : a.upload(qNorm);
      long dKn = kNorm == null ? 0 : a.upload(kNorm);
      long dCos = a.upload(floats(cs[0]));
      long dSin = a.upload(floats(cs[1]));
      long dPos = a.upload(ints(positions));
      long dSlots = a.upload(ints(slots));
      long dQ = a.poisoned((long) n * hq * hd * t.bytes());
      long dK = a.poisoned(cacheBytes);
      long dV = a.poisoned(cacheBytes);
      k.qkvRope(t, dQkv, dBias, dQn, dKn, eps, dCos, dSin, dPos, dSlots, dQ, dK, dV, n, hq, hk, hd, stream);
      sync();
      ModelReference.Qkv ref = ModelReference.qkvRope(HostTensors.decode(qkv, t), bias == null ? null : HostTensors.decode(bias, t),
          qNorm == null ? null : HostTensors.decode(qNorm, t), kNorm == null ? null : HostTensors.decode(kNorm, t), eps, toDouble(cs[0]),
          toDouble(cs[1]), positions, n, hq, hk, hd);
      double u = HostTensors.unitRoundoff(t);
      String nm = "hd=" + hd + ",bias=" + withBias + ",qknorm=" + withNorm;
      double[] gotQ = HostTensors.decode(a.download(dQ, n * hq * hd * t.bytes()), t);
      add(result("qkv_rope", t, nm + ",q", compare(gotQ, ref.q(), u, KAPPA, maxAbs(ref.q()))));
      byte[] kRaw = a.download(dK, (int) cacheBytes);
      byte[] vRaw = a.download(dV, (int) cacheBytes);
      int row = hk * hd;
      // Rows of tokens with a slot must hold k / v; every other slot must still hold the poison (slot < 0: no write).
      List<Double> gotK = new ArrayList<>();
      List<Double> refK = new ArrayList<>();
      List<Double> gotV = new ArrayList<>();
      List<Double> refV = new ArrayList<>();
      double[] kc = HostTensors.decode(kRaw, t);
      double[] vc = HostTensors.decode(vRaw, t);
      Set<Integer> written = new HashSet<>();
      for (int i = 0; i < n; i++) {
        if (slots[i] >= 0) {
          written.add(slots[i]);
          for (int e = 0; e < row; e++) {
            gotK.add(kc[slots[i] * row + e]);
            refK.add(ref.k()[i * row + e]);
            gotV.add(vc[slots[i] * row + e]);
            refV.add(ref.v()[i * row + e]);
          }
        }
      }
      long touched = 0;
      for (int s = 0; s < numSlots; s++) {
        if (!written.contains(s)) {
          touched += poisonBroken(kRaw, (long) s * row * t.bytes(), row * t.bytes()) + poisonBroken(vRaw, (long) s * row * t.bytes(),
              row * t.bytes());
        }
      }
      if (touched > 0) {
        out.println("  qkv_rope " + t + " " + nm + ": " + touched + " bytes written outside the tokens' slots");
      }
      double[] rk = unbox(refK);
      double[] rv = unbox(refV);
      Stat sk = compare(unbox(gotK), rk, u, KAPPA, maxAbs(rk));
      Stat sv = compare(unbox(gotV), rv, u, KAPPA, maxAbs(rv));
      add(result("qkv_rope", t, nm + ",k_cache", new Stat(sk.maxAbs(), sk.maxRel(), sk.bad() + touched)));
      add(result("qkv_rope", t, nm + ",v_cache", sv));
    }
  }

  private void siluCase(DType t) {
    int n = 5;
    int inter = 1000;
    byte[] gu = encode(t, uniform(n * 2 * inter, -6, 6));
    try (KernelCheckArena a = new KernelCheckArena()) {
      long dIn = a.upload(gu);
      long dOut = a.poisoned((long) n * inter * t.bytes());
      k.siluMul(t, dIn, dOut, n, inter, stream);
      sync();
      double[] ref = ModelReference.siluMul(HostTensors.decode(gu, t), n, inter);
      double[] got = HostTensors.decode(a.download(dOut, n * inter * t.bytes()), t);
      add(result("silu_mul", t, "n=5,inter=1000", compare(got, ref, HostTensors.unitRoundoff(t), KAPPA, maxAbs(ref))));
    }
  }

  private void gatherCase(DType t) {
    int cols = 700;
    int[] rows = {5, 0, 19, 5, 3, 18};
    byte[] in = HostTensors.random(t, 20L * cols, rnd.nextLong());
    try (KernelCheckArena a = new KernelCheckArena()) {
      long dIn = a.upload(in);
      long dRows = a.upload(ints(rows));
      long dOut = a.poisoned((long) rows.length * cols * t.bytes());
      k.gatherRows(t, dIn, dRows, dOut, rows.length, cols, stream);
      sync();
      double[] ref = ModelReference.gatherRows(HostTensors.decode(in, t), rows, cols);
      double[] got = HostTensors.decode(a.download(dOut, rows.length * cols * t.bytes()), t);
      add(result("gather_rows", t, "m=6,cols=700", compare(got, ref, 0, 0, 0)));
    }
  }

  private void samplingCases() {
    KernelCheckSampling sc = new KernelCheckSampling(k, stream, rnd, this::sync);
    guard("sample", DType.fp32, "greedy,m=4,vocab=50000,stride=50048", () -> {
      String f = sc.greedy();
      if (!f.isEmpty()) {
        out.println("  sample greedy: " + f);
      }
      add(new Result("sample", "fp32", "greedy,m=4,vocab=50000,stride=50048", f.isEmpty() ? 0 : 1, f.isEmpty() ? 0 : 1, f.isEmpty()));
    });
    // 8000 seeded draws of one 64-id row per filter combination; chi-square against the kept distribution
    SamplingParams[] ps = {new SamplingParams(1f, 1f, 0, 0f, 11), new SamplingParams(0.7f, 1f, 10, 0f, 12),
        new SamplingParams(1.3f, 0.8f, 0, 0f, 13), new SamplingParams(1f, 1f, 0, 0.1f, 14), new SamplingParams(0.9f, 0.9f, 20, 0.05f, 15)};
    for (SamplingParams p : ps) {
      String nm = "T=" + p.temperature() + ",k=" + p.topK() + ",p=" + p.topP() + ",minp=" + p.minP();
      guard("sample", DType.fp32, nm, () -> report(nm, sc.distribution(64, p, 8000)));
    }
    SamplingParams big = new SamplingParams(0.8f, 0.95f, 50, 0.02f, 16);
    guard("sample", DType.fp32, "vocab=128256,k=50,p=0.95", () -> report("vocab=128256,k=50,p=0.95", sc.largeVocabulary(128256, big, 16)));
    SamplingParams nucleus = new SamplingParams(1f, 0.9f, 0, 0f, 17);
    guard("sample", DType.fp32, "vocab=152064,p=0.9", () -> report("vocab=152064,p=0.9", sc.largeVocabulary(152064, nucleus, 16)));
  }

  private void report(String name, KernelCheckSampling.Outcome o) {
    if (!o.pass()) {
      out.println("  sample " + name + ": " + o.failure());
    }
    add(new Result("sample", "fp32", name + (Double.isNaN(o.chi2()) ? "" : String.format(java.util.Locale.ROOT, ",chi2=%.1f/%.1f", o.chi2(),
        o.critical())), o.pass() ? 0 : 1, o.pass() ? 0 : 1, o.pass()));
  }

  private Result result(String kernel, DType t, String name, KernelCheckMath.Stat s) {
    return new Result(kernel, t.name(), name, s.maxAbs(), s.maxRel(), s.pass());
  }

  // ---- host data ----

  private double[] uniform(int count, double lo, double hi) {
    double[] v = new double[count];
    for (int i = 0; i < count; i++) {
      v[i] = lo + rnd.nextDouble() * (hi - lo);
    }
    return v;
  }

  private void sync() {
    Cuda.check(cuStreamSynchronize(stream), "cuStreamSynchronize (kernel execution)");
  }


}
