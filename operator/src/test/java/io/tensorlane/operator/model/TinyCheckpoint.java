package io.tensorlane.operator.model;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A small Llama-style checkpoint made in the test: config.json and safetensors files with real headers. */
public final class TinyCheckpoint {
  public static final int LAYERS = 2;
  public static final int HIDDEN = 64;
  public static final int HEADS = 4;
  public static final int KV_HEADS = 2;
  public static final int VOCAB = 128;
  public static final int INTERMEDIATE = 128;
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private TinyCheckpoint() {
  }

  public static byte[] config(String architecture) {
    Map<String, Object> c = new LinkedHashMap<>();
    c.put("architectures", List.of(architecture));
    c.put("model_type", "llama");
    c.put("hidden_size", HIDDEN);
    c.put("intermediate_size", INTERMEDIATE);
    c.put("num_hidden_layers", LAYERS);
    c.put("num_attention_heads", HEADS);
    c.put("num_key_value_heads", KV_HEADS);
    c.put("vocab_size", VOCAB);
    c.put("max_position_embeddings", 256);
    c.put("rms_norm_eps", 1e-5);
    c.put("torch_dtype", "bfloat16");
    try {
      return MAPPER.writeValueAsBytes(c);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A safetensors file (header + zero data) holding {@code tensors}: name → [dtype, dims...]. */
  public static byte[] safetensors(Map<String, List<Object>> tensors) {
    Map<String, Object> header = new LinkedHashMap<>();
    header.put("__metadata__", Map.of("format", "pt"));
    long offset = 0;
    for (var e : tensors.entrySet()) {
      String dtype = (String) e.getValue().get(0);
      List<Object> shape = e.getValue().subList(1, e.getValue().size());
      long n = dtype.equals("F32") ? 4 : 2;
      for (Object d : shape) {
        n *= ((Number) d).longValue();
      }
      header.put(e.getKey(), Map.of("dtype", dtype, "shape", shape, "data_offsets", List.of(offset, offset + n)));
      offset += n;
    }
    try {
      byte[] h = MAPPER.writeValueAsBytes(header);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      out.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(h.length).array());
      out.write(h);
      out.write(new byte[(int) offset]);
      return out.toByteArray();
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Two shards: embeddings + layer 0 in the first, layer 1 + norm + lm_head in the second (BF16, one F32 norm). */
  public static Map<String, byte[]> files(String architecture) {
    Map<String, byte[]> f = new LinkedHashMap<>();
    f.put("config.json", config(architecture));
    f.put("tokenizer.json", "{}".getBytes(StandardCharsets.UTF_8));
    f.put("model-00001-of-00002.safetensors", safetensors(Map.of(
        "model.embed_tokens.weight", List.of("BF16", VOCAB, HIDDEN),
        "model.layers.0.mlp.up_proj.weight", List.of("BF16", INTERMEDIATE, HIDDEN))));
    f.put("model-00002-of-00002.safetensors", safetensors(Map.of(
        "model.layers.1.mlp.up_proj.weight", List.of("BF16", INTERMEDIATE, HIDDEN),
        "model.norm.weight", List.of("F32", HIDDEN),
        "lm_head.weight", List.of("BF16", VOCAB, HIDDEN))));
    return f;
  }

  /** BF16 bytes of {@link #files}: embeddings, two up_proj, lm_head. */
  public static final long BF16_BYTES = 2L * (VOCAB * HIDDEN * 2 + INTERMEDIATE * HIDDEN * 2);
  /** F32 bytes: the norm. */
  public static final long F32_BYTES = 4L * HIDDEN;
}
