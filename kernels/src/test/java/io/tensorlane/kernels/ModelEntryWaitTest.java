package io.tensorlane.kernels;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every entry point of the model module waits for the grids it depends on before anything else
 * ({@code tlpdl::enter()}, tl_pdl.cuh): the runtime makes the graph edges into any function of that module
 * programmatic, so a kernel that read its input before waiting would read it unfinished. This test reads the sources
 * the model fatbin is compiled from (tl_model.cu and the headers it includes) and fails on an entry whose body does not
 * start with the wait (or with the wait after the next kernel's launch, {@link #TRIGGER_FIRST}).
 */
class ModelEntryWaitTest {
    private static final Path CUDA = Path.of("src/main/cuda");
    private static final Pattern INCLUDE = Pattern.compile("^#include \"(tl_\\w+\\.cuh)\"", Pattern.MULTILINE);
    private static final Pattern ENTRY = Pattern.compile("extern \"C\" __global__");
    /**
     * The wait with the next kernel's launch before it (tl_pdl.cuh), for an entry that reads and writes nothing a kernel
     * of the step touches: it still waits before anything else.
     */
    static final String TRIGGER_FIRST = "tlpdl::trigger_then_enter();";
    /** The one kind of statement an entry may run before it waits (tl_pdl.cuh: weights only). */
    static final String PREFETCH = "tlpdl::prefetch_warp_row(";

    /** tl_model.cu and every tl_*.cuh it includes, directly or through another. */
    static List<Path> modelSources() throws IOException {
        List<Path> out = new ArrayList<>();
        List<Path> todo = new ArrayList<>(List.of(CUDA.resolve("tl_model.cu")));
        while (!todo.isEmpty()) {
            Path p = todo.remove(0);
            if (out.contains(p)) {
                continue;
            }
            out.add(p);
            Matcher m = INCLUDE.matcher(Files.readString(p));
            while (m.find()) {
                todo.add(CUDA.resolve(m.group(1)));
            }
        }
        return out;
    }

    /**
     * The first statement of each entry's body that is not a {@link #PREFETCH} (macro continuations removed): the one
     * that must be the wait.
     */
    static List<String> entryHeads(String source) {
        String s = source.replace("\\\n", "\n");
        List<String> heads = new ArrayList<>();
        Matcher m = ENTRY.matcher(s);
        while (m.find()) {
            int i = m.end();
            int depth = 0;
            int closeOfParameters = -1;
            boolean bounds = s.startsWith("__launch_bounds__", skipVoid(s, i));
            int lists = bounds ? 2 : 1;
            for (int k = i; k < s.length() && closeOfParameters < 0; k++) {
                char c = s.charAt(k);
                if (c == '(') {
                    depth++;
                } else if (c == ')' && --depth == 0 && --lists == 0) {
                    closeOfParameters = k;
                }
            }
            int from = s.indexOf('{', closeOfParameters) + 1;
            String head;
            do { // weight prefetches may come first: they read nothing a kernel of the step writes
                int end = s.indexOf(';', from) + 1;
                head = s.substring(from, end).strip();
                from = end;
            } while (head.startsWith(PREFETCH));
            heads.add(head);
        }
        return heads;
    }

    private static int skipVoid(String s, int i) {
        String rest = s.substring(i).stripLeading();
        int at = s.length() - rest.length();
        return rest.startsWith("void") ? skipBlanks(s, at + 4) : at;
    }

    private static int skipBlanks(String s, int i) {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
        return i;
    }

    @Test
    void everyModelEntryWaitsFirst() throws IOException {
        List<Path> sources = modelSources();
        assertThat(sources).extracting(p -> p.getFileName().toString()).contains("tl_fp8.cuh", "tl_sample.cuh");
        int entries = 0;
        for (Path p : sources) {
            for (String head : entryHeads(Files.readString(p))) {
                entries++;
                assertThat(head)
                        .as("first statement of an entry in " + p.getFileName())
                        .isIn("tlpdl::enter();", TRIGGER_FIRST);
            }
        }
        assertThat(entries).as("model entry points found").isGreaterThan(50);
    }

    @Test
    void theCheckFindsAnEntryThatDoesNotWait() {
        String src =
                "extern \"C\" __global__ void __launch_bounds__(256) k_a(int* x) {\n  tlpdl::enter();\n  x[0] = 1;\n}\n"
                        + "#define E(S) \\\n  extern \"C\" __global__ void k_##S(const int* y, int n) { \\\n    int v = y[0]; \\\n  }\n";
        assertThat(entryHeads(src)).containsExactly("tlpdl::enter();", "int v = y[0];");
        String prefetching = "extern \"C\" __global__ void k_b(const int* w, int* y, int n) {\n"
                + "  tlpdl::prefetch_warp_row(w, 4LL * n, n, 8, 2048);\n  tlpdl::enter();\n  y[0] = w[0];\n}\n"
                + "extern \"C\" __global__ void k_c(const int* w, int* y, int n) {\n"
                + "  tlpdl::prefetch_warp_row(w, 4LL * n, n, 8, 2048);\n  y[0] = w[0];\n  tlpdl::enter();\n}\n";
        assertThat(entryHeads(prefetching)).containsExactly("tlpdl::enter();", "y[0] = w[0];");
    }

    @Test
    void theAllreduceModuleIsNotAModelSource() throws IOException {
        try (Stream<Path> s = modelSources().stream()) {
            assertThat(s.map(p -> p.getFileName().toString())).doesNotContain("tl_allreduce.cuh", "tl_push.cuh");
        }
    }
}
