package io.tensorlane.kernels;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every per-dtype entry point the model sources define under a plain name ({@code tl_<name>_##SUF(...)}) is in
 * {@link Kernels#MODEL_TYPED_KERNELS}: the runtime resolves only that list, so a kernel missing from it is compiled
 * into the fatbin and still cannot be launched (tl_moe_router_norm was, until the H100 run of 2026-12-07 02:22 UTC
 * failed all 24 of its kernelcheck cases on it). Names pasted from macro arguments (the fused linears' and folded
 * attention's variants) are left to the list's own generation.
 */
class ModelKernelListTest {
    private static final Pattern TYPED_ENTRY = Pattern.compile(
            "extern \"C\" __global__ void\\s+(?:__launch_bounds__\\([^)]*\\)\\s*)?(tl_\\w+?)_##SUF\\s*\\(");

    static List<String> plainTypedEntries(String source) {
        List<String> names = new ArrayList<>();
        Matcher m = TYPED_ENTRY.matcher(source.replace("\\\n", "\n"));
        while (m.find()) {
            if (!m.group(1).contains("##")) {
                names.add(m.group(1));
            }
        }
        return names;
    }

    @Test
    void everyPlainTypedEntryIsListed() throws IOException {
        List<String> found = new ArrayList<>();
        for (Path p : ModelEntryWaitTest.modelSources()) {
            found.addAll(plainTypedEntries(Files.readString(p)));
        }
        assertThat(found).as("plain typed entries found").hasSizeGreaterThan(30).contains("tl_moe_router_norm");
        assertThat(Kernels.MODEL_TYPED_KERNELS).containsAll(found);
    }

    @Test
    void theScanFindsPlainNamesAndSkipsPastedOnes() {
        String src = "#define E(SUF, T) \\\n"
                + "  extern \"C\" __global__ void __launch_bounds__(kGemvWarps * 32) tl_a_##SUF(const T* x) { \\\n"
                + "  } \\\n"
                + "  extern \"C\" __global__ void tl_b_kv8_##SUF(int n) {} \\\n"
                + "  extern \"C\" __global__ void __launch_bounds__(128) tl_c##NAME##_##SUF(int n) {}\n"
                + "extern \"C\" __global__ void tl_untyped(int n) {}\n";
        assertThat(plainTypedEntries(src)).containsExactly("tl_a", "tl_b_kv8");
    }
}
