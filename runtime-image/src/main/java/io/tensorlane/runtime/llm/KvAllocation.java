package io.tensorlane.runtime.llm;

import static jcuda.driver.JCudaDriver.cuMemGetInfo;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Communicator;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.sched.BlockAllocator;
import java.io.PrintWriter;
import java.util.List;

/**
 * Sizes and allocates {@link LlmEngine}'s KV cache on every rank once the weights and activations are on the GPUs:
 * {@code tokens} when given, else what the memory fraction leaves on the fullest GPU, split between the ranks sharing
 * it and, on rank 0's GPU, with the cache beside it ({@link KvSizing#blocks}); then the engine's memory report.
 */
final class KvAllocation {
    private KvAllocation() {}

    record Result(BlockAllocator blocks, LlmEngine.MemoryReport memory) {}

    static Result allocate(
            Communicator comm,
            List<RankModel> ranks,
            List<Integer> devices,
            EngineOptions options,
            LoadPlan plan,
            DType dtype,
            long tokens,
            KvSizing sizing,
            PrintWriter log) {
        RankModel r0 = ranks.get(0);
        long perBlock = r0.kv.bytesPerBlock();
        int nblocks;
        if (tokens > 0) {
            nblocks = Math.toIntExact((tokens + options.blockSize() - 1) / options.blockSize());
        } else {
            List<Integer> gpus = devices.stream().distinct().toList(); // rank 0's first
            long[] budgets = new long[gpus.size()];
            int[] ranksOn = new int[gpus.size()];
            for (int i = 0; i < gpus.size(); i++) {
                int d = gpus.get(i);
                long[] info = comm.rank(devices.indexOf(d)).call(() -> {
                    long[] free = {0};
                    long[] totalMem = {0};
                    Cuda.check(cuMemGetInfo(free, totalMem), "cuMemGetInfo");
                    return new long[] {free[0], totalMem[0]};
                });
                budgets[i] = (long) (options.memoryFraction() * info[1]) - (info[1] - info[0]);
                ranksOn[i] = comm.config().ranksOn(d);
            }
            nblocks = KvSizing.blocks(budgets, ranksOn, perBlock, sizing.besidePerBlock());
        }
        plan.checkKvHoldsOneSequence(nblocks, options.blockSize());
        int n = nblocks;
        comm.onEachRank(r -> {
            ranks.get(r.index()).kv.allocate(n);
            return null;
        });
        LlmEngine.MemoryReport memory = new LlmEngine.MemoryReport(
                r0.bytes(RankModel.WEIGHTS),
                r0.bytes(RankModel.KV),
                r0.bytes(RankModel.ACTIVATIONS),
                comm.layout().totalBytesPerRank(),
                nblocks,
                options.blockSize(),
                (long) nblocks * options.blockSize(),
                r0.kv.dtype(),
                perBlock);
        log.printf(
                "engine: memory per rank: weights %.3f GB, KV cache %.3f GB (%s, %d blocks x %d tokens = %d tokens), "
                        + "activations %.3f GB, allreduce buffers %.3f GB%s%n",
                memory.weightBytesPerRank() / 1e9,
                memory.kvBytesPerRank() / 1e9,
                r0.kv.fp8() ? "fp8 e4m3" : dtype.name(),
                nblocks,
                options.blockSize(),
                memory.kvTokens(),
                memory.activationBytesPerRank() / 1e9,
                memory.allreduceBytesPerRank() / 1e9,
                sizing.besidePerBlock() > 0 && tokens <= 0
                        ? String.format(
                                "; sized with a draft KV cache of %.3f GB beside it on rank 0's GPU",
                                (double) nblocks * sizing.besidePerBlock() / 1e9)
                        : "");
        return new Result(new BlockAllocator(nblocks, options.blockSize()), memory);
    }
}
