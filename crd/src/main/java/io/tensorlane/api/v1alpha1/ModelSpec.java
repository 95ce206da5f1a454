package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;

/** The model and the geometry the memory planner needs. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ModelSpec {
  @Required
  @Pattern("^[A-Za-z0-9][A-Za-z0-9._/-]{0,252}$")
  @JsonPropertyDescription("Model name as the engine knows it, e.g. meta-llama/Llama-3.3-70B-Instruct.")
  public String name;

  @JsonPropertyDescription("Where the weights come from: a URI (hf://, s3://, pvc://<claim>/<path>, file://). Defaults to hf://<name>.")
  public String source;

  @Default("bf16")
  @JsonPropertyDescription("Data type of weights and activations: bf16, fp16, fp8 or fp32. Default bf16.")
  public DType dtype = DType.bf16;

  @Required
  @JsonPropertyDescription("Transformer geometry used to size KV cache and activations.")
  public ModelGeometry geometry;

  @Required
  @Min(1)
  @JsonPropertyDescription("Total bytes of the weights in the chosen dtype (all shards together); split evenly by tensor parallelism.")
  public Long weightBytes;

  /** Element type of weights and activations. */
  public enum DType {
    bf16(2), fp16(2), fp8(1), fp32(4);

    private final int bytes;

    DType(int bytes) {
      this.bytes = bytes;
    }

    public int bytes() {
      return bytes;
    }
  }
}
