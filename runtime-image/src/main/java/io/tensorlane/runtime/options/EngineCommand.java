package io.tensorlane.runtime.options;

import io.tensorlane.runtime.llm.EngineOptions;
import java.io.PrintWriter;
import java.util.Map;

/**
 * A command that loads a model into an {@link io.tensorlane.runtime.llm.LlmEngine} ({@code generate},
 * {@code bench-model}, {@code serve}): it mixes in {@link EngineArgs} and builds its {@link EngineOptions} from them
 * the way {@link #engineOptions} says, so the vocabulary is the same on every such command (the tests hold each of
 * them to it).
 */
public interface EngineCommand {
    /**
     * The engine options the command loads its model with: its parsed options over {@code env} over the defaults. A
     * bad value ends in an {@link IllegalArgumentException} naming the option or variable; a deprecated form prints one
     * line on {@code err}.
     */
    EngineOptions engineOptions(Map<String, String> env, PrintWriter err);
}
