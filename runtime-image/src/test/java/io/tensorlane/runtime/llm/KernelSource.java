package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A kernel source file of kernels/src/main/cuda (the text nvcc compiles), for tests that hold Java's launch constants
 * to it.
 */
record KernelSource(String file, String text) {
    static KernelSource read(String file) throws IOException {
        return new KernelSource(file, Files.readString(Path.of("../kernels/src/main/cuda", file)));
    }

    /** The file's {@code constexpr int name = N;}. */
    int constant(String name) {
        Matcher m = Pattern.compile("constexpr int " + name + " = (\\d+);").matcher(text);
        assertThat(m.find()).as("constexpr int %s in %s", name, file).isTrue();
        return Integer.parseInt(m.group(1));
    }
}
