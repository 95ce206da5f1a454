// The grouped FP8 GEMM of a MoE layer's long steps (prefill): every routed expert's rows in one launch, on FP8 tensor
// cores with fp32 accumulators: Hopper's warpgroup MMA where the build targets sm_90a (wgmma.mma_async m64n64k32 e4m3,
// both operands read from shared memory), mma.sync m16n8k32 e4m3 on other GPUs of sm_89 and newer. Included by
// tl_model.cu after tl_tensorcore.cuh (cp_async16, smem_addr, pack2) and tl_fp8.cuh. Launched by
// io.tensorlane.runtime.llm.MoeKernels#groupedFp8.
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
// expert (the host makes them from the expert offsets it reads back). Launch: grid (out / 128, count), 256 threads,
// kSharedBytes of dynamic shared memory.
#pragma once

namespace tlmoegemm {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TL_MOE_GEMM_WGMMA 1  // sm_90a: the two warpgroups each take 64 rows x 64 columns with wgmma
#endif

constexpr int kBM = 64;   // rows (tokens) of a tile
constexpr int kBN = 128;  // output columns of a tile
constexpr int kBK = 128;  // bytes of K a stage: one scale column
constexpr int kThreads = 256;  // 8 warps
constexpr int kStages = 4;     // stages of 128 bytes of K (2 stages: gate_up 1.45x bf16's time, 4: 1.43x; H100 2026-12-07)
// Shared memory: kStages A tiles, kStages B tiles (each 1024-byte aligned: the 128-byte swizzle wgmma reads), then each
// stage's activation scales of the tile's rows and weight scales of its columns
constexpr int kSA = kBM * kBK, kSB = kBN * kBK, kSX = kBM * 4, kSW = kBN * 4;
constexpr int kOffB = kStages * kSA, kOffX = kOffB + kStages * kSB, kOffW = kOffX + kStages * kSX;
// The dynamic shared memory of a launch (io.tensorlane.runtime.llm.MoeKernels#GEMM_FP8_SHARED_BYTES): 99 KiB, two
// blocks to an SM of sm_90 (228 KiB); over the 48 KiB default, so the launcher raises the kernel's limit first.
constexpr int kSharedBytes = kOffW + kStages * kSW;
static_assert(kSA % 1024 == 0 && kSB % 1024 == 0, "tiles on 1024-byte boundaries");

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

// One fp32 from global to shared memory, asynchronously; bytes 0 writes a zero and reads nothing.
__device__ __forceinline__ void cp_async4(uint32_t dst, const void* src, int bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
}

// Byte offset of 16-byte chunk c of row r in a tile of 128-byte rows, the chunks XOR-swizzled by the row so that the
// eight rows one ldmatrix reads fall in different banks. On a 1024-byte aligned tile this is the 128-byte swizzle of
// the wgmma shared-memory layouts (address bits 4-6 XOR bits 7-9), K-major.
__device__ __forceinline__ int swz(int r, int c) { return r * kBK + ((c ^ (r & 7)) << 4); }

// A thread's 32 accumulators as 8 fragments of 4 (the m16n8 C layout: element 2 h + j of fragment f is row
// frag_row(f) + lane / 4 + 8 h, column frag_col(f) + 2 (lane % 4) + j of the tile). wgmma: warpgroup warp / 4 takes
// columns [64 (warp / 4), +64), warp % 4 rows [16 (warp % 4), +16), fragment f columns 8 f on. mma.sync: warp (wm, wn) =
// (warp / 4, warp % 4) takes 32 x 32 at (32 wm, 32 wn), fragment f = 4 mt + nt the 16 x 8 at (16 mt, 8 nt) in it.
__device__ __forceinline__ int frag_row(int f, int warp) {
#ifdef TL_MOE_GEMM_WGMMA
  return (warp & 3) * 16;
#else
  return (warp >> 2) * 32 + (f >> 2) * 16;
#endif
}
__device__ __forceinline__ int frag_col(int f, int warp) {
#ifdef TL_MOE_GEMM_WGMMA
  return (warp >> 2) * 64 + f * 8;
#else
  return (warp & 3) * 32 + (f & 3) * 8;
#endif
}

#ifdef TL_MOE_GEMM_WGMMA
// The shared-memory matrix descriptor of a K-major tile of 128-byte rows with the 128-byte swizzle: start address / 16
// (bits 0-13), leading byte offset 0 (unused: one wgmma's 32 bytes of K lie inside a row), stride byte offset 1024 / 16
// (eight rows to the next eight, bits 32-45), layout 1 = 128-byte swizzle (bits 62-63). K steps advance the start.
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr) {
  return (uint64_t)((addr >> 4) & 0x3FFF) | ((uint64_t)(1024 >> 4) << 32) | ((uint64_t)1 << 62);
}

// d[64 x 64] (this warpgroup's) (+)= a[64 x 32] . b[64 x 32]^T, e4m3 from shared memory, fp32; accumulate: 0 overwrites.
__device__ __forceinline__ void wgmma_64x64x32(float (&d)[8][4], uint64_t da, uint64_t db, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1;\n}\n"
      : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]),
        "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),
        "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),
        "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),
        "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),
        "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),
        "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]),
        "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
      : "l"(da), "l"(db), "r"(accumulate));
}

// The accumulators as touched here, so that the compiler keeps every other use of them outside the span from the
// fence to the wait (the wgmma writes them asynchronously in between).
__device__ __forceinline__ void fence_operands(float (&d)[8][4]) {
#pragma unroll
  for (int f = 0; f < 8; ++f)
#pragma unroll
    for (int q = 0; q < 4; ++q) asm volatile("" : "+f"(d[f][q])::"memory");
}

// One 128-byte slice of K: part = this warpgroup's 64 x 64 of a_s . b_s^T, four wgmma of 32 bytes each.
__device__ __forceinline__ void slice_product(float (&part)[8][4], const uint8_t* a_s, const uint8_t* b_s, int warp,
                                              int) {
  const uint32_t a = smem_addr(a_s), b = smem_addr(b_s + (warp >> 2) * 64 * kBK);
  fence_operands(part);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int ks = 0; ks < kBK / 32; ++ks) wgmma_64x64x32(part, smem_desc(a + 32 * ks), smem_desc(b + 32 * ks), ks);
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  fence_operands(part);
}
#else
// One 128-byte slice of K: part = this warp's 32 x 32 of a_s . b_s^T, on mma.sync.
__device__ __forceinline__ void slice_product(float (&part)[8][4], const uint8_t* a_s, const uint8_t* b_s, int warp,
                                              int lane) {
  const int wm = warp >> 2, wn = warp & 3;
#pragma unroll
  for (int f = 0; f < 8; ++f)
#pragma unroll
    for (int q = 0; q < 4; ++q) part[f][q] = 0.0f;
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
        mma_e4m3(part[4 * mt + 2 * np], a[mt], b[0], b[1]);
        mma_e4m3(part[4 * mt + 2 * np + 1], a[mt], b[2], b[3]);
      }
    }
  }
}
#endif

template <typename T, bool BLOCK>
__device__ __forceinline__ void grouped_fp8(const uint8_t* xq, const float* xs, int ldxs, const uint8_t* w,
                                            const float* ws, int row_block, const int4* tiles, T* y, int out,
                                            int in) {
  extern __shared__ __align__(1024) uint8_t smem[];  // [A x kStages | B x kStages | sx x kStages | sw x kStages]
#ifdef TL_MOE_GEMM_WGMMA
  if ((smem_addr(smem) & 1023) != 0) __trap();  // the swizzle needs 1024-byte aligned tiles
#endif
  const int4 tile = tiles[blockIdx.y];
  const int r0 = tile.y, r1 = tile.z;  // this tile: rows [r0, min(r0 + 64, r1)) of expert tile.x
  const long long g0 = (long long)tile.x * out + (long long)blockIdx.x * kBN;  // first stacked weight row
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int steps = in / kBK;

  // K slice kt into stage st: the A and B tiles, and the slice's scales (activation scales of the tile's rows; with
  // BLOCK, the weight scale of each of the tile's columns, whatever row_block is). Rows past the expert's: zeros.
  // Each thread copies the same chunks every slice: 16 bytes of rows tid / 8 + 32 i (A: 2, B: 4), and one scale.
  const int lr = tid >> 3, lch = tid & 7;
  const bool a_ok0 = r0 + lr < r1, a_ok1 = r0 + lr + 32 < r1;
  const uint8_t* a_src = xq + (long long)(a_ok0 ? r0 + lr : r0) * in + lch * 16;
  const int a_d1 = a_ok1 ? 32 * in : 0;  // rows lr + 32: 32 rows on (or row r0 again, not read)
  const uint8_t* b_src = w + (g0 + lr) * in + lch * 16;
  const int b_step = 32 * in;
  const float* sc_src = nullptr;  // this thread's scale of slice 0; slice kt's is sc_src + kt * sc_stride
  int sc_stride = 0;
  int sc_bytes = 0, sc_off = 0, sc_stage = 0;  // sc_stage: the bytes from one stage's scales to the next's
  if (tid < kBM) {
    const bool ok = r0 + tid < r1;
    sc_src = xs + (ok ? r0 + tid : r0);
    sc_stride = ldxs;
    sc_bytes = ok ? 4 : 0;
    sc_off = kOffX + 4 * tid;
    sc_stage = kSX;
  } else if (BLOCK && tid >= kThreads - kBN) {
    const int c = tid - (kThreads - kBN);
    sc_src = ws + ((g0 + c) / row_block) * steps;
    sc_stride = 1;
    sc_bytes = 4;
    sc_off = kOffW + 4 * c;
    sc_stage = kSW;
  }
  auto load = [&](int st, int kt) {
    uint8_t* a_s = smem + st * kSA;
    uint8_t* b_s = smem + kOffB + st * kSB;
    const int k0 = kt * kBK;
    cp_async16(smem_addr(a_s + swz(lr, lch)), a_src + k0, a_ok0 ? 16 : 0);
    cp_async16(smem_addr(a_s + swz(lr + 32, lch)), a_src + a_d1 + k0, a_ok1 ? 16 : 0);
#pragma unroll
    for (int i = 0; i < kBN / 32; ++i) {
      cp_async16(smem_addr(b_s + swz(lr + 32 * i, lch)), b_src + i * b_step + k0, 16);
    }
    if (sc_src != nullptr) {
      cp_async4(smem_addr(smem + sc_off + st * sc_stage), sc_src + kt * sc_stride, sc_bytes);
    }
  };
  static_assert(kBM * kBK / 16 == 2 * kThreads && kBN * kBK / 16 == (kBN / 32) * kThreads, "one chunk row a pass");

  const int grp = lane >> 2, tig = lane & 3;
  float acc[8][4], part[8][4];
#pragma unroll
  for (int f = 0; f < 8; ++f)
#pragma unroll
    for (int q = 0; q < 4; ++q) acc[f][q] = part[f][q] = 0.0f;

  // the pipeline: kStages - 1 slices in flight while one is multiplied; a commit group per slice, empty past the end
#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) {
    if (st < steps) load(st, st);
    asm volatile("cp.async.commit_group;\n" ::);
  }
#pragma unroll 1
  for (int kt = 0; kt < steps; ++kt) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 2));
#ifdef TL_MOE_GEMM_WGMMA
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // cp.async's writes, seen by wgmma's reads
#endif
    __syncthreads();  // slice kt is in, and every warp is done with slice kt - 1, whose stage the next load takes
    if (kt + kStages - 1 < steps) load((kt + kStages - 1) % kStages, kt + kStages - 1);
    asm volatile("cp.async.commit_group;\n" ::);
    const int st = kt % kStages;
    slice_product(part, smem + st * kSA, smem + kOffB + st * kSB, warp, lane);
    // this 128-column slice, scaled: by the rows' activation scales, and (BLOCK) the columns' weight scales
    const float* sx_s = reinterpret_cast<const float*>(smem + kOffX + st * kSX);
    const float* sw_s = reinterpret_cast<const float*>(smem + kOffW + st * kSW);
#pragma unroll
    for (int f = 0; f < 8; ++f)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float sx = sx_s[frag_row(f, warp) + grp + 8 * h];
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const float sc = BLOCK ? sx * sw_s[frag_col(f, warp) + 2 * tig + j] : sx;
          acc[f][2 * h + j] = fmaf(part[f][2 * h + j], sc, acc[f][2 * h + j]);
        }
      }
  }

#pragma unroll
  for (int f = 0; f < 8; ++f)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = r0 + frag_row(f, warp) + grp + 8 * h;
      if (r >= r1) continue;
      const int col = frag_col(f, warp) + 2 * tig;
      float v0 = acc[f][2 * h], v1 = acc[f][2 * h + 1];
      if (!BLOCK) {
        v0 *= ws[g0 + col];
        v1 *= ws[g0 + col + 1];
      }
      *reinterpret_cast<uint32_t*>(y + (long long)r * out + blockIdx.x * kBN + col) = pack2<T>(v0, v1);
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
