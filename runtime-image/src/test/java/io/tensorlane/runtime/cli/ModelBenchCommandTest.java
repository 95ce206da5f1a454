package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.common.ExitCodes;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code bench-model} on a machine without a GPU: bad options are rejected (exit 2, a message naming the problem) before
 * CUDA is touched, and the plan (KV cache, max model length, engine options) follows from the options.
 */
class ModelBenchCommandTest {
    /** Llama-3.1-8B's geometry with a short max_position_embeddings (config.json only: nothing is loaded). */
    static final String LLAMA_8B = """
      {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
       "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
       "rms_norm_eps": 1e-5, "max_position_embeddings": 4096, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
       "rope_theta": 500000.0,
       "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                        "original_max_position_embeddings": 8192}}
      """;

    @TempDir
    Path dir;

    private Path model() throws IOException {
        Files.writeString(dir.resolve("config.json"), LLAMA_8B);
        return dir;
    }

    private static CommandLine commandLine(ModelBenchCommand cmd) {
        CommandLine cl = new CommandLine(cmd);
        cl.setExecutionExceptionHandler((ex, c, parsed) -> Main.handle(ex, c));
        return cl;
    }

    private MainTest.Result run(String... args) {
        CommandLine cl = commandLine(new ModelBenchCommand());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        int code = cl.execute(args);
        return new MainTest.Result(code, out.toString(), err.toString());
    }

    private MainTest.Result bench(String... more) throws IOException {
        List<String> args = new ArrayList<>(List.of("--model", model().toString()));
        args.addAll(List.of(more));
        return run(args.toArray(String[]::new));
    }

    private ModelBenchPlan plan(String... more) throws IOException {
        ModelBenchCommand cmd = new ModelBenchCommand();
        List<String> args = new ArrayList<>(List.of("--model", model().toString()));
        args.addAll(List.of(more));
        commandLine(cmd).parseArgs(args.toArray(String[]::new));
        return cmd.plan();
    }

    private void rejected(String message, String... args) throws IOException {
        MainTest.Result r = bench(args);
        assertThat(r.code()).as(String.join(" ", args)).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err())
                .as(String.join(" ", args))
                .contains(message)
                .doesNotContain("libcuda")
                .doesNotContain("Exception");
    }

    @Test
    void badBatchesAreRejected() throws IOException {
        rejected("batch sizes must be 1..1024, got 0", "--batches", "1,0,8");
        rejected("batch sizes must be 1..1024, got 2048", "--batches", "2048", "--max-batch-tokens", "4096");
        rejected("batch size twice", "--batches", "8,8");
        rejected("Invalid value", "--batches", "1,x");
        rejected("less than the largest batch 128", "--max-batch-tokens", "64");
    }

    @Test
    void badCountsAreRejected() throws IOException {
        rejected("--context must be >= 1", "--context", "0");
        rejected("--warmup must be >= 1", "--warmup", "0");
        rejected("--warmup 512 must be less than --context 512", "--warmup", "512");
        rejected("--iters must be >= 1", "--iters", "0");
        rejected("--prefill-tokens and --prefill-iters must be >= 0", "--prefill-tokens", "-1");
        rejected("--kv-cache-tokens must be >= 0", "--kv-cache-tokens", "-5");
        rejected("--tp must be 1..8, got 9", "--tp", "9");
        rejected("--nccl needs --tp >= 2", "--nccl");
        rejected("cannot be combined with --virtual-ranks", "--nccl", "--tp", "2", "--virtual-ranks");
    }

    @Test
    void contextAndDecodeStepsBeyondTheModelAreRejected() throws IOException {
        rejected(
                "= 4097 tokens exceeds the model's max_position_embeddings 4096",
                "--context",
                "4047",
                "--warmup",
                "5",
                "--iters",
                "50");
        rejected("--prefill-tokens 8192 exceeds", "--prefill-tokens", "8192");
    }

    @Test
    void kvCacheTooSmallForTheLargestBatchIsRejected() throws IOException {
        // batch 128 x (512 + 50) tokens = 128 x 36 blocks of 16 = 73728 tokens; the engine rounds up to blocks (73713
        // would do)
        rejected("needs 73728 tokens of KV cache", "--kv-cache-tokens", "73712");
        rejected("needs 4608 tokens", "--batches", "1,8", "--kv-cache-tokens", "4000");
        assertThat(plan("--kv-cache-tokens", "73728").kvTokens()).isEqualTo(73728);
    }

    @Test
    void verifyKsSizeTheLogitsRowsAndTheSequences() throws IOException {
        rejected("--verify-ks: k must be 1..16, got 0", "--verify-ks", "1,0");
        rejected("--verify-ks: k must be 1..16, got 17", "--verify-ks", "17");
        ModelBenchPlan p = plan("--batches", "1,8,32", "--verify-ks", "1,2,3,4,5,6,7,8", "--iters", "5");
        assertThat(p.options().maxLogitRows()).isEqualTo(32 * 9);
        assertThat(p.seqLen()).isEqualTo(512 + 9); // a verify step of k = 8 writes positions 512..520
    }

    @Test
    void missingModelIsNamed() {
        MainTest.Result r = run("--model", dir.resolve("nope").toString());
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("config.json does not exist");
    }

    @Test
    void tpThatCannotSplitTheHeadsIsNamed() throws IOException {
        MainTest.Result r = bench("--tp", "3");
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).containsIgnoringCase("heads");
    }

    @Test
    void planSizesTheKvCacheAndTheEngine() throws IOException {
        ModelBenchPlan p = plan();
        assertThat(p.batches()).containsExactly(1, 8, 32, 128);
        assertThat(p.maxBatch()).isEqualTo(128);
        assertThat(p.seqLen()).isEqualTo(562);
        assertThat(p.maxModelLen()).isEqualTo(2048);
        assertThat(p.kvNeededTokens()).isEqualTo(73728);
        assertThat(p.kvTokens()).isEqualTo(73728);
        assertThat(p.prefillIters()).isEqualTo(50);
        assertThat(p.options().maxSeqs()).isEqualTo(128);
        assertThat(p.options().maxLogitRows()).isEqualTo(128);
        assertThat(p.options().maxBatchTokens()).isEqualTo(2048);
        assertThat(p.options().maxModelLen()).isEqualTo(2048);
        assertThat(p.options().graphs()).isTrue();

        ModelBenchPlan small = plan(
                "--batches",
                "1",
                "--context",
                "100",
                "--iters",
                "10",
                "--warmup",
                "2",
                "--prefill-tokens",
                "0",
                "--prefill-iters",
                "3",
                "--no-graphs",
                "--tp",
                "2",
                "--nccl");
        assertThat(small.seqLen()).isEqualTo(110);
        assertThat(small.maxModelLen()).isEqualTo(110);
        assertThat(small.kvNeededTokens()).isEqualTo(112);
        assertThat(small.prefillIters()).isEqualTo(3);
        assertThat(small.options().graphs()).isFalse();
        assertThat(small.options().nccl()).isTrue();
        assertThat(small.options().tp()).isEqualTo(2);
    }

    @Test
    void randomIdsStayInTheVocabulary() {
        int[] ids = ModelBenchSteps.randomIds(new SplittableRandom(1), 10_000, 300);
        assertThat(java.util.Arrays.stream(ids).allMatch(i -> i >= 0 && i < 300))
                .isTrue();
        assertThat(ModelBenchSteps.randomIds(new SplittableRandom(1), 5, 300))
                .containsExactly(ModelBenchSteps.randomIds(new SplittableRandom(1), 5, 300));
    }

    @Test
    void checkpointBytesSumsTheSafetensorsFiles() throws IOException {
        Files.write(dir.resolve("model-00001-of-00002.safetensors"), new byte[100]);
        Files.write(dir.resolve("model-00002-of-00002.safetensors"), new byte[23]);
        Files.write(dir.resolve("tokenizer.json"), new byte[1000]);
        assertThat(ModelBenchCommand.checkpointBytes(dir)).isEqualTo(123);
    }
}
