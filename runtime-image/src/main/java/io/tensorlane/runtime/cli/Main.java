package io.tensorlane.runtime.cli;

import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.common.TerminationLog;
import io.tensorlane.runtime.engine.AllreduceTimeoutException;
import io.tensorlane.runtime.engine.CudaOutOfMemoryException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code tensorlane-runtime}: the runtime image's entrypoint.
 *
 * <p>Subcommands are listed in the annotation below. Other parts of the runtime add theirs there in one line:
 * {@code ProbeCommand} (package io.tensorlane.runtime.probe, the topology probe) and {@code ServeCommand} (serve).
 * Each is a plain picocli {@code @Command} class implementing {@code Callable<Integer>}; use {@link ExitCodes}
 * and let {@link CudaOutOfMemoryException} propagate: it becomes the termination message here.
 */
@Command(
        name = "tensorlane-runtime",
        mixinStandardHelpOptions = true,
        versionProvider = VersionCommand.Provider.class,
        description = "Tensorlane runtime: custom P2P allreduce engine, self-test and benchmark.",
        subcommands = {
            VersionCommand.class,
            SelftestCommand.class,
            BenchCommand.class,
            GenerateCommand.class,
            ModelBenchCommand.class,
            LoadgenCommand.class,
            TokenizeCommand.class,
            KernelCheckCommand.class,
            FusedGemvBenchCommand.class,
            PrefixCheckCommand.class,
            io.tensorlane.runtime.probe.ProbeCommand.class,
            io.tensorlane.runtime.serve.ServeCommand.class,
            PreflightCommand.class,
            io.tensorlane.runtime.fetch.FetchModelCommand.class,
            InspectModelCommand.class,
            CommandLine.HelpCommand.class
        })
public final class Main {
    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the CLI and returns the exit code (tests call this). */
    public static int run(String... args) {
        return commandLine().execute(args);
    }

    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Main());
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> handle(ex, cmd));
        return cl;
    }

    private static void printLaunches(AllreduceTimeoutException w, CommandLine cmd) {
        if (!w.recentLaunches().isEmpty()) {
            cmd.getErr()
                    .println("    rank " + w.record().rank() + "'s last allreduce launches (oldest first; graph"
                            + " replays not listed): " + String.join(" | ", w.recentLaunches()));
        }
    }

    static int handle(Exception ex, CommandLine cmd) {
        Throwable t = ex;
        while (t.getCause() != null
                && !(t instanceof CudaOutOfMemoryException)
                && !(t instanceof AllreduceTimeoutException)) {
            if (t.getCause() instanceof CudaOutOfMemoryException || t.getCause() instanceof AllreduceTimeoutException) {
                t = t.getCause();
                break;
            }
            t = t.getCause();
        }
        if (t instanceof CudaOutOfMemoryException oom) {
            TerminationLog.write(TerminationLog.path(), oom.termination(), cmd.getErr());
            return ExitCodes.CUDA_OOM;
        }
        if (t instanceof AllreduceTimeoutException w) {
            cmd.getErr().println("allreduce watchdog: " + w.getMessage());
            printLaunches(w, cmd);
            for (Throwable other : w.getSuppressed()) {
                cmd.getErr().println("  and on another rank: " + other.getMessage());
                if (other instanceof AllreduceTimeoutException o) {
                    printLaunches(o, cmd);
                }
            }
            return ExitCodes.WATCHDOG;
        }
        if (ex instanceof io.tensorlane.runtime.engine.CudaUnavailableException) {
            cmd.getErr().println("error: " + ex.getMessage());
            return ExitCodes.RUNTIME;
        }
        if (ex instanceof IllegalArgumentException) {
            cmd.getErr().println("error: " + ex.getMessage());
            return ExitCodes.USAGE;
        }
        cmd.getErr().println("error: " + ex);
        ex.printStackTrace(cmd.getErr());
        return ExitCodes.RUNTIME;
    }
}
