// Tensorlane kernels that use the tensor cores (mma.sync, sm_80 and newer).
// Included by tl_model.cu (after its Cv<T>, kLog2e helpers); same conventions: T is __nv_bfloat16 or __half, fp32
// arithmetic, row-major dense tensors, 64-bit element offsets where they can exceed 2^31.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace {

template <typename T>
struct Mma;
template <>
struct Mma<__nv_bfloat16> {
  // c[16x8] += a[16x16] . b[16x8], fp32 accumulators (PTX ISA: mma.m16n8k16 fragment layouts)
  __device__ __forceinline__ static void run(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  __device__ __forceinline__ static uint32_t bits(__nv_bfloat16 v) { return __bfloat16_as_ushort(v); }
};
template <>
struct Mma<__half> {
  __device__ __forceinline__ static void run(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  __device__ __forceinline__ static uint32_t bits(__half v) { return __half_as_ushort(v); }
};

// Two T values in one 32-bit register, `lo` in the low half (the element with the smaller column index).
template <typename T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  return Mma<T>::bits(Cv<T>::t(lo)) | (Mma<T>::bits(Cv<T>::t(hi)) << 16);
}

// a and b as a sum of two T terms each (hi = T(x), lo = T(x - hi)): ~16 significant bits for bf16, packed in pairs.
template <typename T>
__device__ __forceinline__ void two_term(float a, float b, uint32_t& hi, uint32_t& lo) {
  const T ha = Cv<T>::t(a), hb = Cv<T>::t(b);
  hi = Mma<T>::bits(ha) | (Mma<T>::bits(hb) << 16);
  lo = pack2<T>(a - Cv<T>::f(ha), b - Cv<T>::f(hb));
}

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte asynchronous copy global -> shared; bytes = 0 writes 16 zero bytes and reads nothing.
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
}

__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.commit_group;\n" ::);
  asm volatile("cp.async.wait_group 0;\n" ::);
}

// Four 8x8 b16 matrices from shared memory, transposed (B fragments of row-major V rows).
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

}  // namespace

// ---- paged causal attention over query tiles, on tensor cores (prefill) ---------------------------------------
// Same q, k_cache, v_cache, block_tables, token_seq, token_pos, out as tl_attention, for hd = HD (64 or 128), over the
// tokens of `tiles`: tiles [num_tiles * 2] int32 = (first token t0, rows 1..64), the rows being tokens t0..t0+rows-1 of
// ONE sequence at strictly increasing positions (the host's AttentionPlan builds them from runs of a sequence's
// consecutive positions). Tokens outside the tiles are not touched.
// Block (tile, query head h), 4 warps; warp w owns rows 16w..16w+15. Keys are walked in tiles of 64: the block copies
// the tile's K and V rows from the paged cache into shared memory (cp.async, zeros past the last key), each warp
// computes its 16 x 64 scores with mma.m16n8k16 (q fragments held in registers, fp32 accumulation), masks keys past
// each row's position, keeps an online softmax per row (exp2, log2(e) folded into the scale), and adds P.V with the
// probabilities split in two T terms (hi + lo) so that P keeps ~16 significant bits (the output is checked against an
// fp64 reference at fp32 accuracy). A warp skips key tiles past its last row's position.
// Shared: 2 x 64 x (HD + 8) T = 34 KiB at HD = 128 (row padding makes fragment reads conflict-free).
// C = uint8_t: the cache holds e4m3 codes (tl_kvcache.cuh). Each thread then loads 16 codes of a K or V row (plain
// 16-byte loads instead of cp.async), converts them exactly to T and stores them in the same shared tiles (zeros past
// the last key), so the tensor-core arithmetic is that of a T cache holding the codes' values; k_scale multiplies the
// score scale and v_scale the final normalization.
constexpr int kPrefillKeys = 64;
constexpr int kPrefillWarps = 4;

// 16 e4m3 codes (byte i = column i) -> 16 T values, exactly (every e4m3 value is a bf16 and a half), stored as two
// 16-byte words at d (16-byte aligned; shared memory).
template <typename T>
__device__ __forceinline__ void kv8_to_t(const uint4 codes, uint4* d) {
  const uint32_t u[4] = {codes.x, codes.y, codes.z, codes.w};
  uint32_t p[8];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 lo = tle4m3::e4m3x2(u[i]), hi = tle4m3::e4m3x2(u[i] >> 16);
    p[2 * i] = pack2<T>(lo.x, lo.y);
    p[2 * i + 1] = pack2<T>(hi.x, hi.y);
  }
  d[0] = make_uint4(p[0], p[1], p[2], p[3]);
  d[1] = make_uint4(p[4], p[5], p[6], p[7]);
}

template <typename T, int HD, typename C = T>
__device__ __forceinline__ void tl_attn_prefill(const T* q, const C* k_cache, const C* v_cache, const int* block_tables,
                                                const int* token_seq, const int* token_pos, int max_blocks_per_seq,
                                                int block_size, T* out, const int* tiles, int num_tiles, int hq,
                                                int hk, float scale, const float* kv_scale = nullptr) {
  constexpr bool K8 = tlkv::kKv8<T, C>;
  constexpr int LD = HD + 8;            // shared row stride in elements (16-byte multiple)
  constexpr int KS = HD / 16;           // k-steps of q.k
  constexpr int NT = kPrefillKeys / 8;  // score tiles of 8 keys
  constexpr int DT = HD / 8;            // output tiles of 8 dims
  constexpr int CH = HD / 8;            // 16-byte chunks per row
  __shared__ __align__(16) T ks[kPrefillKeys * LD];
  __shared__ __align__(16) T vs[kPrefillKeys * LD];
  const int tile = blockIdx.x, h = blockIdx.y;
  if (tile >= num_tiles) return;
  const int t0 = tiles[2 * tile], rows = tiles[2 * tile + 1];
  const int kvh = h / (hq / hk);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, tig = lane & 3;
  const int* bt = block_tables + (long long)token_seq[t0] * max_blocks_per_seq;
  const int kend = token_pos[t0 + rows - 1] + 1;  // keys 0..kend-1
  const int r0 = warp * 16 + g, r1 = r0 + 8;      // this thread's rows (clamped to the last row for reads)
  const int c0 = min(r0, rows - 1), c1 = min(r1, rows - 1);
  const int pos0 = token_pos[t0 + c0], pos1 = token_pos[t0 + c1];
  const int wlast = token_pos[t0 + min(warp * 16 + 15, rows - 1)];
  const bool active = warp * 16 < rows;  // warp-uniform
  float sc = scale * kLog2e;
  if constexpr (K8) sc *= kv_scale[0];

  uint32_t qa[KS][4];
  {
    const uint32_t* q0 = reinterpret_cast<const uint32_t*>(q + ((long long)(t0 + c0) * hq + h) * HD);
    const uint32_t* q1 = reinterpret_cast<const uint32_t*>(q + ((long long)(t0 + c1) * hq + h) * HD);
#pragma unroll
    for (int k = 0; k < KS; ++k) {
      qa[k][0] = q0[k * 8 + tig];
      qa[k][1] = q1[k * 8 + tig];
      qa[k][2] = q0[k * 8 + 4 + tig];
      qa[k][3] = q1[k * 8 + 4 + tig];
    }
  }
  float o[DT][4];
#pragma unroll
  for (int d = 0; d < DT; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;

  const long long headStride = (long long)hk * HD;
  const long long kvOff = (long long)kvh * HD;
  const uint32_t ks_s = smem_addr(ks), vs_s = smem_addr(vs);
  const int ntiles = (kend + kPrefillKeys - 1) / kPrefillKeys;
  for (int kt = 0; kt < ntiles; ++kt) {
    const int kbase = kt * kPrefillKeys;
    if constexpr (!K8) {
      for (int c = threadIdx.x; c < kPrefillKeys * CH; c += blockDim.x) {
        const int row = c / CH, ch = c - row * CH;
        const int j = kbase + row;
        const bool ok = j < kend;
        const long long slot = ok ? (long long)bt[j / block_size] * block_size + (j % block_size) : 0;
        const uint32_t off = (uint32_t)((row * LD + ch * 8) * sizeof(T));
        cp_async16(ks_s + off, k_cache + slot * headStride + kvOff + ch * 8, ok ? 16 : 0);
        cp_async16(vs_s + off, v_cache + slot * headStride + kvOff + ch * 8, ok ? 16 : 0);
      }
      cp_async_wait_all();
    } else {
      constexpr int CH16 = HD / 16;  // 16-code chunks per row
      for (int c = threadIdx.x; c < kPrefillKeys * CH16; c += blockDim.x) {
        const int row = c / CH16, ch = c - row * CH16;
        const int j = kbase + row;
        uint4 kr = make_uint4(0u, 0u, 0u, 0u), vr = kr;  // zero codes: value 0 past the last key
        if (j < kend) {
          const long long slot = (long long)bt[j / block_size] * block_size + (j % block_size);
          kr = __ldg(reinterpret_cast<const uint4*>(k_cache + slot * headStride + kvOff + ch * 16));
          vr = __ldg(reinterpret_cast<const uint4*>(v_cache + slot * headStride + kvOff + ch * 16));
        }
        uint4* kd = reinterpret_cast<uint4*>(ks + row * LD + ch * 16);
        uint4* vd = reinterpret_cast<uint4*>(vs + row * LD + ch * 16);
        kv8_to_t<T>(kr, kd);
        kv8_to_t<T>(vr, vd);
      }
    }
    __syncthreads();
    if (active && kbase <= wlast) {
      float s[NT][4];
#pragma unroll
      for (int n = 0; n < NT; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
      for (int k = 0; k < KS; ++k) {
#pragma unroll
        for (int n = 0; n < NT; ++n) {
          const T* kr = ks + (n * 8 + g) * LD + k * 16 + 2 * tig;
          Mma<T>::run(s[n], qa[k], *reinterpret_cast<const uint32_t*>(kr), *reinterpret_cast<const uint32_t*>(kr + 8));
        }
      }
      float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
      for (int n = 0; n < NT; ++n) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int j = kbase + n * 8 + 2 * tig + e;
          s[n][e] = j <= pos0 ? s[n][e] * sc : -INFINITY;
          s[n][2 + e] = j <= pos1 ? s[n][2 + e] * sc : -INFINITY;
          mx0 = fmaxf(mx0, s[n][e]);
          mx1 = fmaxf(mx1, s[n][2 + e]);
        }
      }
      mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
      mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
      mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
      mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
      // key 0 lies in the first tile and every row's position is >= 0: m is finite from the first tile on
      const float mn0 = fmaxf(m0, mx0), mn1 = fmaxf(m1, mx1);
      const float f0 = exp2f(m0 - mn0), f1 = exp2f(m1 - mn1);  // m = -inf before the first tile: 0
      m0 = mn0;
      m1 = mn1;
      l0 *= f0;
      l1 *= f1;
#pragma unroll
      for (int d = 0; d < DT; ++d) {
        o[d][0] *= f0;
        o[d][1] *= f0;
        o[d][2] *= f1;
        o[d][3] *= f1;
      }
#pragma unroll
      for (int n = 0; n < NT; ++n) {
        s[n][0] = exp2f(s[n][0] - mn0);  // masked: exp2(-inf) = 0
        s[n][1] = exp2f(s[n][1] - mn0);
        s[n][2] = exp2f(s[n][2] - mn1);
        s[n][3] = exp2f(s[n][3] - mn1);
        l0 += s[n][0] + s[n][1];
        l1 += s[n][2] + s[n][3];
      }
#pragma unroll
      for (int kk = 0; kk < NT / 2; ++kk) {
        uint32_t ph[4], pl[4];
        two_term<T>(s[2 * kk][0], s[2 * kk][1], ph[0], pl[0]);
        two_term<T>(s[2 * kk][2], s[2 * kk][3], ph[1], pl[1]);
        two_term<T>(s[2 * kk + 1][0], s[2 * kk + 1][1], ph[2], pl[2]);
        two_term<T>(s[2 * kk + 1][2], s[2 * kk + 1][3], ph[3], pl[3]);
        const int key = kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
#pragma unroll
        for (int dp = 0; dp < HD / 16; ++dp) {
          uint32_t b[4];
          ldmatrix_x4_trans(b, vs_s + (uint32_t)((key * LD + dp * 16 + (lane >> 4) * 8) * sizeof(T)));
          Mma<T>::run(o[2 * dp], ph, b[0], b[1]);
          Mma<T>::run(o[2 * dp], pl, b[0], b[1]);
          Mma<T>::run(o[2 * dp + 1], ph, b[2], b[3]);
          Mma<T>::run(o[2 * dp + 1], pl, b[2], b[3]);
        }
      }
    }
    __syncthreads();  // the next tile's copies overwrite ks/vs
  }
  if (!active) return;
  l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
  l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
  float i0, i1;
  if constexpr (K8) {
    i0 = kv_scale[1] / l0;
    i1 = kv_scale[1] / l1;
  } else {
    i0 = 1.0f / l0;
    i1 = 1.0f / l1;
  }
  if (r0 < rows) {
    uint32_t* d0 = reinterpret_cast<uint32_t*>(out + ((long long)(t0 + r0) * hq + h) * HD);
#pragma unroll
    for (int d = 0; d < DT; ++d) d0[d * 4 + tig] = pack2<T>(o[d][0] * i0, o[d][1] * i0);
  }
  if (r1 < rows) {
    uint32_t* d1 = reinterpret_cast<uint32_t*>(out + ((long long)(t0 + r1) * hq + h) * HD);
#pragma unroll
    for (int d = 0; d < DT; ++d) d1[d * 4 + tig] = pack2<T>(o[d][2] * i1, o[d][3] * i1);
  }
}
