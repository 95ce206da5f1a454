package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.contract.AlgorithmTable;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.llm.EngineOptions;
import io.tensorlane.runtime.llm.KvCacheDtype;
import io.tensorlane.runtime.options.EngineArgs;
import io.tensorlane.runtime.options.EngineCommand;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * One command-line vocabulary for the engine: every command that loads a model takes the same engine options (names,
 * types, defaults, help), each flag wins over its {@link EngineEnv} variable, the variable is used without the flag,
 * and a bad value gives the same clear message on every command. Parsed with picocli, no engine is started.
 */
class EngineVocabularyTest {
    static final List<String> MODEL_COMMANDS = List.of("generate", "bench-model", "serve", "prefixcheck");

    static final List<String> ENGINE_OPTIONS = List.of(
            "--model",
            "--tp",
            "--virtual-ranks",
            "--max-model-len",
            "--max-batch-tokens",
            "--kv-cache-tokens",
            KvCacheDtype.OPTION,
            "--memory-fraction",
            "--no-graphs",
            "--nccl",
            "--nccl-lib",
            "--baseline-kernels");

    @TempDir
    static Path model;

    @BeforeAll
    static void config() throws IOException {
        Files.writeString(model.resolve("config.json"), ModelBenchCommandTest.LLAMA_8B);
    }

    private static CommandLine command(String name) {
        return Main.commandLine().getSubcommands().get(name);
    }

    /** The options {@code name} loads its model with, from {@code args} and {@code env}. */
    private static EngineOptions options(String name, List<String> args, Map<String, String> env, PrintWriter err) {
        List<String> line = new ArrayList<>(List.of(name));
        line.addAll(args);
        CommandLine.ParseResult parsed = Main.commandLine().parseArgs(line.toArray(String[]::new));
        EngineCommand cmd = parsed.subcommand().commandSpec().commandLine().getCommand();
        return cmd.engineOptions(env, err);
    }

    @Test
    void theModelLoadingCommandsAreTheOnesWithTheEngineOptions() {
        List<String> engine = new ArrayList<>();
        for (Map.Entry<String, CommandLine> e :
                Main.commandLine().getSubcommands().entrySet()) {
            boolean mixin = e.getValue().getCommandSpec().mixins().values().stream()
                    .anyMatch(m -> m.userObject() instanceof EngineArgs);
            boolean loads = e.getValue().getCommand() instanceof EngineCommand;
            assertThat(mixin)
                    .as(e.getKey() + ": mixes in EngineArgs iff it is an EngineCommand")
                    .isEqualTo(loads);
            if (loads) {
                engine.add(e.getKey());
            }
        }
        assertThat(engine).containsExactlyInAnyOrderElementsOf(MODEL_COMMANDS);
    }

    @Test
    void everyEngineOptionIsTheSameOnEveryModelLoadingCommand() {
        CommandLine reference = command("generate");
        for (String name : MODEL_COMMANDS) {
            CommandLine cl = command(name);
            for (String o : ENGINE_OPTIONS) {
                OptionSpec want = reference.getCommandSpec().findOption(o);
                OptionSpec got = cl.getCommandSpec().findOption(o);
                assertThat(got).as(name + " " + o).isNotNull();
                assertThat(got.type()).as(name + " " + o).isEqualTo(want.type());
                assertThat(got.arity()).as(name + " " + o).isEqualTo(want.arity());
                assertThat(got.defaultValue()).as(name + " " + o).isEqualTo(want.defaultValue());
                assertThat(got.paramLabel()).as(name + " " + o).isEqualTo(want.paramLabel());
                assertThat(got.description()).as(name + " " + o).isEqualTo(want.description());
                assertThat(got.negatable()).as(name + " " + o).isEqualTo(want.negatable());
            }
            // nothing engine-like outside the shared set: an engine option a command declares itself would drift
            TreeSet<String> own = new TreeSet<>();
            cl.getCommandSpec().options().stream()
                    .filter(s -> !(s.userObject() instanceof java.lang.reflect.Field f
                            && f.getDeclaringClass() == EngineArgs.class))
                    .forEach(s -> own.addAll(List.of(s.names())));
            assertThat(own).as(name).doesNotContainAnyElementsOf(ENGINE_OPTIONS);
        }
    }

    static Stream<Arguments> rows() {
        String m = model.toString();
        return Stream.of(
                // option, its flag form, the environment, what the engine gets, the value (bench-model's if it sizes
                // the value to its run when neither flag nor variable gives it)
                row("tp default", List.of(), Map.of(), EngineOptions::tp, 1, null),
                row("tp from env", List.of(), Map.of(EngineEnv.WORLD_SIZE, "2"), EngineOptions::tp, 2, null),
                row(
                        "tp flag over env",
                        List.of("--tp", "4"),
                        Map.of(EngineEnv.WORLD_SIZE, "2"),
                        EngineOptions::tp,
                        4,
                        null),
                row("virtual ranks off", List.of(), Map.of(), EngineOptions::virtualRanks, false, null),
                row(
                        "virtual ranks",
                        List.of("--tp", "2", "--virtual-ranks"),
                        Map.of(),
                        EngineOptions::virtualRanks,
                        true,
                        null),
                row(
                        "virtual ranks with env tp",
                        List.of("--virtual-ranks"),
                        Map.of(EngineEnv.WORLD_SIZE, "2"),
                        EngineOptions::tp,
                        2,
                        null),
                row(
                        "deprecated --virtual-ranks N",
                        List.of("--virtual-ranks", "2"),
                        Map.of(EngineEnv.WORLD_SIZE, "4"),
                        EngineOptions::tp,
                        2,
                        null),
                row("max model len default", List.of(), Map.of(), EngineOptions::maxModelLen, 0, 2048),
                row(
                        "max model len from env",
                        List.of(),
                        Map.of(EngineEnv.MAX_MODEL_LENGTH, "3072"),
                        EngineOptions::maxModelLen,
                        3072,
                        null),
                row(
                        "max model len flag over env",
                        List.of("--max-model-len", "4096"),
                        Map.of(EngineEnv.MAX_MODEL_LENGTH, "3072"),
                        EngineOptions::maxModelLen,
                        4096,
                        null),
                row("max batch tokens default", List.of(), Map.of(), EngineOptions::maxBatchTokens, 2048, null),
                row(
                        "max batch tokens from env",
                        List.of(),
                        Map.of(EngineEnv.MAX_BATCH_TOKENS, "256"),
                        EngineOptions::maxBatchTokens,
                        256,
                        null),
                row(
                        "max batch tokens flag over env",
                        List.of("--max-batch-tokens", "512"),
                        Map.of(EngineEnv.MAX_BATCH_TOKENS, "256"),
                        EngineOptions::maxBatchTokens,
                        512,
                        null),
                row("kv tokens default", List.of(), Map.of(), EngineOptions::kvCacheTokens, 0L, 73728L),
                row(
                        "kv tokens from env",
                        List.of(),
                        Map.of(EngineEnv.KV_CACHE_TOKENS, "90000"),
                        EngineOptions::kvCacheTokens,
                        90000L,
                        null),
                row(
                        "kv tokens flag over env",
                        List.of("--kv-cache-tokens", "100000"),
                        Map.of(EngineEnv.KV_CACHE_TOKENS, "90000"),
                        EngineOptions::kvCacheTokens,
                        100000L,
                        null),
                row("kv dtype default", List.of(), Map.of(), EngineOptions::kvCacheDtype, KvCacheDtype.AUTO, null),
                row(
                        "kv dtype from env",
                        List.of(),
                        Map.of(EngineEnv.KV_CACHE_DTYPE, "fp8"),
                        EngineOptions::kvCacheDtype,
                        KvCacheDtype.FP8,
                        null),
                row(
                        "kv dtype flag over env",
                        List.of("--kv-cache-dtype", "bf16"),
                        Map.of(EngineEnv.KV_CACHE_DTYPE, "fp8"),
                        EngineOptions::kvCacheDtype,
                        KvCacheDtype.BF16,
                        null),
                row("memory fraction from env", List.of(), Map.of(), EngineOptions::memoryFraction, 0.8, null),
                row(
                        "memory fraction flag over env",
                        List.of("--memory-fraction", "0.5"),
                        Map.of(),
                        EngineOptions::memoryFraction,
                        0.5,
                        null),
                row("graphs default", List.of(), Map.of(), EngineOptions::graphs, true, null),
                row("no graphs", List.of("--no-graphs"), Map.of(), EngineOptions::graphs, false, null),
                row("nccl default", List.of("--tp", "2"), Map.of(), EngineOptions::nccl, false, null),
                row("nccl flag", List.of("--tp", "2", "--nccl"), Map.of(), EngineOptions::nccl, true, null),
                row(
                        "nccl from env",
                        List.of(),
                        Map.of(EngineEnv.WORLD_SIZE, "2", EngineEnv.ALLREDUCE, "NCCL"),
                        EngineOptions::nccl,
                        true,
                        null),
                row(
                        "no-nccl over env",
                        List.of("--no-nccl"),
                        Map.of(EngineEnv.WORLD_SIZE, "2", EngineEnv.ALLREDUCE, "NCCL"),
                        EngineOptions::nccl,
                        false,
                        null),
                row(
                        "nccl lib",
                        List.of("--nccl-lib", "/opt/nccl/libnccl.so.2"),
                        Map.of(),
                        EngineOptions::ncclLib,
                        "/opt/nccl/libnccl.so.2",
                        null),
                row("baseline kernels off", List.of(), Map.of(), EngineOptions::baselineKernels, false, null),
                row(
                        "baseline kernels",
                        List.of("--baseline-kernels"),
                        Map.of(),
                        EngineOptions::baselineKernels,
                        true,
                        null),
                row(
                        "model from env",
                        null,
                        Map.of(EngineEnv.MODEL_DIR, m),
                        o -> o.modelDir().toString(),
                        m,
                        null),
                row(
                        "model flag over env",
                        List.of(),
                        Map.of(EngineEnv.MODEL_DIR, "/nowhere"),
                        o -> o.modelDir().toString(),
                        m,
                        null));
    }

    /** {@code args} null: no {@code --model} (it comes from the environment). */
    private static Arguments row(
            String what,
            List<String> args,
            Map<String, String> env,
            Function<EngineOptions, Object> get,
            Object want,
            Object benchWant) {
        return Arguments.of(what, args, env, get, want, benchWant);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void flagThenEnvironmentThenDefaultOnEveryCommand(
            String what,
            List<String> args,
            Map<String, String> env,
            Function<EngineOptions, Object> get,
            Object want,
            Object benchWant) {
        for (String name : MODEL_COMMANDS) {
            List<String> a = new ArrayList<>();
            if (args != null) {
                a.addAll(List.of("--model", model.toString()));
                a.addAll(args);
            }
            Map<String, String> e = new HashMap<>(Map.of(EngineEnv.MEMORY_FRACTION, "0.8"));
            e.putAll(env);
            StringWriter err = new StringWriter();
            EngineOptions o = options(name, a, e, new PrintWriter(err, true));
            Object expected = name.equals("bench-model") && benchWant != null ? benchWant : want;
            assertThat(get.apply(o)).as(name + ": " + what).isEqualTo(expected);
            if (a.contains("--virtual-ranks")
                    && a.indexOf("--virtual-ranks") + 1 < a.size()
                    && a.get(a.indexOf("--virtual-ranks") + 1).matches("\\d+")) {
                assertThat(err.toString())
                        .as(name)
                        .contains("--virtual-ranks 2 is deprecated: give --tp 2 --virtual-ranks");
                assertThat(o.virtualRanks()).as(name).isTrue();
            } else {
                assertThat(err.toString()).as(name + ": " + what).isEmpty();
            }
        }
    }

    @Test
    void theMemoryFractionDefaultsTo09ExceptForServeWhichNeedsThePlans() {
        List<String> a = List.of("--model", model.toString());
        assertThat(options("generate", a, Map.of(), null).memoryFraction()).isEqualTo(0.9);
        assertThat(options("bench-model", a, Map.of(), null).memoryFraction()).isEqualTo(0.9);
        assertThatThrownBy(() -> options("serve", a, Map.of(), null))
                .hasMessageContaining(EngineEnv.MEMORY_FRACTION + " is not set")
                .hasMessageContaining("--memory-fraction");
    }

    static Stream<Arguments> badValues() {
        return Stream.of(
                Arguments.of(List.of("--tp", "0"), Map.of(), "--tp must be 1..8, got 0"),
                Arguments.of(
                        List.of(),
                        Map.of(EngineEnv.WORLD_SIZE, "x"),
                        EngineEnv.WORLD_SIZE + " must be a whole number, got 'x'"),
                Arguments.of(List.of("--max-batch-tokens", "0"), Map.of(), "--max-batch-tokens must be >= 1, got 0"),
                Arguments.of(
                        List.of(),
                        Map.of(EngineEnv.KV_CACHE_TOKENS, "-1"),
                        EngineEnv.KV_CACHE_TOKENS + " must be >= 0, got '-1'"),
                Arguments.of(
                        List.of("--memory-fraction", "1"),
                        Map.of(),
                        "--memory-fraction must be a number in (0, 1), got 1.0"),
                Arguments.of(
                        List.of("--kv-cache-dtype", "int4"),
                        Map.of(),
                        "--kv-cache-dtype must be auto, bf16, fp16 or fp8"),
                Arguments.of(
                        List.of("--virtual-ranks", "2", "--tp", "4"),
                        Map.of(),
                        "--virtual-ranks 2 and --tp 4 disagree"));
    }

    @ParameterizedTest
    @MethodSource("badValues")
    void aBadValueGivesTheSameMessageOnEveryCommand(List<String> args, Map<String, String> env, String message) {
        for (String name : MODEL_COMMANDS) {
            List<String> a = new ArrayList<>(List.of("--model", model.toString()));
            a.addAll(args);
            Map<String, String> e = new HashMap<>(Map.of(EngineEnv.MEMORY_FRACTION, "0.8"));
            e.putAll(env);
            assertThatThrownBy(() -> options(name, a, e, null))
                    .as(name + " " + args + " " + env)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(message);
        }
    }

    @Test
    void aValueOfTheWrongTypeIsAUsageErrorOnEveryCommand() {
        for (String name : MODEL_COMMANDS) {
            MainTest.Result r = MainTest.run(name, "--model", model.toString(), "--tp", "two");
            assertThat(r.code()).as(name).isEqualTo(ExitCodes.USAGE);
            assertThat(r.err()).as(name).contains("Invalid value for option '--tp': 'two' is not an int");
        }
    }

    /** What the operator renders for serve (TensorlaneProfile: args "serve" and the environment) still loads as planned. */
    @Test
    void serveTakesTheOperatorsPlanFromTheEnvironmentAlone() {
        AlgorithmTable table = AlgorithmTable.defaults(2, 4L << 20);
        Map<String, String> env = Map.of(
                EngineEnv.MODEL_DIR, model.toString(),
                EngineEnv.WORLD_SIZE, "2",
                EngineEnv.ALLREDUCE, "Custom",
                EngineEnv.ALGORITHM_TABLE, table.toJson(),
                EngineEnv.MAX_MESSAGE_BYTES, Long.toString(4L << 20),
                EngineEnv.MEMORY_FRACTION, "0.87",
                EngineEnv.KV_CACHE_TOKENS, "123456",
                EngineEnv.KV_CACHE_DTYPE, "fp8",
                EngineEnv.MAX_MODEL_LENGTH, "4096",
                EngineEnv.MAX_BATCH_TOKENS, "1024");
        EngineOptions o = options("serve", List.of(), env, null);
        assertThat(o.modelDir()).isEqualTo(model);
        assertThat(o.tp()).isEqualTo(2);
        assertThat(o.virtualRanks()).isFalse();
        assertThat(o.nccl()).isFalse();
        assertThat(o.table()).isEqualTo(table);
        assertThat(o.maxMessageBytes()).isEqualTo(4L << 20);
        assertThat(o.memoryFraction()).isEqualTo(0.87);
        assertThat(o.kvCacheTokens()).isEqualTo(123456);
        assertThat(o.kvCacheDtype()).isEqualTo(KvCacheDtype.FP8);
        assertThat(o.maxModelLen()).isEqualTo(4096);
        assertThat(o.maxBatchTokens()).isEqualTo(1024);
        assertThat(o.graphs()).isTrue();
        // a TP degree given by hand is not the plan's: the operator's table (for its world size) is not used
        EngineOptions byHand = options("serve", List.of("--tp", "4"), env, null);
        assertThat(byHand.tp()).isEqualTo(4);
        assertThat(byHand.table().worldSize()).isEqualTo(4);
        assertThatThrownBy(() -> options("serve", List.of("--nccl", "--allreduce", "Custom"), env, null))
                .hasMessageContaining("--allreduce Custom and --nccl disagree");
    }
}
