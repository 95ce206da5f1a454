package io.tensorlane.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.modelfacts.HubClient;
import io.tensorlane.modelfacts.ModelSource;
import io.tensorlane.operator.model.ModelInspector.Inspection;
import io.tensorlane.testkit.hub.Checkpoints;
import io.tensorlane.testkit.hub.LocalHub;
import io.tensorlane.testkit.hub.SampleModels;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Inspection against a loopback Hub: facts, Range reads only, tokens, failures with their reasons. */
class ModelInspectorTest {
    static final String SHA = "1111111111111111111111111111111111111111";
    static final String TOKEN = "hf_secret_token_value";
    static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-29T12:00:00Z"), ZoneOffset.UTC);
    static LocalHub hub;
    static ModelInspector inspector;

    @BeforeAll
    static void start() throws Exception {
        hub = new LocalHub();
        hub.put("org/tiny", new LocalHub.Repo(SHA, Checkpoints.tiny("LlamaForCausalLM"), null, false));
        hub.put("org/gated", new LocalHub.Repo(SHA, Checkpoints.tiny("LlamaForCausalLM"), TOKEN, true));
        hub.put("org/gpt2", new LocalHub.Repo(SHA, Checkpoints.tiny("GPT2LMHeadModel"), null, false));
        Map<String, byte[]> broken = new LinkedHashMap<>(Checkpoints.tiny("LlamaForCausalLM"));
        broken.put(
                "config.json",
                "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64}".getBytes(StandardCharsets.UTF_8));
        hub.put("org/broken", new LocalHub.Repo(SHA, broken, null, false));
        inspector = new ModelInspector(client(hub.endpoint(), Duration.ofSeconds(5)), CLOCK);
    }

    static HubClient client(String endpoint, Duration timeout) {
        return new HubClient(URI.create(endpoint), timeout, "tensorlane-operator", ModelInspector.TOKEN_HINT);
    }

    @AfterAll
    static void stop() {
        hub.close();
    }

    @Test
    void readsConfigAndHeadersWithRangeRequestsOnly() {
        Inspection r = inspector.inspect(ModelSource.parse("hf://org/tiny"), null);
        assertThat(r).isInstanceOf(Inspection.Known.class);
        ModelStatus s = ((Inspection.Known) r).status();
        assertThat(s.source).isEqualTo("hf://org/tiny@main");
        assertThat(s.revision).isEqualTo(SHA);
        assertThat(s.architecture).isEqualTo("LlamaForCausalLM");
        assertThat(s.geometry.layers).isEqualTo(Checkpoints.LAYERS);
        assertThat(s.geometry.kvHeads).isEqualTo(Checkpoints.KV_HEADS);
        assertThat(s.geometry.headDim).isEqualTo(Checkpoints.HIDDEN / Checkpoints.HEADS);
        assertThat(s.maxPositionEmbeddings).isEqualTo(256);
        assertThat(s.dtype).isEqualTo("bfloat16");
        assertThat(s.weightBytesByDtype)
                .containsExactlyInAnyOrderEntriesOf(
                        Map.of("BF16", Checkpoints.BF16_BYTES, "F32", Checkpoints.F32_BYTES));
        assertThat(s.weightBytes).isEqualTo(Checkpoints.BF16_BYTES + Checkpoints.F32_BYTES);
        assertThat(s.files).isEqualTo(2);
        assertThat(s.readAt).isEqualTo("2026-11-29T12:00:00Z");
        // the weights were never downloaded: every safetensors request is a Range request, pinned to the sha
        assertThat(hub.requests())
                .filteredOn(q ->
                        q.path().startsWith("/org/tiny/resolve/") && q.path().endsWith(".safetensors"))
                .hasSize(4)
                .allSatisfy(q -> {
                    assertThat(q.range()).matches("bytes=\\d+-\\d+");
                    assertThat(q.path()).contains("/resolve/" + SHA + "/");
                });
    }

    @Test
    void theSampleModelsHeaderOnlyCheckpointsHaveTheRealSizes() throws Exception {
        try (LocalHub samples = SampleModels.serve(new LocalHub())) {
            ModelInspector i = new ModelInspector(client(samples.endpoint(), Duration.ofSeconds(5)), CLOCK);
            ModelStatus b70 = ((Inspection.Known)
                            i.inspect(ModelSource.parse("hf://meta-llama/Llama-3.3-70B-Instruct"), null))
                    .status();
            assertThat(b70.weightBytes).isEqualTo(141_107_412_992L);
            assertThat(b70.files).isEqualTo(10);
            assertThat(b70.geometry.layers).isEqualTo(80);
            assertThat(b70.geometry.headDim).isEqualTo(128);
            ModelStatus b8 = ((Inspection.Known)
                            i.inspect(ModelSource.parse("hf://meta-llama/Llama-3.1-8B-Instruct"), null))
                    .status();
            assertThat(b8.weightBytes).isEqualTo(16_060_522_496L);
            ModelStatus fp8 = ((Inspection.Known)
                            i.inspect(ModelSource.parse("hf://meta-llama/Llama-3.1-405B-Instruct-FP8"), null))
                    .status();
            assertThat(fp8.weightBytesByDtype).containsOnlyKeys("BF16", "F8_E4M3", "F32");
            assertThat(fp8.weightBytes).isBetween(405_000_000_000L, 412_000_000_000L);
            // meta-llama's FP8 checkpoints: quant_method fbgemm_fp8, one F32 scale per output row
            assertThat(fp8.quantization.method).isEqualTo("fbgemm_fp8");
            assertThat(fp8.quantization.format).isEqualTo("fp8 per-channel");
            assertThat(fp8.dtype).isEqualTo("bfloat16");
            assertThat(b8.quantization).isNull();
        }
    }

    @Test
    void aGatedModelNeedsTheTokenWhichStaysOnTheHubsHost() {
        Inspection without = inspector.inspect(ModelSource.parse("hf://org/gated"), null);
        assertThat(without)
                .isEqualTo(new Inspection.Failed(
                        "Unauthorized",
                        "not allowed to read model org/gated (revision "
                                + "'main') from " + hub.endpoint()
                                + ": HTTP 401; the model is gated or private (or does not exist): set "
                                + "spec.model.tokenSecret",
                        false));
        Inspection wrong = inspector.inspect(ModelSource.parse("hf://org/gated"), "hf_wrong");
        assertThat(((Inspection.Failed) wrong).message())
                .contains("token in spec.model.tokenSecret is not accepted")
                .doesNotContain("hf_wrong");
        Inspection with = inspector.inspect(ModelSource.parse("hf://org/gated@" + SHA), TOKEN);
        assertThat(with).isInstanceOf(Inspection.Known.class);
        // the Hub got the token; its CDN (another host, reached by redirect) did not
        assertThat(hub.requests())
                .filteredOn(q -> q.path().startsWith("/api/models/org/gated/revision/" + SHA))
                .allSatisfy(q -> assertThat(q.authorization()).isEqualTo("Bearer " + TOKEN));
        assertThat(hub.requests())
                .filteredOn(q -> q.path().startsWith("/cdn/org/gated/"))
                .hasSize(4)
                .allSatisfy(q -> {
                    assertThat(q.authorization()).isNull();
                    assertThat(q.range()).isNotNull();
                });
    }

    @Test
    void failuresSayWhichAndWhy() {
        assertThat(inspector.inspect(ModelSource.parse("hf://org/missing"), null))
                .isEqualTo(new Inspection.Failed(
                        "ModelNotFound",
                        "model org/missing (revision 'main') at " + hub.endpoint()
                                + ": HTTP 404, the model does not exist",
                        false));
        assertThat(inspector.inspect(ModelSource.parse("hf://org/tiny@v9"), null))
                .isEqualTo(new Inspection.Failed(
                        "ModelNotFound",
                        "model org/tiny (revision 'v9') at " + hub.endpoint()
                                + ": HTTP 404, the revision does not exist",
                        false));
        Inspection.Failed gpt2 = (Inspection.Failed) inspector.inspect(ModelSource.parse("hf://org/gpt2"), null);
        assertThat(gpt2.reason()).isEqualTo("UnsupportedArchitecture");
        assertThat(gpt2.message())
                .isEqualTo("hf://org/gpt2@" + SHA + "/config.json: architecture GPT2LMHeadModel is not "
                        + "supported by the Tensorlane runtime (supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, "
                        + "Qwen3ForCausalLM; Mixture of Experts: Qwen3MoeForCausalLM, MixtralForCausalLM, bf16/fp16 "
                        + "on every engine, FP8 on engines SGLang and VLLM)");
        Inspection.Failed broken = (Inspection.Failed) inspector.inspect(ModelSource.parse("hf://org/broken"), null);
        assertThat(broken.reason()).isEqualTo("InvalidModel");
        assertThat(broken.message())
                .isEqualTo("hf://org/broken@" + SHA + "/config.json: missing field num_attention_heads "
                        + "(expected an integer)");
        Inspection.Failed down =
                (Inspection.Failed) new ModelInspector(client("http://127.0.0.1:1", Duration.ofSeconds(2)), CLOCK)
                        .inspect(ModelSource.parse("hf://org/tiny"), null);
        assertThat(down.reason()).isEqualTo("HubUnreachable");
        assertThat(down.retryable()).isTrue();
    }

    @Test
    void theCacheReadsOncePerSourceAndCredentialAndForgetsFailures() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Instant[] now = {Instant.parse("2026-11-29T12:00:00Z")};
            Clock clock = new Clock() {
                public java.time.ZoneId getZone() {
                    return ZoneOffset.UTC;
                }

                public Clock withZone(java.time.ZoneId zone) {
                    return this;
                }

                public Instant instant() {
                    return now[0];
                }
            };
            InspectionCache cache = new InspectionCache(pool, clock, Duration.ofMinutes(10), Duration.ofSeconds(30));
            AtomicInteger reads = new AtomicInteger();
            CountDownLatch release = new CountDownLatch(1);
            var key = InspectionCache.Key.of("hf://org/tiny@main", null);
            java.util.function.Supplier<Inspection> read = () -> {
                reads.incrementAndGet();
                try {
                    release.await(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return new Inspection.Failed("ModelNotFound", "404", false);
            };
            for (int i = 0; i < 10; i++) {
                assertThat(cache.get(key, read)).isNull();
            }
            release.countDown();
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> cache.get(key, read) != null);
            assertThat(reads).hasValue(1);
            cache.get(InspectionCache.Key.of("hf://org/tiny@main", "t1"), read); // another credential: its own read
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> reads.get() == 2);
            now[0] = now[0].plusSeconds(31);
            cache.get(key, read); // the failure is forgotten after its TTL: a new read starts
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> reads.get() == 3);
            Thread.sleep(200);
            cache.get(key, read);
            assertThat(reads).as("and is cached again").hasValue(3);
            assertThat(InspectionCache.Key.of("s", "t1").credential())
                    .isNotEqualTo("t1")
                    .hasSize(16);
        } finally {
            pool.shutdownNow();
        }
    }
}
