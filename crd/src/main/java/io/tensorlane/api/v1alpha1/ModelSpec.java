package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.tensorlane.modelfacts.ModelSource;

/** The model and the geometry the memory planner needs. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ModelSpec {
    @Required
    @Pattern("^[A-Za-z0-9][A-Za-z0-9._/-]{0,252}$")
    @JsonPropertyDescription("Model name as the engine knows it, e.g. meta-llama/Llama-3.3-70B-Instruct.")
    public String name;

    @Pattern(ModelSource.PATTERN)
    @JsonPropertyDescription(
            "Where the weights come from: hf://org/name[@revision] (Hugging Face Hub; default hf://<name>), "
                    + "pvc://claim/path (read-only), file:///host/path (a node-local directory, read-only hostPath) or "
                    + "oci://registry/repo:tag (an image volume; Kubernetes 1.31+). Other schemes are rejected.")
    public String source;

    @JsonPropertyDescription(
            "Secret holding a Hub access token for hf:// sources (gated or private models). The operator "
                    + "reads it to inspect the model and the download step gets it as HF_TOKEN; it never appears in status or events.")
    public TokenSecret tokenSecret;

    @JsonPropertyDescription(
            "Volume the download step (hf://) writes the model into: an emptyDir sized from the weight "
                    + "bytes by default, or an existing PersistentVolumeClaim to reuse across restarts.")
    public ModelStorage storage;

    @JsonPropertyDescription("Data type of the weights: bf16, fp16 or fp32 (activations compute in it too), or fp8 (an "
            + "FP8 checkpoint: activations compute in bf16, fp16 when its config.json says float16). Optional: fp8 when "
            + "config.json's quantization_config says the weights are FP8, else the dtype read from the model "
            + "(status.model.dtype, else the safetensors dtype holding most bytes), else bf16. The KV cache's dtype is "
            + "spec.serving.kvCacheDtype.")
    public DType dtype;

    @JsonPropertyDescription(
            "Transformer geometry used to size KV cache and activations. Optional: read from the model's "
                    + "config.json (status.model.geometry); set it to override.")
    public ModelGeometry geometry;

    @Min(1)
    @JsonPropertyDescription("Total bytes of the weights (all shards together); split evenly by tensor parallelism. "
            + "Optional: read from the safetensors headers (status.model.weightBytes); set it to override.")
    public Long weightBytes;

    /** A key of a Secret in the deployment's namespace. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class TokenSecret {
        @Required
        @JsonPropertyDescription("Name of the Secret (in the InferenceDeployment's namespace).")
        public String name;

        @Default("token")
        @JsonPropertyDescription("Key in the Secret whose value is the token. Default token.")
        public String key = "token";
    }

    /** Where the download step puts the model. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class ModelStorage {
        @JsonPropertyDescription(
                "An existing PersistentVolumeClaim (ReadWriteOnce per node or ReadWriteMany) to download into "
                        + "and reuse; files already complete are not downloaded again. Without it, an emptyDir.")
        public String claimName;

        @Pattern("^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$")
        @JsonPropertyDescription(
                "Size limit of the emptyDir (a quantity such as 200Gi). Default: the weight bytes plus 5% "
                        + "and 1 GiB for the other files.")
        public String sizeLimit;
    }

    /** Element type of the weights (and of the activations, except for fp8: see ModelDtype.activation). */
    public enum DType {
        bf16(2),
        fp16(2),
        fp8(1),
        fp32(4);

        private final int bytes;

        DType(int bytes) {
            this.bytes = bytes;
        }

        public int bytes() {
            return bytes;
        }
    }
}
