// Linears of decode steps of 1..8 tokens on the tensor cores (mma.sync m16n8k16, fp32 accumulators; sm_80+):
// y[t, o] = T(sum_k x[t, k] * weight(o, k)) for t < n <= NT <= kMvTokens, the weight in the model's dtype T
// (gemv_mma) or FP8 e4m3 with its scales (gemv_mma_fp8, scale layouts as in tl_fp8.cuh). Included by tl_model.cu
// after tl_tensorcore.cuh (Mma) and tl_fp8.cuh (ld_stream, ld_readonly, Pair, Cv); launched by
// io.tensorlane.runtime.llm.GemvKernels and Fp8Kernels.
//
// Why: the one-warp-per-row GEMVs (tl_gemv, tl_gemv1_fp8) spend their issue slots converting and multiplying in fp32
// (per FP8 weight byte about 3.6 instructions: e4m3 -> half -> float, x bf16 -> float, an FMA), which caps the FP8 step
// well under the read bandwidth. Here one mma multiplies a 16 x 16 weight tile by up to 8 tokens, so a lane spends per
// 16 weight bytes one load, (FP8) 8 e4m3x2 -> f16x2 conversions and 2 mmas.
//
// Tile: a block of kMvWarps warps owns kMvRows = 16 output rows (row0 = 16 * blockIdx.x); its warps split the k range
// into contiguous runs of 128-column steps, and their fp32 partial sums meet in shared memory at the end. Lane
// = 4g + q (g = lane / 4, q = lane % 4) reads rows row0 + g and row0 + g + 8. In a step starting at column k0 it reads
// 16-byte chunks of those rows at columns k0 + CW * (4i + q) for i = 0 .. 128 / (4 CW) - 1 (CW = the columns of a
// chunk: 16 FP8, 8 T), so a lane quad reads whole 64-byte pieces of a row per load, and uses the chunks' elements in
// order, 4 per mma: mma j takes elements 4j .. 4j+3 of the lane's list as its fragment's columns (2q, 2q+1, 2q+8,
// 2q+9). That is a permutation of k inside the step, the same for the weight (A) and the activations (B), so only the
// summation order changes. B's column g is token g (token n-1 where g >= n: those sums are not stored).
//
// FP8: e4m3 -> f16 is exact, and the mma multiplies f16 by f16: x is staged into shared memory as f16 times a power
// of two 2^p per (warp, token, staged group of columns), p chosen from the group's amax so that |x| 2^p < 2^15 (every
// value within 29 binades of the amax converts exactly; smaller ones lose bits, below 2^-25 of it they vanish), and
// each step's partial sums are multiplied by 2^-p and the weight's scale (BLOCK: a step is one 128 x 128 block per row)
// before they are added. The dense kernel multiplies T by T as the checkpoint stores them.
// Requires: in % 16 == 0 (FP8) or in % 8 == 0 (T); x and w 16-byte aligned; 1 <= n <= NT.
// Launch: grid ceil(out / kMvRows), block kMvWarps * 32.
#pragma once

namespace tlmv {

constexpr int kMvWarps = 8;
constexpr int kMvRows = 16;
constexpr int kMvStep = 128;  // columns per step; one FP8 scale block
constexpr int kMvTokens = 8;
constexpr int kMvGroup = 4;   // FP8: steps whose weights are loaded together (16 loads of 16 bytes in flight a lane)
constexpr int kMvDenseGroup = 2;  // T: the same (16 weight loads and 8 of x in flight a lane)
constexpr int kMvMinBlocks = 2;   // resident blocks a multiprocessor (__launch_bounds__): at most 128 registers a thread

__device__ __forceinline__ uint32_t word(const uint4& v, int i) {
  return i == 0 ? v.x : (i == 1 ? v.y : (i == 2 ? v.z : v.w));
}

// f16x2 of the two e4m3 bytes in the low 16 bits of v (the lower byte in the low half), exactly.
__device__ __forceinline__ uint32_t e4m3x2_h2(uint32_t v) {
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(v & 0xffffu), __NV_E4M3);
  return (uint32_t)h.x | ((uint32_t)h.y << 16);
}

// The warps' partial sums acc (this lane's C fragment: rows g, g+8 x tokens 2q, 2q+1) summed per row and token,
// times the row's scale (rscale: per-row layout, else null), written to y[t, row0 + r].
template <typename T, int NT>
__device__ __forceinline__ void reduce_store(const float (&acc)[4], float (*red)[NT][kMvRows], const float* rscale,
                                             T* y, int n, int out, int row0) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  if (2 * q < NT && 2 * q < n) {
    red[warp][2 * q][g] = acc[0];
    red[warp][2 * q][g + 8] = acc[2];
  }
  if (2 * q + 1 < NT && 2 * q + 1 < n) {
    red[warp][2 * q + 1][g] = acc[1];
    red[warp][2 * q + 1][g + 8] = acc[3];
  }
  __syncthreads();
  for (int i = threadIdx.x; i < n * kMvRows; i += blockDim.x) {
    const int t = i / kMvRows, r = i % kMvRows, row = row0 + r;
    if (row >= out) continue;
    float v = 0.0f;
#pragma unroll
    for (int wp = 0; wp < kMvWarps; ++wp) v += red[wp][t][r];
    if (rscale != nullptr) v *= rscale[row];
    y[(long long)t * out + row] = Cv<T>::t(v);
  }
}

// ---- dense weights (T): 4 chunks of 8 columns a row per lane and step --------------------------------------------
template <typename T, int NT, int DG>
__device__ __forceinline__ void gemv_mma(const T* x, const T* w, T* y, int n, int in, int out) {
  __shared__ float red[kMvWarps][NT][kMvRows];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  const int row0 = blockIdx.x * kMvRows;
  const int ra = row0 + g, rb = ra + 8;
  const bool va = ra < out, vb = rb < out;
  const T* wa = w + (long long)(va ? ra : 0) * in;
  const T* wb = w + (long long)(vb ? rb : 0) * in;
  const T* xr = x + (long long)min(g, n - 1) * in;
  const int steps = (in + kMvStep - 1) / kMvStep;
  const int per = (steps + kMvWarps - 1) / kMvWarps;
  const int s0 = warp * per, s1 = min(steps, s0 + per);
  const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int s = s0; s < s1; s += DG) {  // DG steps' loads in flight: 8 DG weight chunks and 4 DG of x a lane
    uint4 a[DG][4], b[DG][4], xv[DG][4];
#pragma unroll
    for (int u = 0; u < DG; ++u) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int col = (s + u) * kMvStep + 8 * (4 * i + q);
        const bool ok = s + u < s1 && col < in;
        a[u][i] = ok && va ? ld_stream(reinterpret_cast<const uint4*>(wa + col)) : zero;
        b[u][i] = ok && vb ? ld_stream(reinterpret_cast<const uint4*>(wb + col)) : zero;
        xv[u][i] = ok ? ld_readonly(reinterpret_cast<const uint4*>(xr + col)) : zero;
      }
    }
#pragma unroll
    for (int u = 0; u < DG; ++u) {
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int i = j >> 1, e = 2 * (j & 1);
        const uint32_t A[4] = {word(a[u][i], e), word(b[u][i], e), word(a[u][i], e + 1), word(b[u][i], e + 1)};
        Mma<T>::run(acc, A, word(xv[u][i], e), word(xv[u][i], e + 1));
      }
    }
  }
  reduce_store<T, NT>(acc, red, nullptr, y, n, out, row0);
}

// ---- FP8 weights: 2 chunks of 16 columns a row per lane and step; x staged as scaled f16 -------------------------
template <typename T, bool BLOCK, int NT>
__device__ __forceinline__ void gemv_mma_fp8(const T* x, const uint8_t* w, const float* scale, T* y, int n, int in,
                                             int out, int row_block) {
  constexpr int CS = NT <= 2 ? kMvGroup : (NT <= 4 ? 2 : 1);  // steps of x staged at a time (shared memory)
  constexpr int CK = CS * kMvStep;                            // their columns
  constexpr int UNITS = CK / 8;                               // 8-column pieces of x a token, staged by the lanes
  constexpr int UL = (UNITS + 31) / 32;                       // ... per lane
  __shared__ __align__(16) __half xs[kMvWarps][NT][CK];
  __shared__ float xinv[kMvWarps][NT];
  __shared__ float red[kMvWarps][NT][kMvRows];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  const int row0 = blockIdx.x * kMvRows;
  const int ra = row0 + g, rb = ra + 8;
  const bool va = ra < out, vb = rb < out;
  const uint8_t* wa = w + (long long)(va ? ra : 0) * in;
  const uint8_t* wb = w + (long long)(vb ? rb : 0) * in;
  const int steps = (in + kMvStep - 1) / kMvStep;  // = the 128-column scale blocks
  const float* sa = BLOCK ? scale + (long long)((va ? ra : 0) / row_block) * steps : nullptr;
  const float* sb = BLOCK ? scale + (long long)((vb ? rb : 0) / row_block) * steps : nullptr;
  const int per = (steps + kMvWarps - 1) / kMvWarps;
  const int s0 = warp * per, s1 = min(steps, s0 + per);
  const int tb = min(g, n - 1);                                    // this lane's B column (token)
  const int t0 = min(2 * q, n - 1), t1 = min(2 * q + 1, n - 1);  // tokens of its C columns
  const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int gs = s0; gs < s1; gs += kMvGroup) {
    uint4 a[kMvGroup][2], b[kMvGroup][2];
#pragma unroll
    for (int u = 0; u < kMvGroup; ++u) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int col = (gs + u) * kMvStep + 16 * (4 * h + q);
        const bool ok = gs + u < s1 && col < in;
        a[u][h] = ok && va ? ld_stream(reinterpret_cast<const uint4*>(wa + col)) : zero;
        b[u][h] = ok && vb ? ld_stream(reinterpret_cast<const uint4*>(wb + col)) : zero;
      }
    }
#pragma unroll
    for (int cu = 0; cu < kMvGroup; cu += CS) {
      const int c0 = gs + cu;  // first step staged
      if (c0 >= s1) break;
      // stage x[t, c0 * 128 ..) for every token as f16 * 2^p (the warp's amax per token)
      for (int t = 0; t < n; ++t) {
        const T* xt = x + (long long)t * in;
        float f[UL][8];
        float amax = 0.0f;
#pragma unroll
        for (int i = 0; i < UL; ++i) {
          const int u = lane + 32 * i, col = c0 * kMvStep + 8 * u;
          const uint4 v = u < UNITS && col < in ? ld_readonly(reinterpret_cast<const uint4*>(xt + col)) : zero;
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const float2 p = Pair<T>::f(word(v, e));
            f[i][2 * e] = p.x;
            f[i][2 * e + 1] = p.y;
            amax = fmaxf(amax, fmaxf(fabsf(p.x), fabsf(p.y)));
          }
        }
        const uint32_t m = __reduce_max_sync(0xffffffffu, __float_as_uint(amax));  // amax >= 0: bits order as values
        int p = m == 0u ? 0 : 14 - ((int)((m >> 23) & 0xffu) - 127);
        p = max(-126, min(126, p));
        const float sc = __int_as_float((p + 127) << 23);
        if (lane == 0) xinv[warp][t] = __int_as_float((127 - p) << 23);
#pragma unroll
        for (int i = 0; i < UL; ++i) {
          const int u = lane + 32 * i;
          if (u < UNITS) {
            uint32_t h[4];
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const __half2 v2 = __floats2half2_rn(f[i][2 * e] * sc, f[i][2 * e + 1] * sc);
              h[e] = *reinterpret_cast<const uint32_t*>(&v2);
            }
            *reinterpret_cast<uint4*>(&xs[warp][t][8 * u]) = make_uint4(h[0], h[1], h[2], h[3]);
          }
        }
      }
      __syncwarp();
      const float xi0 = xinv[warp][t0], xi1 = xinv[warp][t1];
#pragma unroll
      for (int cs = 0; cs < CS; ++cs) {
        const int u = cu + cs, s = gs + u;
        if (s >= s1) break;
        float tmp[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          // this lane's 16 columns of chunk h as f16: 32 bytes of the staged row
          const uint4* xp = reinterpret_cast<const uint4*>(&xs[warp][tb][cs * kMvStep + 16 * (4 * h + q)]);
          const uint4 x0 = xp[0], x1 = xp[1];
#pragma unroll
          for (int jj = 0; jj < 4; ++jj) {  // mma j = 4h + jj: bytes 4jj .. 4jj+3 of chunk h
            const uint32_t wa4 = word(a[u][h], jj), wb4 = word(b[u][h], jj);
            const uint32_t A[4] = {e4m3x2_h2(wa4), e4m3x2_h2(wb4), e4m3x2_h2(wa4 >> 16), e4m3x2_h2(wb4 >> 16)};
            const uint4& xv = jj < 2 ? x0 : x1;
            const int e = 2 * (jj & 1);
            Mma<__half>::run(tmp, A, word(xv, e), word(xv, e + 1));
          }
        }
        const float fa = BLOCK ? sa[s] : 1.0f, fb = BLOCK ? sb[s] : 1.0f;
        acc[0] = fmaf(fa * xi0, tmp[0], acc[0]);
        acc[1] = fmaf(fa * xi1, tmp[1], acc[1]);
        acc[2] = fmaf(fb * xi0, tmp[2], acc[2]);
        acc[3] = fmaf(fb * xi1, tmp[3], acc[3]);
      }
      __syncwarp();  // every lane has read xs before the next staging writes it
    }
  }
  reduce_store<T, NT>(acc, red, BLOCK ? nullptr : scale, y, n, out, row0);
}

}  // namespace tlmv

#define TL_GEMV_MMA_ENTRIES(SUF, T)                                                                                \
  extern "C" __global__ void __launch_bounds__(tlmv::kMvWarps * 32, tlmv::kMvMinBlocks) tl_gemv_mma1_##SUF(const T* x, const T* w,      \
                                                                                      T* y, int n, int in,          \
                                                                                      int out) {                   \
    tlpdl::enter();                                                                                                \
    tlmv::gemv_mma<T, 1, tlmv::kMvDenseGroup>(x, w, y, n, in, out);                                                                     \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(tlmv::kMvWarps * 32, tlmv::kMvMinBlocks) tl_gemv_mma_##SUF(const T* x, const T* w, T* y, \
                                                                                     int n, int in, int out) {     \
    tlpdl::enter();                                                                                                \
    tlmv::gemv_mma<T, tlmv::kMvTokens, tlmv::kMvDenseGroup>(x, w, y, n, in, out);                                                       \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(tlmv::kMvWarps * 32, tlmv::kMvMinBlocks) tl_gemv_mma1_fp8_block_##SUF(                  \
      const T* x, const uint8_t* w, const float* scale, T* y, int n, int in, int out, int row_block) {             \
    tlpdl::enter();                                                                                                \
    tlmv::gemv_mma_fp8<T, true, 1>(x, w, scale, y, n, in, out, row_block);                                         \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(tlmv::kMvWarps * 32, tlmv::kMvMinBlocks) tl_gemv_mma1_fp8_row_##SUF(                    \
      const T* x, const uint8_t* w, const float* scale, T* y, int n, int in, int out, int row_block) {             \
    tlpdl::enter();                                                                                                \
    tlmv::gemv_mma_fp8<T, false, 1>(x, w, scale, y, n, in, out, row_block);                                        \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(tlmv::kMvWarps * 32, tlmv::kMvMinBlocks) tl_gemv_mma_fp8_block_##SUF(                   \
      const T* x, const uint8_t* w, const float* scale, T* y, int n, int in, int out, int row_block) {             \
    tlpdl::enter();                                                                                                \
    tlmv::gemv_mma_fp8<T, true, tlmv::kMvTokens>(x, w, scale, y, n, in, out, row_block);                           \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(tlmv::kMvWarps * 32, tlmv::kMvMinBlocks) tl_gemv_mma_fp8_row_##SUF(                     \
      const T* x, const uint8_t* w, const float* scale, T* y, int n, int in, int out, int row_block) {             \
    tlpdl::enter();                                                                                                \
    tlmv::gemv_mma_fp8<T, false, tlmv::kMvTokens>(x, w, scale, y, n, in, out, row_block);                          \
  }
