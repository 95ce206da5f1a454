package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.kubernetes.api.model.EnvVar;
import java.util.ArrayList;
import java.util.List;

/** Which serving engine runs in the pods. */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public class EngineSpec {
    @Default("Tensorlane")
    @JsonPropertyDescription("Engine: Tensorlane (our runtime image), SGLang or VLLM. Default Tensorlane.")
    public EngineType type = EngineType.Tensorlane;

    @JsonPropertyDescription(
            "Container image. Defaults to the Tensorlane runtime image for type Tensorlane; required for SGLang and VLLM.")
    public String image;

    @JsonPropertyDescription("Extra command-line arguments appended after the ones Tensorlane renders.")
    public List<String> args = new ArrayList<>();

    @JsonPropertyDescription("Extra environment variables for the engine container.")
    public List<EnvVar> env = new ArrayList<>();

    /** Supported engines. */
    public enum EngineType {
        Tensorlane,
        SGLang,
        VLLM
    }
}
