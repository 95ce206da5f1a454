package io.tensorlane.runtime.cli;

import io.tensorlane.kernels.Fatbin;
import io.tensorlane.kernels.Kernels;
import io.tensorlane.runtime.chat.ChatTemplate;
import io.tensorlane.runtime.common.ExitCodes;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;

/** Prints the runtime version and which GPU architectures the bundled kernels carry. No GPU needed. */
@Command(name = "version", description = "Print version, kernel architectures and library versions (no GPU needed).")
public final class VersionCommand implements Callable<Integer> {
    static String version() {
        String v = Main.class.getPackage().getImplementationVersion();
        return v != null ? v : "dev";
    }

    static List<String> lines() {
        String kernels;
        if (Kernels.fatbinPresent()) {
            kernels = Fatbin.entries(Kernels.fatbin()).toString();
        } else {
            kernels = "MISSING (built with -Dtensorlane.skipNvcc)";
        }
        return List.of(
                "tensorlane-runtime " + version(),
                "kernels: " + kernels,
                "java: " + System.getProperty("java.version"),
                "jcuda: 12.0.0 (driver API)",
                "chat templates: " + chatTemplates());
    }

    /**
     * Renders a one-line template: the chat-template engine needs java.beans (module java.desktop), which a jlinked
     * runtime may lack; the image smoke test reads this line, so a runtime without it fails the build, not a request.
     */
    static String chatTemplates() {
        try {
            String out = ChatTemplate.compile(
                            "{% for m in messages %}{{ m['role'] }}:{{ m.content | trim }}{% endfor %}")
                    .render(List.of(Map.of("role", "user", "content", " hi ")), false, null);
            return "user:hi".equals(out) ? "ok" : "WRONG (rendered '" + out + "')";
        } catch (RuntimeException | LinkageError e) {
            return "UNAVAILABLE (" + e + ")";
        }
    }

    @Override
    public Integer call() {
        lines().forEach(System.out::println);
        return Kernels.fatbinPresent() ? ExitCodes.OK : ExitCodes.RUNTIME;
    }

    /** For --version. */
    public static final class Provider implements IVersionProvider {
        @Override
        public String[] getVersion() {
            return lines().toArray(String[]::new);
        }
    }
}
