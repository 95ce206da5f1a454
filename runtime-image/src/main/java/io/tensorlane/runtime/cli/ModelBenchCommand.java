package io.tensorlane.runtime.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tensorlane.runtime.llm.BlockAllocator;
import io.tensorlane.runtime.llm.EngineOptions;
import io.tensorlane.runtime.llm.LlmEngine;
import io.tensorlane.runtime.llm.StepBatch;
import io.tensorlane.runtime.model.ModelConfig;
import io.tensorlane.runtime.model.TpLayout;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code bench-model}: loads a model like {@code generate} and times the engine's steps on random token ids.
 *
 * <p>Per batch size B: B sequences of {@code --context} random ids are prefilled (packed into steps within the token
 * budget), then {@code --warmup} + {@code --iters} decode steps run, one token per sequence per step, each at the next
 * position (the sequences grow; KV blocks are added as needed and all freed after the batch size). The first decode
 * step of a batch size runs eagerly and captures the CUDA graph; the warm-up steps cover it, so every timed step is a
 * graph replay (counted in the output). Per timed step: the wall time around {@link LlmEngine#timedStep} (input
 * upload, graph replay, synchronization, argmax read-back) and the GPU time between CUDA events on rank 0's stream
 * around the replay. Prefill: one sequence of {@code --prefill-tokens} ids, chunked by {@code --max-batch-tokens},
 * timed as a whole (sum of its steps). The KV cache is sized to what the run needs unless {@code --kv-cache-tokens}
 * is given. Prints a table (stdout) and writes {@code --json} (rewritten after each measurement, {@code complete}
 * true at the end).
 */
@Command(name = "bench-model", mixinStandardHelpOptions = true,
    description = "Time the model engine on random token ids: decode step per batch size at a given context (CUDA graphs), "
        + "prefill tokens/s, load time; a table on stdout and a JSON file.")
public final class ModelBenchCommand implements Callable<Integer> {
  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
  /** The largest decode batch accepted (graph buckets and logits buffers are sized by it). */
  static final int MAX_BATCH = 1024;
  static final int BLOCK_SIZE = EngineArgs.BLOCK_SIZE;

  @Spec
  CommandSpec spec;

  @Mixin
  EngineArgs eng = new EngineArgs();

  @Option(names = "--batches", split = ",", defaultValue = "1,8,32,128", description = "Decode batch sizes (default ${DEFAULT-VALUE}).")
  List<Integer> batches;

  @Option(names = "--context", defaultValue = "512", description = "Tokens per sequence before the first timed decode step (default ${DEFAULT-VALUE}).")
  int context;

  @Option(names = "--prefill-tokens", defaultValue = "2048", description = "Tokens of the prefill measurement; 0 = none (default ${DEFAULT-VALUE}).")
  int prefillTokens;

  @Option(names = "--warmup", defaultValue = "5", description = "Untimed steps first (>= 1: the first decode step captures the graph; default ${DEFAULT-VALUE}).")
  int warmup;

  @Option(names = "--iters", defaultValue = "50", description = "Timed decode steps per batch size (default ${DEFAULT-VALUE}).")
  int iters;

  @Option(names = "--prefill-iters", defaultValue = "0", description = "Timed prefills; 0 = --iters.")
  int prefillIters;

  @Option(names = "--kv-cache-tokens", defaultValue = "0", description = "KV cache size in tokens; 0 = what the run needs.")
  long kvCacheTokens;

  @Option(names = "--seed", defaultValue = "0", description = "Seed of the random token ids.")
  long seed;

  @Option(names = "--max-seconds", defaultValue = "0", description = "Skip the measurements that would start after this many seconds "
      + "from the start (0 = no limit); the JSON says which were skipped.")
  double maxSeconds;

  @Option(names = "--op-breakdown", description = "After each measurement, one more eager pass with a CUDA event after every operation: "
      + "GPU ms per operation (attention, each GEMM, norms, allreduces, ...), printed and in the JSON.")
  boolean opBreakdown;

  @Option(names = "--label", description = "Free text copied into the JSON (e.g. 'tp2-custom').")
  String label;

  @Option(names = "--json", description = "Write the results as JSON to this file.")
  Path json;

  /**
   * Runs {@code bench-model} on its own ({@code java -cp tensorlane-runtime.jar io.tensorlane.runtime.cli.ModelBenchCommand ...}),
   * with {@link Main}'s error handling: for a jar whose {@code Main} does not list the command yet.
   */
  public static void main(String[] args) {
    picocli.CommandLine cl = new picocli.CommandLine(new ModelBenchCommand());
    cl.setExecutionExceptionHandler((ex, cmd, parsed) -> Main.handle(ex, cmd));
    System.exit(cl.execute(args));
  }

  /**
   * What a run does, derived from the options and config.json without touching the GPU.
   *
   * @param seqLen         tokens per sequence after the last decode step (context + warm-up + iters)
   * @param kvNeededTokens the KV cache the run needs (the largest batch's sequences at seqLen, or the prefill)
   */
  record Plan(ModelConfig config, List<Integer> batches, int maxBatch, int seqLen, int maxModelLen, long kvNeededTokens, long kvTokens,
      int prefillIters, EngineOptions options) {}

  /** Checks the options against each other and the model's config (every problem before any GPU work). */
  Plan plan() {
    if (batches == null || batches.isEmpty()) {
      throw new IllegalArgumentException("--batches: give at least one batch size");
    }
    if (new HashSet<>(batches).size() != batches.size()) {
      throw new IllegalArgumentException("--batches has a batch size twice: " + batches);
    }
    for (int b : batches) {
      if (b < 1 || b > MAX_BATCH) {
        throw new IllegalArgumentException("--batches: batch sizes must be 1.." + MAX_BATCH + ", got " + b);
      }
    }
    if (context < 1) {
      throw new IllegalArgumentException("--context must be >= 1, got " + context);
    }
    if (warmup < 1) {
      throw new IllegalArgumentException("--warmup must be >= 1 (the first decode step of a batch size captures its CUDA graph), got " + warmup);
    }
    if (iters < 1) {
      throw new IllegalArgumentException("--iters must be >= 1, got " + iters);
    }
    if (prefillTokens < 0 || prefillIters < 0) {
      throw new IllegalArgumentException("--prefill-tokens and --prefill-iters must be >= 0");
    }
    if (kvCacheTokens < 0) {
      throw new IllegalArgumentException("--kv-cache-tokens must be >= 0, got " + kvCacheTokens);
    }
    if (maxSeconds < 0) {
      throw new IllegalArgumentException("--max-seconds must be >= 0, got " + maxSeconds);
    }
    if (eng.nccl && eng.virtualRanks) {
      throw new IllegalArgumentException("--nccl needs one GPU per rank: it cannot be combined with --virtual-ranks");
    }
    if (eng.nccl && eng.tp < 2) {
      throw new IllegalArgumentException("--nccl needs --tp >= 2 (one rank has no allreduce)");
    }
    int maxBatch = batches.stream().mapToInt(Integer::intValue).max().getAsInt();
    if (eng.maxBatchTokens < maxBatch) {
      throw new IllegalArgumentException("--max-batch-tokens " + eng.maxBatchTokens + " is less than the largest batch " + maxBatch
          + " (a decode step of B sequences is B tokens)");
    }
    ModelConfig config = ModelConfig.read(eng.model);
    TpLayout.of(config, Math.max(1, Math.min(eng.tp, 8)));   // a TP degree that cannot split the heads is named here
    long seqLenL = (long) context + warmup + iters;
    int limit = config.slidingWindow() != null ? Math.min(config.maxPositionEmbeddings(), config.slidingWindow()) : config.maxPositionEmbeddings();
    if (seqLenL > limit) {
      throw new IllegalArgumentException("--context " + context + " + " + (warmup + iters) + " decode steps = " + seqLenL
          + " tokens exceeds the model's " + (limit == config.maxPositionEmbeddings() ? "max_position_embeddings " : "sliding window ") + limit);
    }
    if (prefillTokens > limit) {
      throw new IllegalArgumentException("--prefill-tokens " + prefillTokens + " exceeds the model's max_position_embeddings " + limit);
    }
    int seqLen = (int) seqLenL;
    int maxModelLen = Math.max(seqLen, prefillTokens);
    long blocksPerSeq = blocks(seqLen);
    long needBlocks = Math.max((long) maxBatch * blocksPerSeq, Math.max(blocks(prefillTokens), blocks(maxModelLen)));
    long need = needBlocks * BLOCK_SIZE;
    if (kvCacheTokens > 0 && blocks(kvCacheTokens) < needBlocks) {
      throw new IllegalArgumentException("--kv-cache-tokens " + kvCacheTokens + " is too small: batch " + maxBatch + " x (context " + context
          + " + " + (warmup + iters) + " decode steps) needs " + need + " tokens of KV cache (" + needBlocks + " blocks of " + BLOCK_SIZE
          + "); give at least that or 0 (sized automatically)");
    }
    long kv = kvCacheTokens > 0 ? kvCacheTokens : need;
    EngineOptions opts = eng.options(maxBatch, maxModelLen, kv, maxBatch);
    return new Plan(config, List.copyOf(batches), maxBatch, seqLen, maxModelLen, need, kv, prefillIters > 0 ? prefillIters : iters, opts);
  }

  private static long blocks(long tokens) {
    return (tokens + BLOCK_SIZE - 1) / BLOCK_SIZE;
  }

  /** One decode measurement. */
  record DecodeResult(int batch, int firstPosition, int lastPosition, int graphReplayedSteps, ModelBenchStats wallMs, ModelBenchStats gpuMs,
      Map<String, Double> ops) {}

  /** The prefill measurement. */
  record PrefillResult(int tokens, int chunks, ModelBenchStats wallMs, ModelBenchStats gpuMs, Map<String, Double> ops) {}

  private final long startNanos = System.nanoTime();
  private final List<DecodeResult> decodes = new ArrayList<>();
  private final List<String> skipped = new ArrayList<>();
  private PrefillResult prefill;
  private ObjectNode header;

  @Override
  public Integer call() throws IOException {
    PrintWriter err = spec.commandLine().getErr();
    PrintWriter out = spec.commandLine().getOut();
    Plan plan = plan();
    long ckBytes = checkpointBytes(eng.model);
    out.printf(Locale.ROOT, "bench-model: %s, tp %d%s, %s, graphs %s; batches %s, context %d, warm-up %d, iters %d, prefill %d tokens; "
            + "KV cache %d tokens (needed %d)%n", eng.model, eng.tp, eng.virtualRanks ? " (virtual ranks)" : "", allreduceName(), eng.noGraphs ? "off" : "on",
        plan.batches(), context, warmup, iters, prefillTokens, plan.kvTokens(), plan.kvNeededTokens());
    out.flush();
    long t0 = System.nanoTime();
    try (LlmEngine engine = LlmEngine.load(plan.options(), err)) {
      double loadTotal = (System.nanoTime() - t0) / 1e9;
      header = header(plan, engine, ckBytes, loadTotal);
      out.printf(Locale.ROOT, "load: %.3f GB of weights (%.3f GB per rank) in %.2f s = %.2f GB/s of checkpoint (%.3f GB); load() total %.2f s%n",
          engine.weightBytes() / 1e9, engine.memory().weightBytesPerRank() / 1e9, engine.loadSeconds(),
          ckBytes / 1e9 / Math.max(engine.loadSeconds(), 1e-9), ckBytes / 1e9, loadTotal);
      writeJson(false);
      SplittableRandom rng = new SplittableRandom(seed);
      out.println(" batch  context   steps  replays |  wall ms: median     p10     p90 |  gpu ms: median     p10     p90 |  tokens/s (wall)");
      out.flush();
      for (int b : plan.batches()) {
        if (overBudget()) {
          skipped.add("decode batch " + b);
          out.printf(Locale.ROOT, "%6d  skipped: --max-seconds %.0f reached%n", b, maxSeconds);
          continue;
        }
        DecodeResult r = decode(engine, plan, b, rng);
        decodes.add(r);
        out.printf(Locale.ROOT, "%6d %8d %7d %8d | %15.3f %7.3f %7.3f | %14.3f %7.3f %7.3f | %15.1f%n", b, context, iters, r.graphReplayedSteps(),
            r.wallMs().median(), r.wallMs().p10(), r.wallMs().p90(), r.gpuMs().median(), r.gpuMs().p10(), r.gpuMs().p90(),
            b * 1000.0 / r.wallMs().median());
        printOps(out, r.ops());
        out.flush();
        writeJson(false);
      }
      if (prefillTokens > 0) {
        if (overBudget()) {
          skipped.add("prefill");
          out.printf(Locale.ROOT, "prefill skipped: --max-seconds %.0f reached%n", maxSeconds);
        } else {
          prefill = prefill(engine, plan, rng);
          out.printf(Locale.ROOT, "prefill %d tokens (%d step(s) of <= %d): wall median %.3f ms (p10 %.3f, p90 %.3f) = %.1f tokens/s; "
                  + "gpu median %.3f ms = %.1f tokens/s%n", prefill.tokens(), prefill.chunks(), eng.maxBatchTokens, prefill.wallMs().median(),
              prefill.wallMs().p10(), prefill.wallMs().p90(), prefill.tokens() * 1000.0 / prefill.wallMs().median(), prefill.gpuMs().median(),
              prefill.tokens() * 1000.0 / prefill.gpuMs().median());
          printOps(out, prefill.ops());
        }
      }
      writeJson(true);
      out.printf(Locale.ROOT, "bench-model: done in %.1f s%s%n", (System.nanoTime() - startNanos) / 1e9,
          json != null ? ", JSON in " + json : "");
      out.flush();
      err.flush();
    }
    return ExitCodes.OK;
  }

  private boolean overBudget() {
    return maxSeconds > 0 && (System.nanoTime() - startNanos) / 1e9 > maxSeconds;
  }

  private String allreduceName() {
    return eng.tp == 1 ? "no allreduce" : eng.nccl ? "NCCL allreduce" : "custom allreduce";
  }

  /** Prefills {@code batch} sequences of {@code context} random ids, then times decode steps at growing positions. */
  private DecodeResult decode(LlmEngine engine, Plan plan, int batch, SplittableRandom rng) {
    BlockAllocator alloc = engine.blocks();
    int vocab = plan.config().vocabSize();
    List<List<Integer>> tables = new ArrayList<>();
    for (int i = 0; i < batch; i++) {
      tables.add(new ArrayList<>());
    }
    try {
      // prefill, packed: at most maxBatchTokens tokens and maxSeqs rows per step (long contexts chunked)
      int seq = 0;
      int done = 0;
      while (seq < batch) {
        StepBatch.Builder sb = new StepBatch.Builder(alloc.blockSize(), engine.maxBlocksPerSeq());
        while (seq < batch && sb.tokens() < eng.maxBatchTokens && sb.rows() < plan.maxBatch()) {
          int chunk = Math.min(context - done, eng.maxBatchTokens - sb.tokens());
          ensure(alloc, tables.get(seq), done + chunk);
          boolean last = done + chunk == context;
          sb.add(tables.get(seq), randomIds(rng, chunk, vocab), done, last ? StepBatch.Logits.LAST : StepBatch.Logits.NONE);
          done += chunk;
          if (last) {
            seq++;
            done = 0;
          }
        }
        engine.step(sb.build(), false);
      }
      double[] wall = new double[iters];
      double[] gpu = new double[iters];
      int replays = 0;
      StepBatch last = null;
      for (int k = 0; k < warmup + iters; k++) {
        int pos = context + k;
        StepBatch.Builder sb = new StepBatch.Builder(alloc.blockSize(), engine.maxBlocksPerSeq());
        for (List<Integer> t : tables) {
          ensure(alloc, t, pos + 1);
          sb.add(t, randomIds(rng, 1, vocab), pos, StepBatch.Logits.LAST);
        }
        StepBatch step = sb.build();
        last = step;
        long s = System.nanoTime();
        LlmEngine.TimedStep ts = engine.timedStep(step);
        long e = System.nanoTime();
        if (k >= warmup) {
          wall[k - warmup] = (e - s) / 1e6;
          gpu[k - warmup] = ts.gpuMillis();
          replays += ts.graphReplayed() ? 1 : 0;
        }
      }
      Map<String, Double> ops = opBreakdown && last != null ? engine.profileStep(last) : null;
      return new DecodeResult(batch, context, context + warmup + iters - 1, replays, ModelBenchStats.of(wall), ModelBenchStats.of(gpu), ops);
    } finally {
      for (List<Integer> t : tables) {
        alloc.release(t);
      }
    }
  }

  /** One sequence of {@code --prefill-tokens} random ids, chunked; each timed sample is the whole prefill. */
  private PrefillResult prefill(LlmEngine engine, Plan plan, SplittableRandom rng) {
    BlockAllocator alloc = engine.blocks();
    List<Integer> table = new ArrayList<>();
    int[] ids = randomIds(rng, prefillTokens, plan.config().vocabSize());
    List<StepBatch> steps = new ArrayList<>();
    try {
      ensure(alloc, table, prefillTokens);
      for (int from = 0; from < prefillTokens; from += eng.maxBatchTokens) {
        int to = Math.min(prefillTokens, from + eng.maxBatchTokens);
        steps.add(new StepBatch.Builder(alloc.blockSize(), engine.maxBlocksPerSeq()).add(table, java.util.Arrays.copyOfRange(ids, from, to), from,
            to == prefillTokens ? StepBatch.Logits.LAST : StepBatch.Logits.NONE).build());
      }
      int n = plan.prefillIters();
      double[] wall = new double[n];
      double[] gpu = new double[n];
      for (int k = 0; k < warmup + n; k++) {
        double w = 0;
        double g = 0;
        for (StepBatch sb : steps) {
          long s = System.nanoTime();
          LlmEngine.TimedStep ts = engine.timedStep(sb);
          w += (System.nanoTime() - s) / 1e6;
          g += ts.gpuMillis();
        }
        if (k >= warmup) {
          wall[k - warmup] = w;
          gpu[k - warmup] = g;
        }
      }
      Map<String, Double> ops = null;
      if (opBreakdown) {
        ops = new LinkedHashMap<>();
        for (StepBatch sb : steps) {
          Map<String, Double> sum = ops;
          engine.profileStep(sb).forEach((k, v) -> sum.merge(k, v, Double::sum));
        }
      }
      return new PrefillResult(prefillTokens, steps.size(), ModelBenchStats.of(wall), ModelBenchStats.of(gpu), ops);
    } finally {
      alloc.release(table);
    }
  }

  /** One line of GPU ms per operation (--op-breakdown): total, then each operation with its share. */
  private static void printOps(PrintWriter out, Map<String, Double> ops) {
    if (ops == null) {
      return;
    }
    double total = ops.values().stream().mapToDouble(Double::doubleValue).sum();
    StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "        ops (one eager pass, gpu ms): total %.3f:", total));
    ops.forEach((k, v) -> b.append(String.format(Locale.ROOT, " %s %.3f (%.0f%%)", k, v, total > 0 ? 100 * v / total : 0)));
    out.println(b);
  }

  private static void putOps(ObjectNode o, Map<String, Double> ops) {
    if (ops != null) {
      ObjectNode n = o.putObject("ops_gpu_ms_eager");
      ops.forEach(n::put);
    }
  }

  private static void ensure(BlockAllocator alloc, List<Integer> table, long tokens) {
    if (!alloc.ensure(table, tokens)) {
      throw new IllegalStateException("the KV cache (" + alloc.blocks() + " blocks, " + alloc.freeBlocks() + " free) cannot hold " + tokens
          + " more tokens of a sequence");
    }
  }

  static int[] randomIds(SplittableRandom rng, int n, int vocab) {
    int[] ids = new int[n];
    for (int i = 0; i < n; i++) {
      ids[i] = rng.nextInt(vocab);
    }
    return ids;
  }

  /** Sum of the sizes of {@code *.safetensors} in the model directory. */
  static long checkpointBytes(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      long sum = 0;
      for (Path p : s.filter(p -> p.getFileName().toString().endsWith(".safetensors")).toList()) {
        sum += Files.size(p);
      }
      return sum;
    }
  }

  private ObjectNode header(Plan plan, LlmEngine engine, long ckBytes, double loadTotal) {
    ObjectNode o = JSON.createObjectNode();
    o.put("kind", "tensorlane-bench-model");
    o.put("date", Instant.now().toString());
    if (label != null) {
      o.put("label", label);
    }
    o.put("model", eng.model.toString());
    ModelConfig c = plan.config();
    ObjectNode cfg = o.putObject("config");
    cfg.put("architecture", c.architecture().toString());
    cfg.put("layers", c.numLayers());
    cfg.put("hidden", c.hiddenSize());
    cfg.put("intermediate", c.intermediateSize());
    cfg.put("heads", c.numHeads());
    cfg.put("kv_heads", c.numKvHeads());
    cfg.put("head_dim", c.headDim());
    cfg.put("vocab", c.vocabSize());
    cfg.put("dtype", c.dtype().toString());
    cfg.put("tied_embeddings", c.tieWordEmbeddings());
    o.put("tp", eng.tp);
    o.put("virtual_ranks", eng.virtualRanks);
    o.put("allreduce", eng.tp == 1 ? "none" : eng.nccl ? "nccl" : "custom");
    o.put("graphs", !eng.noGraphs);
    o.put("context", context);
    o.put("warmup", warmup);
    o.put("iters", iters);
    o.put("prefill_iters", plan.prefillIters());
    o.put("max_batch_tokens", eng.maxBatchTokens);
    o.put("max_model_len", plan.maxModelLen());
    o.put("kv_cache_tokens", engine.memory().kvTokens());
    o.put("seed", seed);
    ObjectNode load = o.putObject("load");
    load.put("seconds", engine.loadSeconds());
    load.put("total_seconds", loadTotal);
    load.put("checkpoint_bytes", ckBytes);
    load.put("weight_bytes", engine.weightBytes());
    load.put("weight_bytes_per_rank", engine.memory().weightBytesPerRank());
    load.put("checkpoint_gb_per_s", ckBytes / 1e9 / Math.max(engine.loadSeconds(), 1e-9));
    ObjectNode mem = o.putObject("memory_per_rank");
    mem.put("weights", engine.memory().weightBytesPerRank());
    mem.put("kv", engine.memory().kvBytesPerRank());
    mem.put("activations", engine.memory().activationBytesPerRank());
    mem.put("allreduce_buffers", engine.memory().allreduceBytesPerRank());
    o.put("timing", "wall_ms: System.nanoTime around LlmEngine.timedStep (input upload, forward/graph replay, synchronize, argmax "
        + "read-back); gpu_ms: CUDA events on rank 0's stream around the forward/graph replay. Decode step k of a batch writes position "
        + "context + k; the first warm-up step captures the graph.");
    return o;
  }

  private static void stats(ObjectNode parent, String name, ModelBenchStats s) {
    ObjectNode o = parent.putObject(name);
    o.put("n", s.n());
    o.put("median", s.median());
    o.put("p10", s.p10());
    o.put("p90", s.p90());
    o.put("min", s.min());
    o.put("max", s.max());
    o.put("mean", s.mean());
  }

  private void writeJson(boolean complete) throws IOException {
    if (json == null || header == null) {
      return;
    }
    ObjectNode o = header.deepCopy();
    o.put("complete", complete);
    ArrayNode d = o.putArray("decode");
    for (DecodeResult r : decodes) {
      ObjectNode x = d.addObject();
      x.put("batch", r.batch());
      x.put("context", context);
      x.put("first_position", r.firstPosition());
      x.put("last_position", r.lastPosition());
      x.put("graph_replayed_steps", r.graphReplayedSteps());
      stats(x, "wall_ms", r.wallMs());
      stats(x, "gpu_ms", r.gpuMs());
      x.put("tokens_per_s", r.batch() * 1000.0 / r.wallMs().median());
      x.put("tokens_per_s_gpu", r.batch() * 1000.0 / r.gpuMs().median());
      putOps(x, r.ops());
    }
    if (prefill != null) {
      ObjectNode p = o.putObject("prefill");
      p.put("tokens", prefill.tokens());
      p.put("chunks", prefill.chunks());
      stats(p, "wall_ms", prefill.wallMs());
      stats(p, "gpu_ms", prefill.gpuMs());
      p.put("tokens_per_s", prefill.tokens() * 1000.0 / prefill.wallMs().median());
      p.put("tokens_per_s_gpu", prefill.tokens() * 1000.0 / prefill.gpuMs().median());
      putOps(p, prefill.ops());
    }
    ArrayNode sk = o.putArray("skipped");
    skipped.forEach(sk::add);
    o.put("elapsed_seconds", (System.nanoTime() - startNanos) / 1e9);
    Path parent = json.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    Path tmp = json.resolveSibling(json.getFileName() + ".tmp");
    JSON.writeValue(tmp.toFile(), o);
    Files.move(tmp, json, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
  }
}
