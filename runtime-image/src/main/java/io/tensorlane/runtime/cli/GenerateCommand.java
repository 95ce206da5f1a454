package io.tensorlane.runtime.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.llm.EngineOptions;
import io.tensorlane.runtime.llm.Generator;
import io.tensorlane.runtime.llm.LlmEngine;
import io.tensorlane.runtime.options.EngineArgs;
import io.tensorlane.runtime.options.EngineCommand;
import io.tensorlane.runtime.text.ModelTokenizer;
import io.tensorlane.runtime.text.SamplingParams;
import io.tensorlane.runtime.text.TopLogprobs;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Loads a Hugging Face model onto the GPUs (tensor-parallel) and continues prompts. */
@Command(
        name = "generate",
        mixinStandardHelpOptions = true,
        description =
                "Load a Hugging Face model directory (Llama, Mistral, Qwen2, Qwen3; bf16/fp16 safetensors), shard it over --tp GPUs "
                        + "and continue prompts; prints the text (or JSON) with load time and prefill/decode tokens per second.")
public final class GenerateCommand implements Callable<Integer>, EngineCommand {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Spec
    CommandSpec spec;

    @Mixin
    EngineArgs args = new EngineArgs();

    @Option(names = "--prompt", description = "A prompt (text).")
    List<String> prompts = new ArrayList<>();

    @Option(names = "--prompts-file", description = "JSON lines, each {\"text\": \"...\"} or {\"ids\": [..]}.")
    Path promptsFile;

    @Option(
            names = "--max-tokens",
            defaultValue = "64",
            description = "Tokens to generate per prompt (default ${DEFAULT-VALUE}).")
    int maxTokens;

    @Option(names = "--temperature", defaultValue = "0", description = "0 = greedy (default ${DEFAULT-VALUE}).")
    float temperature;

    @Option(names = "--top-p", defaultValue = "1")
    float topP;

    @Option(names = "--top-k", defaultValue = "0", description = "0 = off.")
    int topK;

    @Option(names = "--min-p", defaultValue = "0")
    float minP;

    @Option(names = "--seed", defaultValue = "0")
    long seed;

    @Option(
            names = "--seed-per-prompt",
            description = "Prompt i samples with seed --seed + i (default: every prompt with --seed, so repeated "
                    + "prompts draw the same tokens); for distribution checks over many copies of a prompt.")
    boolean seedPerPrompt;

    @Option(names = "--ignore-eos", description = "Keep generating after an end-of-sequence token.")
    boolean ignoreEos;

    @Option(names = "--json", description = "One JSON line per prompt (ids, text, logprobs) and a summary line.")
    boolean json;

    @Option(
            names = "--logprobs",
            defaultValue = "0",
            description = "Top-K log-probabilities of every generated step (JSON).")
    int logprobs;

    @Option(
            names = "--dump-logits",
            description =
                    "Write each prompt's prefill logits to DIR/prompt-<i>.f32 (float32 LE, [prompt tokens, vocab]).")
    Path dumpLogits;

    @Option(
            names = "--max-seqs",
            defaultValue = "64",
            description = "Most sequences per step (default ${DEFAULT-VALUE}).")
    int maxSeqs;

    @Option(
            names = "--scheduler",
            description = "Run the prompts through the serving scheduler (as --speculative does) also without "
                    + "speculation, timing prefill and decode together: a like-for-like base for a speed-up ratio.")
    boolean scheduler;

    @Override
    public EngineOptions engineOptions(java.util.Map<String, String> env, PrintWriter err) {
        EngineArgs.Resolved eng = args.resolve(env, EngineArgs.DEFAULT_MEMORY_FRACTION, err);
        int logitRows = dumpLogits != null ? eng.maxBatchTokens() : maxSeqs;
        return eng.options(Math.min(maxSeqs, eng.maxBatchTokens()), eng.maxModelLen(), eng.kvCacheTokens(), logitRows);
    }

    @Override
    public Integer call() throws IOException {
        PrintWriter err = spec.commandLine().getErr();
        PrintWriter out = spec.commandLine().getOut();
        SamplingParams sampling = new SamplingParams(temperature, topP, topK, minP, seed);
        if (maxTokens < 1) {
            throw new IllegalArgumentException("--max-tokens must be >= 1");
        }
        if (logprobs < 0 || logprobs > 20) {
            throw new IllegalArgumentException("--logprobs must be 0..20");
        }
        EngineOptions opts = engineOptions(System.getenv(), err);
        io.tensorlane.runtime.sched.SpeculativeConfig spec = args.resolve(
                        System.getenv(), EngineArgs.DEFAULT_MEMORY_FRACTION, null)
                .speculative();
        if ((spec != null || scheduler) && dumpLogits != null) {
            throw new IllegalArgumentException("--dump-logits cannot be combined with --speculative or --scheduler ("
                    + "both run through the scheduler, which keeps no prompt logits)");
        }
        try (ModelTokenizer tok = ModelTokenizer.load(opts.modelDir())) {
            List<int[]> ids = readPrompts(tok);
            if (ids.isEmpty()) {
                throw new IllegalArgumentException("no prompt: give --prompt or --prompts-file");
            }
            try (io.tensorlane.runtime.llm.DraftModel.Engines engines =
                    io.tensorlane.runtime.llm.DraftModel.load(opts, spec, err)) {
                LlmEngine engine = engines.target();
                List<Generator.Request> reqs = new ArrayList<>();
                for (int i = 0; i < ids.size(); i++) {
                    SamplingParams sp =
                            seedPerPrompt ? new SamplingParams(temperature, topP, topK, minP, seed + i) : sampling;
                    reqs.add(new Generator.Request(ids.get(i), maxTokens, sp, ignoreEos, logprobs, dumpLogits != null));
                }
                Generator gen = new Generator(engine, tok.eosTokenIds());
                SpeculativeGenerate sg = new SpeculativeGenerate();
                List<Generator.Result> results;
                try {
                    results = spec == null && !scheduler
                            ? gen.run(reqs)
                            : sg.run(engine, spec, engines.proposer(), reqs, tok.eosTokenIds());
                } catch (InterruptedException
                        | java.util.concurrent.ExecutionException
                        | java.util.concurrent.TimeoutException e) {
                    throw new IllegalStateException("speculative generation did not finish: " + e, e);
                }
                // the speculative run's own counts: all its steps count as decode (prefill is not timed apart)
                Generator.Stats st = spec == null && !scheduler
                        ? gen.stats()
                        : new Generator.Stats(
                                0,
                                0,
                                (int) sg.stats().tokens(),
                                (int) sg.stats().steps(),
                                sg.stats().seconds());
                if (dumpLogits != null) {
                    Files.createDirectories(dumpLogits);
                    for (int i = 0; i < results.size(); i++) {
                        writeFloats(
                                dumpLogits.resolve("prompt-" + i + ".f32"),
                                results.get(i).promptLogits());
                    }
                }
                double prefillTps = st.prefillTokens() / Math.max(st.prefillSeconds(), 1e-9);
                double decodeTps = st.decodeTokens() / Math.max(st.decodeSeconds(), 1e-9);
                for (int i = 0; i < results.size(); i++) {
                    Generator.Result r = results.get(i);
                    String text = tok.decode(r.generated(), true);
                    if (json) {
                        out.println(JSON.writeValueAsString(resultJson(i, r, text)));
                    } else {
                        out.println("--- prompt " + i + " (" + r.promptIds().length + " tokens) -> "
                                + r.generated().length + " tokens, " + r.finishReason());
                        out.println(tok.decode(r.promptIds(), true) + text);
                    }
                }
                ObjectNode sum = JSON.createObjectNode();
                sum.put("model", opts.modelDir().toString());
                sum.put("tp", opts.tp());
                sum.put("virtual_ranks", opts.virtualRanks());
                sum.put("load_seconds", engine.loadSeconds());
                sum.put("weight_bytes", engine.weightBytes());
                sum.put("prefill_tokens", st.prefillTokens());
                sum.put("prefill_seconds", st.prefillSeconds());
                sum.put("prefill_tokens_per_s", prefillTps);
                sum.put("decode_tokens", st.decodeTokens());
                sum.put("decode_steps", st.decodeSteps());
                sum.put("decode_seconds", st.decodeSeconds());
                sum.put("decode_tokens_per_s", decodeTps);
                sum.put("kv_tokens", engine.memory().kvTokens());
                sum.put("kv_dtype", engine.memory().kvDtype().toString());
                sum.put("kv_bytes", engine.memory().kvBytesPerRank());
                sum.put("kv_bytes_per_block", engine.memory().kvBytesPerBlock());
                LlmEngine.GraphReplays gr = engine.graphReplays();
                sum.put("graph_replays", gr.steps());
                sum.put("verify_graph_replays", gr.verifySteps());
                if (sg.stats() != null) {
                    sum.put("steady_tokens_per_s", sg.stats().steadyTokensPerSecond());
                }
                if (spec != null) {
                    var c = sg.stats().counts();
                    sum.put("speculative", spec.toString());
                    if (engines.draft() != null) {
                        LlmEngine.MemoryReport dm = engines.draft().engine().memory();
                        sum.put("draft_weight_bytes", dm.weightBytesPerRank());
                        sum.put("draft_kv_bytes", dm.kvBytesPerRank());
                        sum.put("draft_kv_tokens", dm.kvTokens());
                        sum.put(
                                "draft_graph_replays",
                                engines.draft().engine().graphReplays().steps());
                        sum.put("draft_steps", engines.draft().work().steps());
                        sum.put("draft_seconds", engines.draft().work().seconds());
                    }
                    sum.put("spec_drafts", c.drafts());
                    sum.put("spec_draft_tokens", c.draftTokens());
                    sum.put("spec_accepted_tokens", c.accepted());
                    ArrayNode at = sum.putArray("spec_accepted_per_position");
                    for (long x : c.acceptedAt()) {
                        at.add(x);
                    }
                }
                if (json) {
                    ObjectNode line = JSON.createObjectNode();
                    line.set("summary", sum);
                    out.println(JSON.writeValueAsString(line));
                }
                err.printf(
                        "generate: load %.2f s, prefill %d tokens in %.3f s (%.1f tok/s), decode %d tokens in %d steps, %.3f s (%.1f tok/s)%n",
                        engine.loadSeconds(),
                        st.prefillTokens(),
                        st.prefillSeconds(),
                        prefillTps,
                        st.decodeTokens(),
                        st.decodeSteps(),
                        st.decodeSeconds(),
                        decodeTps);
                out.flush();
                err.flush();
            }
        }
        return ExitCodes.OK;
    }

    private static ObjectNode resultJson(int index, Generator.Result r, String text) {
        ObjectNode o = JSON.createObjectNode();
        o.put("index", index);
        ArrayNode p = o.putArray("prompt_ids");
        for (int id : r.promptIds()) {
            p.add(id);
        }
        ArrayNode g = o.putArray("generated_ids");
        for (int id : r.generated()) {
            g.add(id);
        }
        o.put("text", text);
        o.put("finish_reason", r.finishReason());
        if (!r.logprobs().isEmpty()) {
            ArrayNode lp = o.putArray("logprobs");
            for (TopLogprobs t : r.logprobs()) {
                ObjectNode s = lp.addObject();
                s.put("token", t.token());
                s.put("logprob", t.logprob());
                ArrayNode top = s.putArray("top");
                for (int k = 0; k < t.topIds().length; k++) {
                    top.addArray().add(t.topIds()[k]).add(t.topLogprobs()[k]);
                }
            }
        }
        return o;
    }

    private List<int[]> readPrompts(ModelTokenizer tok) throws IOException {
        List<int[]> out = new ArrayList<>();
        for (String p : prompts) {
            out.add(tok.encode(p, true));
        }
        if (promptsFile != null) {
            int line = 0;
            for (String l : Files.readAllLines(promptsFile)) {
                line++;
                if (l.isBlank()) {
                    continue;
                }
                JsonNode n;
                try {
                    n = JSON.readTree(l);
                } catch (IOException e) {
                    throw new IllegalArgumentException(
                            promptsFile + " line " + line + ": not JSON (" + e.getMessage() + ")");
                }
                if (n.has("ids") && n.get("ids").isArray()) {
                    int[] ids = new int[n.get("ids").size()];
                    for (int i = 0; i < ids.length; i++) {
                        ids[i] = n.get("ids").get(i).asInt();
                    }
                    out.add(ids);
                } else if (n.has("text") && n.get("text").isTextual()) {
                    out.add(tok.encode(n.get("text").asText(), true));
                } else {
                    throw new IllegalArgumentException(
                            promptsFile + " line " + line + ": expected {\"text\": \"...\"} or {\"ids\": [...]}");
                }
            }
        }
        return out;
    }

    private static void writeFloats(Path file, float[] data) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(data.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(data);
        try (FileChannel ch = FileChannel.open(
                file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            ch.write(b);
        }
    }
}
