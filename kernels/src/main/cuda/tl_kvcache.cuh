// The paged KV cache's elements. The cache holds K and V either in T (bf16/fp16, the activations' type: the kernels'
// _bf16/_fp16 entries) or as e4m3 codes (C = uint8_t: the _kv8_bf16/_kv8_fp16 entries, half the bytes per token)
// with one fp32 scale pair per layer on the device, kv_scale[2] = {k_scale, v_scale}: a code c stands for
// e4m3(c) * scale. The KV write stores encode<T>(x, scale) = e4m3(float(T(x)) / scale) (round to nearest even,
// saturated to +-448): the 16-bit value a T cache would hold, divided by the scale and quantized, so a host check
// can recompute each code bit for bit from the T cache of the same step. The attention kernels convert codes exactly
// (tl_e4m3.cuh) and fold the scales in fp32: k_scale into the query's score scale, v_scale into the final
// normalization; the rest of their arithmetic is that of the T cache.
// Included by tl_model.cu (before its rope and attention kernels).
#pragma once

#include "tl_e4m3.cuh"
#include "tl_norm.cuh"

namespace tlkv {

template <typename A, typename B>
struct Same {
  static constexpr bool value = false;
};
template <typename A>
struct Same<A, A> {
  static constexpr bool value = true;
};

// Whether C (the cache element of a T model) is the e4m3 code.
template <typename T, typename C>
constexpr bool kKv8 = !Same<T, C>::value;

// The code of x as the FP8 cache stores it: e4m3(float(T(x)) / scale).
template <typename T>
__device__ __forceinline__ uint8_t encode(float x, float scale) {
  return tle4m3::encode(tlnorm::Cv<T>::f(tlnorm::Cv<T>::t(x)) / scale);
}

// The value of one code (unscaled), exactly.
__device__ __forceinline__ float decode(uint8_t c) { return tle4m3::e4m3x2(c).x; }

}  // namespace tlkv
