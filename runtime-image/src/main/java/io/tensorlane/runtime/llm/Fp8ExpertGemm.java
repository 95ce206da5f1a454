package io.tensorlane.runtime.llm;

import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Cuda;
import java.util.Arrays;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;

/**
 * FP8 experts' projections in a MoE layer's long steps on FP8 tensor cores, every routed expert in one launch
 * ({@link MoeKernels#groupedFp8}, W8A8 as the dense FP8 linears of such steps: {@link Fp8Linear}): the step's rows
 * (grouped by expert) quantized to e4m3 per row and 128 columns in one launch, the tiles of each expert's rows made on
 * the host from the offsets the step read back, then the GEMM. Against dequantizing each routed expert for cuBLAS, two
 * launches an expert and projection ({@link ExpertGemms}); the default, unless {@link
 * KernelChoices#MOE_FP8_GEMM_ENV} is off.
 */
public final class Fp8ExpertGemm {
    /**
     * The scratch, for up to {@code rows} rows of up to {@code maxIn} columns: e4m3 rows, their scales [maxIn / 128,
     * rows], the tile table ({@link Tiles}).
     */
    record Buffers(long xq, long xs, Tiles tiles, int rows, int maxIn) {
        static Buffers allocate(DeviceMemory mem, String phase, int rows, int maxIn, int experts) {
            int groups = maxIn / CublasLt.Fp8Scaling.GROUP;
            int cap = Fp8ExpertGemm.tileCapacity(rows, experts);
            return new Buffers(
                    Cuda.address(mem.alloc(phase, "fp8 expert rows (e4m3)", (long) rows * maxIn, true)),
                    Cuda.address(mem.alloc(phase, "fp8 expert row scales", 4L * groups * rows, true)),
                    new Tiles(mem.alloc(phase, "fp8 expert tiles", 16L * cap, true), cap),
                    rows,
                    maxIn);
        }
    }

    /**
     * The tile table on the device (int4 a tile, {@link #tileCapacity} of them) and, on the host, what it holds. A rank's
     * MoE layers share it, and one layer's gate/up and down GEMMs take the same offsets, so the second finds its table
     * there and uploads nothing (one upload a layer, not two).
     */
    static final class Tiles {
        private final CUdeviceptr device;
        private int[] held; // the device table's contents: its first 4 * count ints
        private int[] next;
        private int count = -1; // nothing uploaded yet

        Tiles(CUdeviceptr device, int capacity) {
            this.device = device;
            this.held = new int[4 * capacity];
            this.next = new int[4 * capacity];
        }

        /**
         * The table of these offsets becomes what the device must hold; whether that differs from what it holds now
         * (then {@link #upload} copies it).
         */
        boolean stage(int[] offsets, int experts) {
            int n = tiles(offsets, experts, next);
            if (n == count && Arrays.equals(next, 0, 4 * n, held, 0, 4 * n)) {
                return false;
            }
            int[] t = held;
            held = next;
            next = t;
            count = n;
            return true;
        }

        /** The tiles of these offsets on the device (copied on {@code s} unless it holds them already); their count. */
        int upload(int[] offsets, int experts, CUstream s) {
            if (stage(offsets, experts)) {
                Cuda.check(
                        cuMemcpyHtoDAsync(device, Pointer.to(held), 16L * count, s),
                        "cuMemcpyHtoDAsync(fp8 expert tiles)");
            }
            return count;
        }

        long address() {
            return Cuda.address(device);
        }
    }

    /**
     * Whether the GEMM serves experts of this geometry: gate/up [2 inter, hidden] and down [hidden, inter] both
     * multiples of 128, and a GPU with FP8 tensor cores (compute capability 8.9 and later) in the current context.
     */
    static boolean serves(int hidden, int inter) {
        return MoeKernels.groupedFp8Fits(hidden, 2 * inter)
                && MoeKernels.groupedFp8Fits(inter, hidden)
                && Fp8Kernels.tensorCoresHere();
    }

    /** Most tiles of a step of {@code rows} rows over {@code experts} experts: each expert's last tile may be partial. */
    public static int tileCapacity(int rows, int experts) {
        return (rows + MoeKernels.GEMM_FP8_ROWS - 1) / MoeKernels.GEMM_FP8_ROWS + experts;
    }

    /**
     * The tiles of rows grouped by expert ({@code offsets[e]..offsets[e+1]} expert e's) into {@code table} (4 ints a
     * tile: expert, first row, the expert's end row, 0); their count.
     */
    public static int tiles(int[] offsets, int experts, int[] table) {
        int count = 0;
        for (int e = 0; e < experts; e++) {
            for (int r = offsets[e]; r < offsets[e + 1]; r += MoeKernels.GEMM_FP8_ROWS) {
                table[4 * count] = e;
                table[4 * count + 1] = r;
                table[4 * count + 2] = offsets[e + 1];
                table[4 * count + 3] = 0;
                count++;
            }
        }
        return count;
    }

    private final ModelKernels kernels;
    private final DType dt;
    private final int experts;
    private final Buffers buf;

    Fp8ExpertGemm(ModelKernels kernels, DType dt, int experts, Buffers buf) {
        this.kernels = kernels;
        this.dt = dt;
        this.experts = experts;
        this.buf = buf;
    }

    /**
     * y[offsets[e]..offsets[e+1], out] = x rows of the same range · w's expert e slice [out, in]ᵀ for every expert; x and
     * y in the model's dtype, w FP8.
     */
    void run(RankWeights.Weight w, int[] offsets, long x, int in, long y, int out, CUstream s) {
        int rows = offsets[experts];
        if (rows > buf.rows() || in > buf.maxIn()) {
            throw new IllegalStateException("fp8 expert GEMM: " + rows + " rows of " + in
                    + " columns, the scratch holds " + buf.rows() + " of " + buf.maxIn());
        }
        if (rows == 0) {
            return;
        }
        kernels.fp8().quantize(dt, x, buf.xq(), buf.xs(), rows, rows, in, CublasLt.Fp8Scaling.GROUP, s);
        int count = buf.tiles().upload(offsets, experts, s);
        kernels.moe()
                .groupedFp8(
                        dt,
                        w.type(),
                        buf.xq(),
                        buf.xs(),
                        rows,
                        w.address(),
                        w.scales(),
                        buf.tiles().address(),
                        count,
                        y,
                        in,
                        out,
                        s);
    }
}
