package io.tensorlane.runtime.model;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The decoder-only architectures the engine runs, by their Hugging Face {@code architectures} name (a config without
 * one names its class through {@code model_type}: io.tensorlane.modelfacts.ConfigFacts#MODEL_TYPES).
 */
public enum Architecture {
    LLAMA("LlamaForCausalLM"),
    MISTRAL("MistralForCausalLM"),
    QWEN2("Qwen2ForCausalLM"),
    QWEN3("Qwen3ForCausalLM");

    private final String hfName;

    Architecture(String hfName) {
        this.hfName = hfName;
    }

    /** The Hugging Face class name, e.g. {@code LlamaForCausalLM}. */
    public String hfName() {
        return hfName;
    }

    public static Architecture fromHf(String name) {
        for (Architecture a : values()) {
            if (a.hfName.equals(name)) {
                return a;
            }
        }
        throw new ModelException("architecture " + name + " is not supported (supported: " + supported() + ")");
    }

    static String supported() {
        return Arrays.stream(values()).map(Architecture::hfName).collect(Collectors.joining(", "));
    }
}
