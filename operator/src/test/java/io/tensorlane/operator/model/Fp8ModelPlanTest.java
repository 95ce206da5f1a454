package io.tensorlane.operator.model;

import static io.tensorlane.operator.plan.Fixtures.SETTINGS;
import static io.tensorlane.operator.plan.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.EngineSpec;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelQuantization.Weights;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.api.v1alpha1.ParallelismSpec;
import io.tensorlane.api.v1alpha1.ServingSpec;
import io.tensorlane.api.v1alpha1.ServingSpec.KvCacheDtype;
import io.tensorlane.modelfacts.ModelDirectory;
import io.tensorlane.operator.plan.NodeInfo;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Planner;
import io.tensorlane.testkit.hub.Checkpoints;
import io.tensorlane.topology.TopologyFixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * FP8 checkpoints as the operator reads them (config.json + safetensors headers, through {@link ModelDirectory}, the
 * inspection Job's reader): the weight bytes are the headers' own (F8_E4M3 weights, their F32 scales, the BF16
 * embeddings, norms and lm_head), the model is fp8 from its quantization_config while config.json's bfloat16 stays the
 * activations', and the KV cache is planned in bf16 unless kvCacheDtype says fp8.
 */
class Fp8ModelPlanTest {
    /** Dimensions that are not multiples of 128, so the block scales have partial blocks at the edges. */
    static final Checkpoints.Llama G = new Checkpoints.Llama(2, 320, 5, 1, 1000, 864, 4096, false);

    static final List<NodeInfo> NODES = List.of(node("h200-0", TopologyFixtures.H200_SXM_8, 0));

    static ModelStatus read(Path dir, Checkpoints.Weights weights) throws IOException {
        for (Map.Entry<String, byte[]> f : Checkpoints.llama(G, weights, 1).entrySet()) {
            Files.write(dir.resolve(f.getKey()), f.getValue());
        }
        return ModelDirectory.read(dir).facts().toStatus("file:///m", "sha256:x", "2026-12-02T00:00:00Z");
    }

    static long blocks(long n) {
        return (n + Checkpoints.BLOCK - 1) / Checkpoints.BLOCK;
    }

    /** The linear layers of one decoder layer as [out, in]. */
    static long[][] linears() {
        long h = G.hidden(), kv = (long) G.kvHeads() * G.headDim(), i = G.intermediate();
        return new long[][] {{h, h}, {kv, h}, {kv, h}, {h, h}, {i, h}, {i, h}, {h, i}};
    }

    /** Bytes per safetensors dtype, counted here from the shapes: what the headers must add up to. */
    static Map<String, Long> expected(Checkpoints.Weights w) {
        long linear = 0, scales = 0;
        for (long[] l : linears()) {
            linear += l[0] * l[1];
            scales += w == Checkpoints.Weights.FP8_BLOCK ? blocks(l[0]) * blocks(l[1]) * 4 : l[0] * 4;
        }
        long bf16 = 2L * G.vocab() * G.hidden() * 2 // embeddings and lm_head
                + 2L * G.hidden() * (2L * G.layers() + 1); // two norms per layer and the final one
        return w == Checkpoints.Weights.BF16
                ? Map.of("BF16", bf16 + 2 * linear * G.layers())
                : Map.of("F8_E4M3", linear * G.layers(), "F32", scales * G.layers(), "BF16", bf16);
    }

    static Stream<Arguments> layouts() {
        return Stream.of(
                Arguments.of(Checkpoints.Weights.FP8_BLOCK, "fp8", Weights.FP8Block, "fp8 block 128x128"),
                Arguments.of(
                        Checkpoints.Weights.FP8_CHANNEL, "compressed-tensors", Weights.FP8Channel, "fp8 per-channel"),
                Arguments.of(Checkpoints.Weights.FP8_FBGEMM, "fbgemm_fp8", Weights.FP8Channel, "fp8 per-channel"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("layouts")
    void theWeightBytesAreTheHeadersOwnAndTheModelIsFp8(
            Checkpoints.Weights layout, String method, Weights weights, String format, @TempDir Path dir)
            throws IOException {
        ModelStatus s = read(dir, layout);

        assertThat(s.weightBytesByDtype).isEqualTo(expected(layout));
        assertThat(s.weightBytes)
                .isEqualTo(expected(layout).values().stream()
                        .mapToLong(Long::longValue)
                        .sum());
        assertThat(s.dtype).as("config.json's dtype: the activations'").isEqualTo("bfloat16");
        assertThat(s.quantization.method).isEqualTo(method);
        assertThat(s.quantization.weights).isEqualTo(weights);
        assertThat(s.quantization.format).isEqualTo(format);

        InferenceDeploymentSpec filled = ModelResolution.fill(whatAUserWrites(x -> {}), s);
        assertThat(filled.model.dtype).isEqualTo(DType.fp8);
        Plan p = Planner.plan(filled, NODES, SETTINGS);
        assertThat(p.ok()).as(p.message()).isTrue();
        assertThat(p.memory().weightsBytes()).as("TP 1: all the header bytes").isEqualTo(s.weightBytes);
        assertThat(p.memory().kvCacheDtype()).as("auto: the activations' bf16").isEqualTo(DType.bf16);
        // 2 × 2 layers × 1 KV head × 64 × 2 bytes per token
        assertThat(p.memory().kvCacheTokens()).isEqualTo(p.memory().kvCacheBytes() / (2L * 2 * 64 * 2));
    }

    @Test
    void aBf16CheckpointOfTheSameGeometryHasNoQuantizationAndTwiceTheLinearBytes(@TempDir Path dir) throws IOException {
        ModelStatus s = read(dir, Checkpoints.Weights.BF16);
        assertThat(s.quantization).isNull();
        assertThat(s.weightBytesByDtype).isEqualTo(expected(Checkpoints.Weights.BF16));
        assertThat(ModelResolution.fill(whatAUserWrites(x -> {}), s).model.dtype)
                .isEqualTo(DType.bf16);
    }

    /** kvCacheDtype × config.json's dtype → the KV dtype planned for an FP8 block checkpoint. */
    static Stream<Arguments> kvDtypes() {
        return Stream.of(
                Arguments.of(KvCacheDtype.auto, "bfloat16", DType.bf16, 2),
                Arguments.of(KvCacheDtype.auto, "float16", DType.fp16, 2),
                Arguments.of(KvCacheDtype.fp8, "bfloat16", DType.fp8, 1),
                Arguments.of(KvCacheDtype.fp16, "bfloat16", DType.fp16, 2),
                Arguments.of(KvCacheDtype.bf16, "float16", DType.bf16, 2));
    }

    @ParameterizedTest(name = "{0} with config.json {1}: {2}")
    @MethodSource("kvDtypes")
    void theKvCacheFollowsKvCacheDtypeAndConfigJson(
            KvCacheDtype kv, String configDtype, DType planned, int bytes, @TempDir Path dir) throws IOException {
        ModelStatus s = read(dir, Checkpoints.Weights.FP8_BLOCK);
        s.dtype = configDtype;
        InferenceDeploymentSpec spec = whatAUserWrites(x -> {
            x.serving = new ServingSpec();
            x.serving.kvCacheDtype = kv;
        });
        Plan p = Planner.plan(ModelResolution.fill(spec, s), NODES, SETTINGS);

        assertThat(p.ok()).as(p.message()).isTrue();
        assertThat(p.memory().kvCacheDtype()).isEqualTo(planned);
        assertThat(p.memory().kvCacheTokens()).isEqualTo(p.memory().kvCacheBytes() / (2L * 2 * 64 * bytes));
        assertThat(spec.serving.kvCacheDtype).as("the input is not modified").isEqualTo(kv);
    }

    /** SGLang at TP 1. */
    static InferenceDeploymentSpec whatAUserWrites(Consumer<InferenceDeploymentSpec> change) {
        InferenceDeploymentSpec s = new InferenceDeploymentSpec();
        s.model = new ModelSpec();
        s.model.name = "org/tiny-fp8";
        s.parallelism = new ParallelismSpec();
        s.parallelism.tensor = 1;
        s.engine = new EngineSpec();
        s.engine.type = EngineSpec.EngineType.SGLang;
        s.engine.image = "sglang:test";
        change.accept(s);
        return s;
    }
}
