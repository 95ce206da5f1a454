package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.AlgorithmTable;
import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.DType;
import io.tensorlane.runtime.model.ModelConfig;
import io.tensorlane.runtime.model.TpLayout;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** What the engine decides and refuses from config.json and the options before any GPU memory is taken. */
class LoadPlanTest {
    /** Llama-3.1-8B's geometry; MAXPOS, HEADDIM and HIDDEN replaced per case. */
    private static final String LLAMA = """
      {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": HIDDEN, "intermediate_size": 14336,
       "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": HEADDIM,
       "vocab_size": 128256, "rms_norm_eps": 1e-5, "max_position_embeddings": MAXPOS, "tie_word_embeddings": false,
       "torch_dtype": "bfloat16", "rope_theta": 500000.0}
      """;

    private static final String MISTRAL = """
      {"architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
       "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
       "rms_norm_eps": 1e-5, "max_position_embeddings": 32768, "sliding_window": 4096, "tie_word_embeddings": false,
       "torch_dtype": "bfloat16", "rope_theta": 10000.0}
      """;

    private static ModelConfig llama(int maxPos, int headDim) {
        return ModelConfig.parse(
                LLAMA.replace("MAXPOS", Integer.toString(maxPos))
                        .replace("HEADDIM", Integer.toString(headDim))
                        .replace("HIDDEN", Integer.toString(32 * headDim)),
                "config.json");
    }

    /** tp ranks, 64 sequences, 2048 batch tokens, 64 logits rows, KV blocks of 16 tokens. */
    private static EngineOptions options(int tp, int maxModelLen, boolean virtual, boolean nccl) {
        return new EngineOptions(Path.of("m"), tp, virtual, 64, 2048, maxModelLen, 0, 0.9, 64, true, nccl, null, 16);
    }

    private static LoadPlan plan(EngineOptions o, ModelConfig c) {
        return LoadPlan.of(o, c, TpLayout.of(c, o.tp()), DType.bf16, o.virtualRanks() && o.tp() > 1);
    }

    static Stream<Arguments> lengths() {
        return Stream.of(
                // requested, max_position_embeddings, served length, blocks of one sequence (16 tokens each)
                Arguments.of(0, 131072, LoadPlan.DEFAULT_MAX_MODEL_LEN, 512),
                Arguments.of(0, 4096, 4096, 256),
                Arguments.of(4097, 8192, 4097, 257),
                Arguments.of(131072, 131072, 131072, 8192));
    }

    @ParameterizedTest
    @MethodSource("lengths")
    void theLongestSequenceIsTheRequestOrTheModelsLimitUpToTheDefault(
            int requested, int maxPos, int served, int blocks) {
        LoadPlan p = plan(options(1, requested, false, false), llama(maxPos, 128));
        assertThat(p.maxModelLen()).isEqualTo(served);
        assertThat(p.maxBlocksPerSeq()).isEqualTo(blocks);
    }

    static Stream<Arguments> refusals() {
        return Stream.of(
                Arguments.of(
                        llama(4096, 128),
                        4097,
                        "max model length 4097 exceeds the model's max_position_embeddings 4096"),
                Arguments.of(llama(8192, 80), 0, "head_dim 80 is not supported by the attention kernels"),
                Arguments.of(llama(8192, 288), 0, "head_dim 288 is not supported by the attention kernels"),
                Arguments.of(
                        ModelConfig.parse(MISTRAL, "config.json"),
                        0,
                        "max model length 8192 exceeds the model's sliding window 4096 (sliding-window attention is not"
                                + " implemented); pass --max-model-len 4096 or less"));
    }

    @ParameterizedTest
    @MethodSource("refusals")
    void whatTheKernelsOrTheModelCannotServeIsRefusedWithTheWayOut(ModelConfig c, int requested, String message) {
        assertThatThrownBy(() -> plan(options(1, requested, false, false), c))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }

    @Test
    void aSlidingWindowModelServesUpToItsWindow() {
        assertThat(plan(options(1, 4096, false, false), ModelConfig.parse(MISTRAL, "config.json"))
                        .maxModelLen())
                .isEqualTo(4096);
    }

    @Test
    void withoutABudgetTheAllreduceBuffersHoldTheLargestStep() {
        ModelConfig c = llama(8192, 128);
        LoadPlan p = plan(options(2, 0, false, false), c);
        // hidden states of 2048 tokens (bf16) against 64 fp32 logits rows of the padded vocabulary: the larger
        long hidden = 2048L * 4096 * 2;
        long logits = 4L * 64 * TpLayout.of(c, 2).vocabPadded();
        assertThat(p.buffers().maxMessageBytes()).isEqualTo(Math.max(hidden, logits));
        assertThat(p.buffers().blocks()).isEqualTo(BufferLayout.DEFAULT_BLOCKS);
        assertThat(p.table()).isEqualTo(AlgorithmTable.defaults(2, p.buffers().maxMessageBytes()));
    }

    @Test
    void thePlansBudgetAndTableAreTakenOnOwnGpusAndVirtualRanksTakeWhatTheStepsNeed() {
        ModelConfig c = llama(8192, 128);
        AlgorithmTable planned = AlgorithmTable.single(2, Algorithm.OneStage, 1 << 20);
        EngineOptions own = options(2, 0, false, false).withAllreducePlan(planned, 1 << 20);
        LoadPlan p = plan(own, c);
        assertThat(p.buffers().maxMessageBytes()).isEqualTo(1 << 20);
        assertThat(p.table()).isSameAs(planned);

        // virtual ranks have no NCCL to send larger messages to: the buffers grow to the largest step, fewer blocks
        LoadPlan v = plan(options(2, 0, true, false).withAllreducePlan(planned, 1 << 20), c);
        long largestStep =
                Math.max(2048L * 4096 * 2, 4L * 64 * TpLayout.of(c, 2).vocabPadded());
        assertThat(v.buffers().maxMessageBytes()).isEqualTo(largestStep).isGreaterThan(1 << 20);
        assertThat(v.buffers().blocks()).isEqualTo(LoadPlan.VIRTUAL_RANK_BLOCKS);
        assertThat(v.table()).isSameAs(planned); // it covers no more than the buffers hold

        // a table reaching past the buffers is not taken: the default table for the buffers instead
        AlgorithmTable tooLong = AlgorithmTable.single(2, Algorithm.OneStage, 2 << 20);
        LoadPlan t = plan(options(2, 0, false, false).withAllreducePlan(tooLong, 1 << 20), c);
        assertThat(t.table()).isEqualTo(AlgorithmTable.defaults(2, 1 << 20));
    }

    @Test
    void withNcclOrOneRankTheCustomBuffersAreMinimalAndNcclHasOneEntry() {
        ModelConfig c = llama(8192, 128);
        LoadPlan nccl = plan(options(2, 0, false, true), c);
        assertThat(nccl.buffers().maxMessageBytes()).isEqualTo(BufferLayout.VECTOR_BYTES);
        assertThat(nccl.table()).isEqualTo(AlgorithmTable.single(2, Algorithm.OneStage, 1));
        assertThat(plan(options(1, 0, false, false), c).buffers().maxMessageBytes())
                .isEqualTo(BufferLayout.VECTOR_BYTES);
    }

    @Test
    void aKvCacheShorterThanOneSequenceIsRefused() {
        LoadPlan p = plan(options(1, 8192, false, false), llama(8192, 128));
        p.checkKvHoldsOneSequence(512, 16); // exactly one sequence
        assertThatThrownBy(() -> p.checkKvHoldsOneSequence(511, 16))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("the KV cache holds 8176 tokens, less than one sequence of 8192 tokens")
                .hasMessageContaining("TENSORLANE_KV_CACHE_TOKENS");
    }
}
