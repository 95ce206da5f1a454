package io.tensorlane.runtime.model;

/** The dtype of the model's weights (and of every device tensor the shard plan describes). */
public enum WeightDType {
    BF16("bfloat16", SafeDType.BF16),
    FP16("float16", SafeDType.F16);

    private final String hfName;
    private final SafeDType safeDType;

    WeightDType(String hfName, SafeDType safeDType) {
        this.hfName = hfName;
        this.safeDType = safeDType;
    }

    public int bytes() {
        return 2;
    }

    /** The config.json spelling: {@code bfloat16} or {@code float16}. */
    public String hfName() {
        return hfName;
    }

    /** The safetensors dtype that checkpoint tensors of this dtype carry. */
    public SafeDType safeDType() {
        return safeDType;
    }

    /** From config.json {@code torch_dtype} / {@code dtype}; also accepts {@code torch.bfloat16}, {@code bf16}, {@code fp16}, {@code half}. */
    public static WeightDType fromHf(String name) {
        String n = name == null ? "" : name.trim().toLowerCase(java.util.Locale.ROOT);
        if (n.startsWith("torch.")) {
            n = n.substring("torch.".length());
        }
        switch (n) {
            case "bfloat16":
            case "bf16":
                return BF16;
            case "float16":
            case "fp16":
            case "half":
                return FP16;
            default:
                throw new ModelException("dtype " + name + " is not supported (bf16 or fp16 weights)");
        }
    }
}
