package io.tensorlane.runtime.cli;

import io.tensorlane.runtime.llm.LlmEngine;
import io.tensorlane.runtime.model.ModelConfig;
import io.tensorlane.runtime.model.TpLayout;
import io.tensorlane.runtime.sched.BlockAllocator;
import io.tensorlane.runtime.sched.StepBatch;
import io.tensorlane.runtime.sched.StepResult;

/** What the check drives: the engine, or in tests a CPU stand-in with a paged KV cache of its own. */
interface PrefixCheckTarget {
    StepResult step(StepBatch batch, boolean wantLogits);

    BlockAllocator blocks();

    int maxBlocksPerSeq();

    int vocab();

    int tp();

    int layers();

    /** Elements of one KV slot of one rank and layer: the rank's KV heads x head dim. */
    int width();

    /** Leading layers whose KV no MoE router touches ({@link PrefixCheckRun#routingFree(ModelConfig)}). */
    int routingFree();

    /** Rank {@code rank}'s K (or V) of {@code layer} for {@code blocks}, each block's slots in order. */
    float[] readKv(int rank, int layer, boolean value, int[] blocks);

    /** The engine as the check's target. */
    static PrefixCheckTarget of(LlmEngine e) {
        ModelConfig c = e.config();
        int tp = e.options().tp();
        int width = TpLayout.of(c, tp).kvHeadsPerRank() * c.headDim();
        int free = PrefixCheckRun.routingFree(c);
        return new PrefixCheckTarget() {
            @Override
            public StepResult step(StepBatch batch, boolean wantLogits) {
                return e.step(batch, wantLogits);
            }

            @Override
            public BlockAllocator blocks() {
                return e.blocks();
            }

            @Override
            public int maxBlocksPerSeq() {
                return e.maxBlocksPerSeq();
            }

            @Override
            public int vocab() {
                return e.vocabSize();
            }

            @Override
            public int tp() {
                return tp;
            }

            @Override
            public int layers() {
                return c.numLayers();
            }

            @Override
            public int width() {
                return width;
            }

            @Override
            public int routingFree() {
                return free;
            }

            @Override
            public float[] readKv(int rank, int layer, boolean value, int[] blocks) {
                return e.readKv(rank, layer, value, blocks);
            }
        };
    }
}
