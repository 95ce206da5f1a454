// FP8 e4m3 ("e4m3fn") element conversions shared by the FP8-weight kernels (tl_fp8.cuh) and the FP8 KV cache
// (tl_kvcache.cuh). e4m3 -> half is exact (3 mantissa bits, every e4m3 exponent inside half's normal or subnormal
// range), so is e4m3 -> bf16 and e4m3 -> float. The encode rounds to nearest even and saturates to +-448 (the
// __NV_SATFINITE cast; the host's io.tensorlane.runtime.model.Fp8.encode gives the same byte).
#pragma once

#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

namespace tle4m3 {

// Two e4m3 values (the low and high byte of the low 16 bits of v) -> two floats, exactly.
__device__ __forceinline__ float2 e4m3x2(uint32_t v) {
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(v & 0xffffu), __NV_E4M3);
  return __half22float2(*reinterpret_cast<const __half2*>(&h));
}

// 16 e4m3 values (one 16-byte chunk, byte i = element i) -> 16 floats.
__device__ __forceinline__ void unpack16(const uint4 v, float* f) {
  const uint32_t u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 lo = e4m3x2(u[i]), hi = e4m3x2(u[i] >> 16);
    f[4 * i] = lo.x;
    f[4 * i + 1] = lo.y;
    f[4 * i + 2] = hi.x;
    f[4 * i + 3] = hi.y;
  }
}

// The e4m3 byte of x (round to nearest even, saturated to +-448).
__device__ __forceinline__ uint8_t encode(float x) {
  return static_cast<uint8_t>(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3));
}

}  // namespace tle4m3
