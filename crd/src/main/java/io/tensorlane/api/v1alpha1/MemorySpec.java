package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;

/** GPU memory budget. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class MemorySpec {
    public static final String AUTO = "auto";

    @Pattern("^(auto|0\\.[0-9]{1,4})$")
    @Default("auto")
    @JsonPropertyDescription(
            "Static memory fraction (SGLang's mem_fraction_static meaning): 'auto' lets the planner size it so "
                    + "the allreduce IPC buffers, CUDA graphs and activations fit; a number in (0, 1) such as '0.85' is honoured but "
                    + "checked. Default auto.")
    public String fraction = AUTO;

    @Min(0)
    @Max(65536)
    @Default("512")
    @JsonPropertyDescription("Extra MiB per GPU kept free for fragmentation and libraries. Default 512.")
    public Integer reserveMiB = 512;

    @com.fasterxml.jackson.annotation.JsonIgnore
    public boolean isAuto() {
        return fraction == null || AUTO.equals(fraction);
    }
}
