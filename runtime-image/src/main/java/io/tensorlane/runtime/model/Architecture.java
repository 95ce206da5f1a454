package io.tensorlane.runtime.model;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The decoder-only architectures the engine runs, by their Hugging Face {@code architectures} name (a config without
 * one names its class through {@code model_type}: io.tensorlane.modelfacts.ConfigFacts#MODEL_TYPES), each with what
 * sets it apart from the Llama decoder: its attention's extras, how its config states a sliding window, and for a
 * Mixture of Experts the names of its expert tensors and router. The rest of the engine reads these, never the
 * architecture itself.
 */
public enum Architecture {
    LLAMA("LlamaForCausalLM", Attention.PLAIN, Window.NONE, null),
    MISTRAL("MistralForCausalLM", Attention.PLAIN, Window.ALWAYS, null),
    QWEN2("Qwen2ForCausalLM", Attention.QKV_BIAS, Window.OPT_IN, null),
    QWEN3("Qwen3ForCausalLM", Attention.QK_NORM, Window.OPT_IN, null),
    QWEN3_MOE("Qwen3MoeForCausalLM", Attention.QK_NORM, Window.OPT_IN, ExpertNames.QWEN3_MOE),
    MIXTRAL("MixtralForCausalLM", Attention.PLAIN, Window.ALWAYS, ExpertNames.MIXTRAL);

    /** What the attention block adds to Llama's: q/k/v biases always (else only with {@code attention_bias}), q/k norms. */
    public enum Attention {
        PLAIN,
        QKV_BIAS,
        QK_NORM
    }

    /**
     * How config.json states a sliding window: never read; {@code sliding_window} always (null: none); {@code
     * sliding_window} only when {@code use_sliding_window} is true.
     */
    public enum Window {
        NONE,
        ALWAYS,
        OPT_IN
    }

    private final String hfName;
    private final Attention attention;
    private final Window window;
    private final ExpertNames experts;

    Architecture(String hfName, Attention attention, Window window, ExpertNames experts) {
        this.hfName = hfName;
        this.attention = attention;
        this.window = window;
        this.experts = experts;
    }

    /** The Hugging Face class name, e.g. {@code LlamaForCausalLM}. */
    public String hfName() {
        return hfName;
    }

    public Attention attention() {
        return attention;
    }

    public Window window() {
        return window;
    }

    /** The expert and router tensor names of a Mixture-of-Experts architecture; null for a dense one. */
    public ExpertNames experts() {
        return experts;
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
