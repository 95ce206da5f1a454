package io.tensorlane.runtime.model;

import java.util.Arrays;
import java.util.stream.Collectors;

/** The decoder-only architectures the engine runs, by their Hugging Face {@code architectures} name. */
public enum Architecture {
  LLAMA("LlamaForCausalLM", "llama"),
  MISTRAL("MistralForCausalLM", "mistral"),
  QWEN2("Qwen2ForCausalLM", "qwen2"),
  QWEN3("Qwen3ForCausalLM", "qwen3");

  private final String hfName;
  private final String modelType;

  Architecture(String hfName, String modelType) {
    this.hfName = hfName;
    this.modelType = modelType;
  }

  /** The Hugging Face class name, e.g. {@code LlamaForCausalLM}. */
  public String hfName() {
    return hfName;
  }

  /** The config.json {@code model_type}, e.g. {@code llama}. */
  public String modelType() {
    return modelType;
  }

  public static Architecture fromHf(String name) {
    for (Architecture a : values()) {
      if (a.hfName.equals(name)) {
        return a;
      }
    }
    throw new ModelException("architecture " + name + " is not supported (supported: " + supported() + ")");
  }

  /** The architecture of a config.json {@code model_type} (used when {@code architectures} is absent). */
  public static Architecture fromModelType(String modelType) {
    for (Architecture a : values()) {
      if (a.modelType.equals(modelType)) {
        return a;
      }
    }
    throw new ModelException("model_type " + modelType + " is not supported (supported: "
        + Arrays.stream(values()).map(Architecture::modelType).collect(Collectors.joining(", ")) + ")");
  }

  static String supported() {
    return Arrays.stream(values()).map(Architecture::hfName).collect(Collectors.joining(", "));
  }
}
