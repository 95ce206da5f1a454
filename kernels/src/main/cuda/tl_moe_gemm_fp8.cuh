// The grouped FP8 GEMM of a MoE layer's long steps (prefill): every routed expert's rows in one launch, on FP8 tensor
// cores (mma.sync m16n8k32 e4m3, fp32 accumulators; sm_89 and newer). Included by tl_model.cu after tl_tensorcore.cuh
// (cp_async16, smem_addr, pack2) and tl_fp8.cuh. Launched by io.tensorlane.runtime.llm.MoeKernels#groupedFp8.
//
//   y[r, n] = sum_k xq[r, k] * sx[k / 128, r] * w[e * out + n, k] * sw(e * out + n, k / 128)
//
// for the rows r of each expert e (rows grouped by expert, as tl_moe_sort leaves them): xq [rows, in] e4m3, the
// activations quantized per row and 128 columns by tl_quant_fp8 (its scales [in / 128, ldxs], row-contiguous per column
// group); w [E * out, in] e4m3, the stacked experts; sw the weight scales in tl_fp8.cuh's layouts over the stacked rows:
//   BLOCK = true:  [ceil(E * out / row_block), in / 128], stacked row g reads row g / row_block (row_block 128: the
//                  compact 128x128 grid, every expert starting on a block; 1: each row carries its block row's scales);
//   BLOCK = false: [E * out], one per row (per-channel), applied once after the sum.
// Each 128-column slice of the sum is taken in fp32 on the tensor cores and scaled into the accumulator (the block
// scales differ from slice to slice). Needs in % 128 == 0, out % 128 == 0, 16-byte aligned xq, w and y rows.
// tiles [count] (int4): expert, first row, the expert's end row (exclusive), unused; a tile is up to 64 rows of one
// expert (the host makes them from the expert offsets it reads back). Launch: grid (out / 128, count), 256 threads.
#pragma once

namespace tlmoegemm {

constexpr int kBM = 64;   // rows (tokens) of a tile
constexpr int kBN = 128;  // output columns of a tile
constexpr int kBK = 128;  // bytes of K a stage: one scale column
constexpr int kThreads = 256;  // 8 warps: 2 x 4, each 32 rows x 32 columns

// Four 8x8 b16 matrices (here 8 rows x 16 bytes of e4m3) from shared memory: A and B fragments of m16n8k32.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// c[16x8] += a[16x32] . b[32x8], e4m3 in, fp32 accumulators (PTX ISA: mma.m16n8k32 fragment layouts).
__device__ __forceinline__ void mma_e4m3(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  __trap();  // the engine launches this kernel only on sm_89 and newer
#endif
}

// Byte offset of 16-byte chunk c of row r in a tile of 128-byte rows, the chunks XOR-swizzled by the row so that the
// eight rows one ldmatrix reads fall in different banks.
__device__ __forceinline__ int swz(int r, int c) { return r * kBK + ((c ^ (r & 7)) << 4); }

template <typename T, bool BLOCK>
__device__ __forceinline__ void grouped_fp8(const uint8_t* xq, const float* xs, int ldxs, const uint8_t* w,
                                            const float* ws, int row_block, const int4* tiles, T* y, int out,
                                            int in) {
  __shared__ __align__(128) uint8_t sA[2][kBM * kBK];
  __shared__ __align__(128) uint8_t sB[2][kBN * kBK];
  const int4 tile = tiles[blockIdx.y];
  const int r0 = tile.y, r1 = tile.z;  // this tile: rows [r0, min(r0 + 64, r1)) of expert tile.x
  const long long g0 = (long long)tile.x * out + (long long)blockIdx.x * kBN;  // first stacked weight row
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp >> 2, wn = warp & 3;  // each warp: 32 rows x 32 columns of the tile
  const int steps = in / kBK;

  auto load = [&](int stage, int kt) {
    const long long k0 = (long long)kt * kBK;
#pragma unroll
    for (int i = 0; i < (kBM * kBK / 16) / kThreads; ++i) {
      const int c = tid + i * kThreads, r = c >> 3, ch = c & 7;
      const bool ok = r0 + r < r1;  // rows past the expert's: zeros, nothing read
      cp_async16(smem_addr(&sA[stage][swz(r, ch)]), xq + (long long)(ok ? r0 + r : r0) * in + k0 + ch * 16,
                 ok ? 16 : 0);
    }
#pragma unroll
    for (int i = 0; i < (kBN * kBK / 16) / kThreads; ++i) {
      const int c = tid + i * kThreads, r = c >> 3, ch = c & 7;
      cp_async16(smem_addr(&sB[stage][swz(r, ch)]), w + (g0 + r) * in + k0 + ch * 16, 16);
    }
    asm volatile("cp.async.commit_group;\n" ::);
  };

  const int grp = lane >> 2, tig = lane & 3;
  // the accumulator rows of this thread: wm * 32 + mt * 16 + grp + 8 h (h = 0, 1), clamped into the expert's rows
  int srow[2][2];
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) srow[mt][h] = min(r0 + wm * 32 + mt * 16 + grp + 8 * h, r1 - 1);

  float acc[2][4][4];
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[mt][nt][j] = 0.0f;

  load(0, 0);
  for (int kt = 0; kt < steps; ++kt) {
    if (kt + 1 < steps) {
      load((kt + 1) & 1, kt + 1);
      asm volatile("cp.async.wait_group 1;\n" ::);
    } else {
      asm volatile("cp.async.wait_group 0;\n" ::);
    }
    __syncthreads();
    const uint8_t* a_s = sA[kt & 1];
    const uint8_t* b_s = sB[kt & 1];
    float part[2][4][4];
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
#pragma unroll
        for (int j = 0; j < 4; ++j) part[mt][nt][j] = 0.0f;
#pragma unroll
    for (int ks = 0; ks < kBK / 32; ++ks) {
      uint32_t a[2][4];
#pragma unroll
      for (int mt = 0; mt < 2; ++mt) {
        ldmatrix_x4(a[mt], smem_addr(a_s + swz(wm * 32 + mt * 16 + (lane & 15), 2 * ks + (lane >> 4))));
      }
#pragma unroll
      for (int np = 0; np < 2; ++np) {
        uint32_t b[4];  // two n8 tiles: b[0], b[1] the first's k halves, b[2], b[3] the second's
        ldmatrix_x4(b, smem_addr(b_s + swz(wn * 32 + np * 16 + (lane & 7) + ((lane >> 4) << 3),
                                           2 * ks + ((lane >> 3) & 1))));
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) {
          mma_e4m3(part[mt][2 * np], a[mt], b[0], b[1]);
          mma_e4m3(part[mt][2 * np + 1], a[mt], b[2], b[3]);
        }
      }
    }
    // this 128-column slice, scaled: by the rows' activation scales, and (BLOCK) the columns' weight block scales
    float sx[2][2];
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) sx[mt][h] = xs[(long long)kt * ldxs + srow[mt][h]];
    float swc[4][2];
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int j = 0; j < 2; ++j) swc[nt][j] = 1.0f;
    if (BLOCK) {
      if (row_block == kBN) {  // the compact grid: one scale for the whole tile
        const float s = ws[(g0 / kBN) * steps + kt];
#pragma unroll
        for (int nt = 0; nt < 4; ++nt) swc[nt][0] = swc[nt][1] = s;
      } else {
#pragma unroll
        for (int nt = 0; nt < 4; ++nt)
#pragma unroll
          for (int j = 0; j < 2; ++j) {
            const long long g = g0 + wn * 32 + nt * 8 + 2 * tig + j;
            swc[nt][j] = ws[(g / row_block) * steps + kt];
          }
      }
    }
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          acc[mt][nt][j] = fmaf(part[mt][nt][j], sx[mt][j >> 1] * swc[nt][j & 1], acc[mt][nt][j]);
        }
    __syncthreads();  // the next iteration's load overwrites this stage
  }

#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = r0 + wm * 32 + mt * 16 + grp + 8 * h;
      if (r >= r1) continue;
      T* yr = y + (long long)r * out + blockIdx.x * kBN + wn * 32;
#pragma unroll
      for (int nt = 0; nt < 4; ++nt) {
        const int col = nt * 8 + 2 * tig;
        float v0 = acc[mt][nt][2 * h], v1 = acc[mt][nt][2 * h + 1];
        if (!BLOCK) {
          const long long g = g0 + wn * 32 + col;
          v0 *= ws[g];
          v1 *= ws[g + 1];
        }
        *reinterpret_cast<uint32_t*>(yr + col) = pack2<T>(v0, v1);
      }
    }
}

}  // namespace tlmoegemm

#define TL_MOE_GEMM_FP8_ENTRY(NAME, SUF, T, BLOCK)                                                                  \
  extern "C" __global__ void __launch_bounds__(tlmoegemm::kThreads, 2)                                               \
      NAME##_##SUF(const uint8_t* xq, const float* xs, int ldxs, const uint8_t* w, const float* ws, int row_block, \
                   const int4* tiles, T* y, int out, int in) {                                                      \
    tlpdl::enter();                                                                                                 \
    tlmoegemm::grouped_fp8<T, BLOCK>(xq, xs, ldxs, w, ws, row_block, tiles, y, out, in);                            \
  }

#define TL_MOE_GEMM_FP8_ENTRIES(SUF, T)                       \
  TL_MOE_GEMM_FP8_ENTRY(tl_moe_gemm_fp8_block, SUF, T, true)  \
  TL_MOE_GEMM_FP8_ENTRY(tl_moe_gemm_fp8_row, SUF, T, false)
