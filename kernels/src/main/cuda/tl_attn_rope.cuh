// Decode attention that computes its own q, k and v rows: tl_attn_split with a RopeIn (tl_model.cu), one kernel in
// place of tl_qkv_rope + tl_attn_split for a step in which every token is its sequence's only one (a decode step, no
// other token of the step writes a key that it reads). Every block computes its GH query heads from the raw qkv row
// (bias, q norm, RoPE; rounded to T as tl_qkv_rope stores them); the blocks of the slice holding the token's own key p
// also compute that key and value (as the cache holds them, T or e4m3 codes) and take them from shared memory as
// their group's last key, and the first query head group of each kv head writes them to the cache (slot < 0: not
// written). So the output, the cache and the slices' records equal tl_qkv_rope then tl_attn_split bit for bit.
// Launch: as tl_attn_split, grid (n, hk * (hq / hk / GH), S), block 128; token_list is not taken (every token).
// Included by tl_model.cu after tl_attn_split.
#pragma once

#define TL_ATTN_ROPE_KVP_kv8 , const float* kv_scale
#define TL_ATTN_ROPE_KVP
#define TL_ATTN_ROPE_KVA_kv8 kv_scale
#define TL_ATTN_ROPE_KVA nullptr
#define TL_ATTN_ROPE_ENTRY(SUF, T, C, KV, GH, NV)                                                                  \
  extern "C" __global__ void __launch_bounds__(128) tl_attn_rope_g##GH##_v##NV##KV##_##SUF(                     \
      const T* qkv, const T* bias, const T* q_norm, const T* k_norm, float eps, const float* cos,                  \
      const float* sin, const int* slots, C* k_cache, C* v_cache, const int* block_tables, const int* token_seq,  \
      const int* token_pos, int max_blocks_per_seq, int block_size, T* out, float* ws, int* tickets, int n, int hq, \
      int hk, float scale TL_ATTN_ROPE_KVP##KV) {                                                                   \
    tlpdl::enter();                                                                                                \
    __shared__ __align__(16) C kv_row[2 * 64 * NV];                                                                \
    tl_attn_split<T, GH, NV, C, true>(nullptr, k_cache, v_cache, block_tables, token_seq, token_pos,               \
                                      max_blocks_per_seq, block_size, out, ws, tickets, nullptr, n, hq, hk, scale, \
                                      TL_ATTN_ROPE_KVA##KV,                                                        \
                                      RopeIn<T, C>{qkv, bias, q_norm, k_norm, eps, cos, sin, slots, k_cache,       \
                                                   v_cache, kv_row});                                              \
  }
// the (GH, NV) pairs of tl_attn_split's entries
#define TL_ATTN_ROPE_CACHE(SUF, T, C, KV)   \
  TL_ATTN_ROPE_ENTRY(SUF, T, C, KV, 1, 1) \
  TL_ATTN_ROPE_ENTRY(SUF, T, C, KV, 1, 2) \
  TL_ATTN_ROPE_ENTRY(SUF, T, C, KV, 1, 4) \
  TL_ATTN_ROPE_ENTRY(SUF, T, C, KV, 2, 1) \
  TL_ATTN_ROPE_ENTRY(SUF, T, C, KV, 2, 2) \
  TL_ATTN_ROPE_ENTRY(SUF, T, C, KV, 2, 4) \
  TL_ATTN_ROPE_ENTRY(SUF, T, C, KV, 4, 1) \
  TL_ATTN_ROPE_ENTRY(SUF, T, C, KV, 4, 2)
#define TL_ATTN_ROPE_ENTRIES(SUF, T)      \
  TL_ATTN_ROPE_CACHE(SUF, T, T, )         \
  TL_ATTN_ROPE_CACHE(SUF, T, uint8_t, _kv8)
