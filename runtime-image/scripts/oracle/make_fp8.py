#!/usr/bin/env python3
"""FP8 variants of the small trained checkpoints (made by make_models.py) and the references for them.

For each base model MODELDIR/<name> (bf16 safetensors + tokenizer) and each variant, writes into MODELDIR:

  <name>-fp8b       block-scaled FP8 (Qwen3-*-FP8 / DeepSeek-V3 / transformers' FineGrainedFP8Config layout)
  <name>-fp8c       compressed-tensors "FP8-dynamic": per-channel weight scales (BF16 [out, 1])
  <name>-fp8t       compressed-tensors, per-tensor weight scale (F32 [1]; --tensor-scale-dtype bf16 for BF16 [1])
  <variant>-deq     the reference: the SAME fp8 weights dequantized in fp32 (fp8 -> fp32 times the scale), saved as an
                    ordinary unquantized float32 checkpoint of the same architecture (no quantization_config);
                    reference.py makes the fp32-logits / bf16-greedy references from it
  <name>-fp8b-badscale  (--badscale, default llama128) the negative control: -fp8b with wrong scales (see BAD SCALES);
                    compared against the GOOD <name>-fp8b-deq reference it must FAIL
  <variant>/fp8-report.json  per tensor: the relative norm error ||dequant(fp8) - w_bf16|| / ||w_bf16||, its max and
                    median over the tensors, the scale range; MODELDIR/fp8-report.json: all variants made so far

Quantized: every Linear weight of the decoder layers (self_attn.{q,k,v,o}_proj, mlp.{gate,up,down}_proj, and a
Qwen3-MoE's experts mlp.experts.E.{gate,up,down}_proj, each expert its own block grid; the router mlp.gate stays bf16,
and compressed-tensors variants of a MoE model ignore it by name, re:.*mlp[.]gate$). Embeddings,
norms (also Qwen3's q_norm/k_norm), biases and lm_head stay bf16 (modules_to_not_convert / ignore: ["lm_head"]); the
tokenizer files, generation_config.json and the chat template files are copied unchanged. Only torch (CPU is enough),
numpy and safetensors are used: transformers there cannot run FP8 and the compressed-tensors package is not installed.

usage: make_fp8.py --models MODELDIR [--only "llama qwen3 llama128"] [--variants "fp8b fp8c fp8t"] [--badscale llama128]
       make_fp8.py --selfcheck                    numpy-only (torch too when importable) check, no GPU, no files
       make_fp8.py --print-report MODELDIR --only "llama128-fp8b ..."     the distances as a table
       make_fp8.py --control-verdict COMPARE.json --run NAME               exit 0 when the control FAILed as it must

LAYOUTS, and where each fact comes from (repository + path; read with the code-search tool, 2026-12)
---------------------------------------------------------------------------------------------------
Block FP8, quant_method "fp8" (-fp8b):
  * config.json "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
    "weight_block_size": [128, 128]}; `weight_scale_inv` is a float32 tensor stored next to each weight, the
    dequantization is (128x128 weight block) * weight_scale_inv, and a block not aligned to 128 is zero-padded to 128
    before its scale is computed, the padding removed after quantization
      -- deepseek-ai/DeepSeek-V3 README_WEIGHTS.md ("FP8 Weight Documentation")
  * FP8Linear: weight float8_e4m3fn [out, in], weight_scale_inv float32 [ceil(out/128), ceil(in/128)]
    ((out + 127) // 128, (in + 127) // 128)
      -- huggingface/transformers src/transformers/integrations/finegrained_fp8.py (class FP8Linear)
  * scale = amax(|block|) / 448 (448 = torch.finfo(float8_e4m3fn).max): that file's act_quant_kernel, copied from
    DeepSeek-V3 inference/kernel.py (`s = tl.max(tl.abs(x)) / 448.0; y = x / s`); why we requantize ourselves instead
    of using transformers' FineGrainedFP8Config writer (its scales were ~1 where amax/448 was ~5e-4): ../shared/DEVICE.md
    "Reference checkpoints for quantized and MoE models"
  * FineGrainedFP8Config(activation_scheme="dynamic", weight_block_size=(128, 128), modules_to_not_convert=None)
      -- huggingface/transformers src/transformers/utils/quantization_config.py
  * the scale_inv dtype is not always F32 in the wild: "it might be bfloat16 for some models like the fp8 Qwen3 dense
    models" (HabanaAI/vllm-fork pull request 2141, verified with Qwen/Qwen3-32B-FP8); "In the model
    Qwen/Qwen3-4B-Instruct-2507-FP8, some parameters like *.weight_scale_inv are in half precision" (InternLM/lmdeploy
    pull request 4276). Default here F32 (the brief, DeepSeek-V3); --block-scale-dtype bf16|f16 writes the others (the
    weights then quantized with the rounded scales).
  A block that is all zeros gets scale 1.0 here (its fp8 values are all 0, so any positive scale dequantizes the same).

compressed-tensors, format "float-quantized" (-fp8c per channel, -fp8t per tensor):
  * QuantizationConfig fields: config_groups, quant_method (default "compressed-tensors"), kv_cache_scheme, format,
    quantization_status ("compressed" = QuantizationStatus.COMPRESSED), global_compression_ratio, ignore
      -- vllm-project/compressed-tensors src/compressed_tensors/quantization/quant_config.py
  * "float-quantized" = CompressionFormat.float_quantized -- src/compressed_tensors/config/base.py; its compressor
    FloatQuantizationCompressor (an alias of NaiveQuantizationCompressor) stores "weight" in the quantized dtype plus
    "weight_scale" -- src/compressed_tensors/compressors/quantized_compressors/naive_quantized.py; zero points of a
    symmetric scheme are not saved (_skip_zp) -- src/compressed_tensors/compressors/quantized_compressors/base.py
  * QuantizationScheme fields targets, weights, input_activations, output_activations (and, newer, format); the
    FP8_DYNAMIC preset: weights {num_bits 8, type float, strategy channel, symmetric, dynamic false}, input_activations
    {num_bits 8, type float, strategy token, symmetric, dynamic true}
      -- src/compressed_tensors/quantization/quant_scheme.py
  * QuantizationArgs fields num_bits, type ("int"/"float"), symmetric, group_size, strategy ("tensor", "channel",
    "group", "block", "token", ...), block_structure, dynamic, actorder, observer (newer versions add scale_dtype,
    zp_dtype, observer_kwargs; we write the set the brief gives, as older FP8-dynamic checkpoints do)
      -- src/compressed_tensors/quantization/quant_args.py; a serialized example with these keys (observer "minmax"
         for weights): the config.json of huggingface.co/nm-testing/DeepSeek-Coder-V2-Lite-Instruct-W8A8; the recipe
         of huggingface.co/neuralmagic-ent/Llama-3.2-3B-Instruct-FP8-dynamic (weights float/channel/static,
         input_activations float/token/dynamic, targets [Linear], ignore [lm_head])
  * scale shapes: strategy "tensor" -> (1,), "channel" -> (out, 1); scale dtype = the observed weight's dtype (bf16
    for a bf16 model) -- src/compressed_tensors/quantization/lifecycle/initialize.py (initialize_qparams). So a real
    per-tensor checkpoint may carry BF16 [1]; the brief asks for F32 [1] (the engine should take both).
  * scale = max(|min|, |max|) / (bit_range / 2), bit_range = 448 - (-448): amax / 448; a zero scale becomes the
    dtype's eps -- src/compressed_tensors/quantization/utils/helpers.py (calculate_qparams). Here: a zero row/tensor
    gets scale 1.0 (as for blocks; its fp8 values are 0 either way).
  * quantize = clamp(x / scale, -448, 448).to(float8_e4m3fn) (round_to_quantized_type_dtype, quant_args.py)
  * vLLM reads these as CompressedTensorsW8A8Fp8: a "weight" and a "weight_scale" parameter, CHANNEL ->
    ChannelQuantScaleParameter, TENSOR -> PerTensorScaleParameter, BLOCK -> BlockQuantScaleParameter
      -- vllm-project/vllm vllm/model_executor/layers/quantization/compressed_tensors/schemes/compressed_tensors_w8a8_fp8.py
  Per channel: scale = amax(|row|)/448 in fp32, rounded to bf16, and the row quantized with the ROUNDED scale, so the
  stored pair dequantizes (fp8 * bf16 scale) to exactly what the -deq reference holds.

The references do not emulate FP8 activations ("activation_scheme": "dynamic" / input_activations): they are the
dequantized weights with bf16/fp32 activations. An engine that also quantizes activations to FP8 adds its own error.

BAD SCALES (the negative control, -fp8b-badscale, from -fp8b's tensors; a MoE model's: moe_badscale_edits, its
experts' scales only): layer 0 q_proj block (0, 0) doubled; layer 0
o_proj: every block of block-row 0 doubled (output rows 0..127 of the attention output twice as large); layer 1 (or the
last) down_proj: block-row 0 set to 0 (MLP output rows 0..127 gone). The fp8 weights are untouched. The script prints
how much each weight changed and, where transformers runs, the logits cosine between the good and the bad
dequantized model on the reference prompts (the prediction that the engine's compare must FAIL).
"""
import argparse
import json
import os
import re
import shutil
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import log  # noqa: E402

FP8_MAX = 448.0       # torch.finfo(torch.float8_e4m3fn).max
BLOCK = 128
VARIANTS = ("fp8b", "fp8c", "fp8t")
# the decoder's linears, Qwen3-MoE's experts (mlp.experts.E.{gate,up,down}_proj) among them; never the router (mlp.gate)
LINEAR_RE = re.compile(r"^model\.layers\.(\d+)\.(self_attn\.(?:q|k|v|o)_proj|mlp\.(?:experts\.\d+\.)?(?:gate|up|down)_proj)"
                       r"\.weight$")
# compressed-tensors' ignore entry for a MoE router (exact names or re: patterns matched from the start)
CT_ROUTER_IGNORE = "re:.*mlp[.]gate$"
SKIP_COPY = {"config.json", "model.safetensors.index.json", "fp8-report.json"}

FP8B_QCFG = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [BLOCK, BLOCK],
             "modules_to_not_convert": ["lm_head"]}


def ct_qcfg(strategy, moe=False):
    """compressed-tensors quantization_config of an FP8-dynamic checkpoint, weights per `strategy`; a MoE model's
    routers (nn.Linear, target "Linear") are left unquantized by name, as real FP8-dynamic MoE checkpoints do."""
    return {
        "quant_method": "compressed-tensors", "format": "float-quantized", "quantization_status": "compressed",
        "ignore": ["lm_head"] + ([CT_ROUTER_IGNORE] if moe else []), "kv_cache_scheme": None,
        "config_groups": {"group_0": {
            "targets": ["Linear"],
            "weights": {"num_bits": 8, "type": "float", "strategy": strategy, "symmetric": True, "dynamic": False,
                        "group_size": None, "block_structure": None, "actorder": None, "observer": "minmax"},
            "input_activations": {"num_bits": 8, "type": "float", "strategy": "token", "symmetric": True,
                                  "dynamic": True, "group_size": None, "block_structure": None, "actorder": None,
                                  "observer": None},
            "output_activations": None}},
    }


def cdiv(a, b):
    return -(-a // b)


# ---------------------------------------------------------------------------------------------------------
# numpy emulation (the self-check; also the cross-check of the torch code when torch is importable)
# ---------------------------------------------------------------------------------------------------------

def np_fp8_round(x):
    """float32/64 array -> the nearest float8_e4m3fn value (round half to even), as float64; |x| is clamped to 448
    first (torch's cast of a larger value gives NaN, so every caller clamps)."""
    import numpy as np
    x = np.clip(np.asarray(x, dtype=np.float64), -FP8_MAX, FP8_MAX)
    a = np.abs(x)
    _, ex = np.frexp(a)                    # a = m * 2**ex, m in [0.5, 1): the binade [2**(ex-1), 2**ex)
    e = np.maximum(ex - 1, -6)             # below 2**-6 the subnormals share the quantum 2**-9
    q = np.ldexp(1.0, e - 3)               # 3 mantissa bits
    r = np.minimum(np.round(a / q) * q, FP8_MAX)   # np.round: half to even
    return np.copysign(r, x)


def np_bf16_round(x):
    """float32 array -> nearest bfloat16 value (round half to even), as float32."""
    import numpy as np
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.astype(np.uint32).view(np.float32)


def np_quant_block(w, bs=BLOCK):
    import numpy as np
    w = np.asarray(w, dtype=np.float32)
    out, inn = w.shape
    R, C = cdiv(out, bs), cdiv(inn, bs)
    pad = np.zeros((R * bs, C * bs), dtype=np.float32)
    pad[:out, :inn] = w
    blocks = pad.reshape(R, bs, C, bs)
    amax = np.abs(blocks).max(axis=(1, 3))
    scale = np.where(amax > 0, amax / np.float32(FP8_MAX), np.float32(1.0)).astype(np.float32)
    q = np_fp8_round((blocks / scale[:, None, :, None]).astype(np.float32))
    return q.reshape(R * bs, C * bs)[:out, :inn], scale


def np_expand_block(scale, shape, bs=BLOCK):
    import numpy as np
    return np.repeat(np.repeat(scale, bs, axis=0), bs, axis=1)[:shape[0], :shape[1]]


def np_quant_channel(w, bf16_scale=True):
    import numpy as np
    w = np.asarray(w, dtype=np.float32)
    amax = np.abs(w).max(axis=1, keepdims=True)
    scale = np.where(amax > 0, amax / np.float32(FP8_MAX), np.float32(1.0)).astype(np.float32)
    if bf16_scale:
        scale = np_bf16_round(scale)
    return np_fp8_round((w / scale).astype(np.float32)), scale


def np_quant_tensor(w):
    import numpy as np
    w = np.asarray(w, dtype=np.float32)
    amax = np.float32(np.abs(w).max())
    scale = np.array([amax / np.float32(FP8_MAX) if amax > 0 else 1.0], dtype=np.float32)
    return np_fp8_round((w / scale).astype(np.float32)), scale


def rel_err(a, b):
    """||a - b|| / ||b|| in float64 (numpy arrays)."""
    import numpy as np
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    n = np.linalg.norm(b)
    return float(np.linalg.norm(a - b) / n) if n > 0 else float(np.linalg.norm(a - b))


# ---------------------------------------------------------------------------------------------------------
# torch (the real thing; CPU)
# ---------------------------------------------------------------------------------------------------------

def t_quant_block(torch, w, bs=BLOCK, scale_dtype=None):
    """w [out, in] -> (fp8 [out, in], scale_inv [ceil(out/bs), ceil(in/bs)], float32 unless scale_dtype says other;
    a rounded scale is the one the weights are quantized with)."""
    w = w.float()
    out, inn = w.shape
    R, C = cdiv(out, bs), cdiv(inn, bs)
    pad = torch.zeros(R * bs, C * bs, dtype=torch.float32, device=w.device)
    pad[:out, :inn] = w
    blocks = pad.view(R, bs, C, bs)
    amax = blocks.abs().amax(dim=3).amax(dim=1)
    scale = torch.where(amax > 0, amax / FP8_MAX, torch.ones_like(amax))
    if scale_dtype is not None and scale_dtype != torch.float32:
        scale = scale.to(scale_dtype)
    q = (blocks / scale.float()[:, None, :, None]).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
    q = q.view(R * bs, C * bs)[:out, :inn].contiguous()
    return q, scale.contiguous()


def t_expand_block(scale, shape, bs=BLOCK):
    return scale.float().repeat_interleave(bs, dim=0).repeat_interleave(bs, dim=1)[:shape[0], :shape[1]]


def t_quant_channel(torch, w, scale_dtype):
    """w [out, in] -> (fp8 [out, in], scale [out, 1] in scale_dtype); quantized with the scale as stored."""
    w = w.float()
    amax = w.abs().amax(dim=1, keepdim=True)
    scale = torch.where(amax > 0, amax / FP8_MAX, torch.ones_like(amax)).to(scale_dtype)
    q = (w / scale.float()).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
    return q.contiguous(), scale.contiguous()


def t_quant_tensor(torch, w, scale_dtype):
    """w [out, in] -> (fp8 [out, in], scale [1] in scale_dtype)."""
    w = w.float()
    amax = w.abs().amax().reshape(1)
    scale = torch.where(amax > 0, amax / FP8_MAX, torch.ones_like(amax)).to(scale_dtype)
    q = (w / scale.float()).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
    return q.contiguous(), scale.contiguous()


def t_dequant(variant, q, scale):
    """fp8 weight + its scale -> float32 weight (fp32 arithmetic)."""
    if variant == "fp8b":
        return q.float() * t_expand_block(scale, q.shape)
    return q.float() * scale.float()     # [out, 1] or [1]: broadcast


def t_rel_err(torch, a, b):
    a = a.double()
    b = b.double()
    n = float(b.norm())
    return float((a - b).norm()) / n if n > 0 else float((a - b).norm())


def quantize(torch, variant, w, tensor_scale_dtype, block_scale_dtype=None):
    """-> (fp8 weight, scale, scale key suffix)."""
    if variant == "fp8b":
        q, s = t_quant_block(torch, w, scale_dtype=block_scale_dtype)
        return q, s, "weight_scale_inv"
    if variant == "fp8c":
        q, s = t_quant_channel(torch, w, torch.bfloat16)
        return q, s, "weight_scale"
    if variant == "fp8t":
        q, s = t_quant_tensor(torch, w, tensor_scale_dtype)
        return q, s, "weight_scale"
    raise SystemExit("unknown variant %r (one of %s)" % (variant, ", ".join(VARIANTS)))


# ---------------------------------------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------------------------------------

def load_checkpoint(d):
    from safetensors.torch import load_file
    files = sorted(f for f in os.listdir(d) if f.endswith(".safetensors"))
    if not files:
        raise SystemExit("no *.safetensors in %s" % d)
    sd = {}
    for f in files:
        # clones: each tensor its own storage (no views into a mapped file reach save_file's shared-memory check)
        sd.update({k: v.clone() for k, v in load_file(os.path.join(d, f)).items()})
    return sd


def save_checkpoint(sd, d):
    from safetensors.torch import save_file
    save_file({k: v.contiguous() for k, v in sd.items()}, os.path.join(d, "model.safetensors"),
              metadata={"format": "pt"})


def st_header(path):
    """The safetensors header of a file: name -> {"dtype", "shape", ...} (and "__metadata__")."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n).decode("utf-8"))


def prepare_dir(base_dir, out_dir):
    """A fresh out_dir with every file of base_dir except the weights and config.json (tokenizer files,
    generation_config.json, chat template files ...), copied unchanged."""
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    copied = []
    for fn in sorted(os.listdir(base_dir)):
        src = os.path.join(base_dir, fn)
        if not os.path.isfile(src) or fn.endswith(".safetensors") or fn in SKIP_COPY:
            continue
        shutil.copy2(src, os.path.join(out_dir, fn))
        copied.append(fn)
    return copied


def write_config(cfg, out_dir, qcfg, dtype):
    c = json.loads(json.dumps(cfg))
    c.pop("quantization_config", None)
    if qcfg is not None:
        c["quantization_config"] = qcfg
    c["dtype"] = dtype
    if "torch_dtype" in c:
        c["torch_dtype"] = dtype
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(c, f, indent=2)
        f.write("\n")


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def check_written(path, expect):
    """Re-reads the safetensors header and checks dtype and shape of the tensors in expect (name -> (dtype, shape))."""
    h = st_header(path)
    bad = []
    for name, (dt, shape) in expect.items():
        e = h.get(name)
        if e is None or e.get("dtype") != dt or list(e.get("shape", [])) != list(shape):
            bad.append("%s: %s, expected %s %s" % (name, None if e is None else (e.get("dtype"), e.get("shape")),
                                                    dt, list(shape)))
    if bad:
        raise SystemExit("%s: unexpected tensors: %s" % (path, "; ".join(bad[:5])))
    return h


def st_dtype(torch, t):
    return {torch.float8_e4m3fn: "F8_E4M3", torch.float32: "F32", torch.bfloat16: "BF16",
            torch.float16: "F16"}[t.dtype]


# ---------------------------------------------------------------------------------------------------------
# making the variants
# ---------------------------------------------------------------------------------------------------------

def make_variant(torch, base, base_dir, cfg, sd, linear, variant, models, tensor_scale_dtype, block_scale_dtype):
    name = "%s-%s" % (base, variant)
    out_dir = os.path.join(models, name)
    deq_dir = os.path.join(models, name + "-deq")
    t0 = time.time()
    qsd, deq, rows, expect, quant = {}, {}, [], {}, {}
    lin = set(linear)
    for k, v in sd.items():
        if k in lin:
            continue
        qsd[k] = v                      # embeddings, norms, biases, lm_head: unchanged (bf16)
        deq[k] = v.float()
    for k in linear:
        w = sd[k]
        q, s, skey = quantize(torch, variant, w, tensor_scale_dtype, block_scale_dtype)
        prefix = k[:-len("weight")]
        qsd[k] = q
        qsd[prefix + skey] = s
        d = t_dequant(variant, q, s)
        deq[k] = d
        quant[k] = (q, s, prefix + skey)
        expect[k] = ("F8_E4M3", list(q.shape))
        expect[prefix + skey] = (st_dtype(torch, s), list(s.shape))
        sf = s.float()
        rows.append({"name": k, "shape": list(w.shape), "scale": prefix + skey, "scale_shape": list(s.shape),
                     "scale_dtype": st_dtype(torch, s), "rel_err": round(t_rel_err(torch, d, w.float()), 6),
                     "scale_min": float(sf.min()), "scale_max": float(sf.max()),
                     "fp8_absmax": float(q.float().abs().max()), "zero_scales_1": int((sf == 1.0).sum())
                     if variant == "fp8b" else None})
    moe = is_moe(cfg)
    qcfg = FP8B_QCFG if variant == "fp8b" else ct_qcfg("channel" if variant == "fp8c" else "tensor", moe)
    copied = prepare_dir(base_dir, out_dir)
    write_config(cfg, out_dir, qcfg, cfg.get("dtype", cfg.get("torch_dtype", "bfloat16")))
    save_checkpoint(qsd, out_dir)
    check_written(os.path.join(out_dir, "model.safetensors"), expect)
    prepare_dir(base_dir, deq_dir)
    write_config(cfg, deq_dir, None, "float32")
    save_checkpoint(deq, deq_dir)
    check_written(os.path.join(deq_dir, "model.safetensors"), {k: ("F32", list(sd[k].shape)) for k in linear})

    errs = sorted(r["rel_err"] for r in rows)
    med = errs[len(errs) // 2] if len(errs) % 2 else 0.5 * (errs[len(errs) // 2 - 1] + errs[len(errs) // 2])
    for r in rows:
        log("  %s %-44s %-12s scale %-10s %s  rel err %.5f  scales %.3g..%.3g  max|fp8| %g" % (
            name, r["name"], "x".join(map(str, r["shape"])), "x".join(map(str, r["scale_shape"])), r["scale_dtype"],
            r["rel_err"], r["scale_min"], r["scale_max"], r["fp8_absmax"]))
    report = {"variant": name, "base": base, "reference": name + "-deq",
              "scheme": {"fp8b": "block %dx%d, %s weight_scale_inv" % (BLOCK, BLOCK, rows[0]["scale_dtype"]),
                         "fp8c": "per channel, %s weight_scale [out, 1]" % rows[0]["scale_dtype"],
                         "fp8t": "per tensor, %s weight_scale [1]" % rows[0]["scale_dtype"]}[variant],
              "quantization_config": qcfg, "tensors": len(rows), "rel_err_max": errs[-1],
              "rel_err_median": round(med, 6), "rel_err_min": errs[0],
              "scale_min": min(r["scale_min"] for r in rows), "scale_max": max(r["scale_max"] for r in rows),
              "copied": copied, "per_tensor": rows}
    write_json(os.path.join(out_dir, "fp8-report.json"), report)
    log("FP8 %-16s %s: %d tensors, rel err vs bf16 max %.5f median %.5f; scales %.3g..%.3g; reference %s (%.1f s)" % (
        name, report["scheme"], len(rows), errs[-1], med, report["scale_min"], report["scale_max"], name + "-deq",
        time.time() - t0))
    return report, qsd, quant, deq


def make_badscale(torch, base, base_dir, cfg, qsd, quant, deq, models, predict):
    """-fp8b-badscale: -fp8b with the scales of BAD SCALES (module docstring); the fp8 weights untouched."""
    name = "%s-fp8b-badscale" % base
    out_dir = os.path.join(models, name)
    good_ref = "%s-fp8b-deq" % base
    nl = int(cfg.get("num_hidden_layers", 1))
    l1 = min(1, nl - 1)
    if is_moe(cfg):
        edits = moe_badscale_edits(cfg, quant)
    else:
        edits = [("model.layers.0.self_attn.q_proj.weight", "block (0, 0) x 2", lambda s: s[0:1, 0:1].mul_(2.0)),
                 ("model.layers.0.self_attn.o_proj.weight", "block row 0 (output rows 0..127) x 2",
                  lambda s: s[0:1, :].mul_(2.0)),
                 ("model.layers.%d.mlp.down_proj.weight" % l1, "block row 0 (output rows 0..127) = 0",
                  lambda s: s[0:1, :].zero_())]
    bad = dict(qsd)
    changes, replacements = [], {}
    for wname, what, fn in edits:
        if wname not in quant:
            raise SystemExit("%s: no %s to edit" % (name, wname))
        q, s, skey = quant[wname]
        s2 = s.clone()
        fn(s2)          # in the stored dtype: doubling and zeroing are exact in F32, BF16 and F16
        bad[skey] = s2
        d2 = t_dequant("fp8b", q, s2)
        replacements[wname] = d2
        ch = t_rel_err(torch, d2, deq[wname])
        changes.append({"tensor": skey, "edit": what, "weight_rel_change": round(ch, 5)})
        log("  %s %s: %s -> ||W_bad - W_good|| / ||W_good|| = %.4f" % (name, skey, what, ch))
    prepare_dir(base_dir, out_dir)
    write_config(cfg, out_dir, FP8B_QCFG, cfg.get("dtype", cfg.get("torch_dtype", "bfloat16")))
    save_checkpoint(bad, out_dir)
    rep = {"variant": name, "base": base, "control_of": "%s-fp8b" % base, "reference": good_ref,
           "expect": "compare against %s must FAIL" % good_ref, "changes": changes}
    if predict and is_moe(cfg):   # transformers 5 fuses a MoE layer's experts (3-D parameters): no per-expert swap
        rep["prediction"] = {"error": "not predicted for a MoE model (its experts are fused in transformers)"}
        log("  %s: no prediction (MoE: transformers keeps the experts fused, not under the checkpoint's names)" % name)
    elif predict:
        try:
            rep["prediction"] = predict_control(torch, os.path.join(models, good_ref), replacements)
            p = rep["prediction"]
            log("  %s predicted (transformers fp32, good vs bad dequantized weights, %d prompts): logits cos min %.5f "
                "mean %.5f, top-1 agreement %.2f%% -> %s" % (
                    name, p["prompts"], p["cos_min"], p["cos_mean"], p["top1_pct"],
                    "compare must FAIL" if p["cos_min"] < 0.999 or p["top1_pct"] < 98.0 else
                    "WARNING: within compare's thresholds, the control would not catch it"))
        except Exception as e:  # noqa: BLE001
            rep["prediction"] = {"error": "%s: %s" % (type(e).__name__, e)}
            log("  %s: no prediction (%s: %s)" % (name, type(e).__name__, e))
    write_json(os.path.join(out_dir, "fp8-report.json"), rep)
    log("FP8 %-16s control: %s; reference %s" % (
        name, "; ".join("%s %s (weights %.3f)" % (c["tensor"].replace("model.layers.", "L"), c["edit"],
                                                   c["weight_rel_change"]) for c in changes), good_ref))
    return rep


def is_moe(cfg):
    return bool(cfg.get("num_experts") or cfg.get("num_local_experts"))


def moe_badscale_edits(cfg, quant):
    """The control of a MoE model touches the experts' scales only (the attention and dense MLPs keep theirs), so only
    an engine that reads the FP8 experts' scales wrongly passes it: in the first MoE layer, every expert's down_proj
    block row 0 = 0 (its output rows 0..127 gone) and its up_proj block (0, 0) x 4."""
    nl = int(cfg.get("num_hidden_layers", 1))
    dense = set(cfg.get("mlp_only_layers") or [])
    layer = next((l for l in range(nl) if l not in dense), None)
    experts = int(cfg.get("num_experts") or cfg.get("num_local_experts"))
    edits = []
    for e in range(experts):
        p = "model.layers.%d.mlp.experts.%d." % (layer, e)
        edits.append((p + "down_proj.weight", "block row 0 (output rows 0..127) = 0", lambda s: s[0:1, :].zero_()))
        edits.append((p + "up_proj.weight", "block (0, 0) x 4", lambda s: s[0:1, 0:1].mul_(4.0)))
    missing = [w for w, _, _ in edits if w not in quant]
    if layer is None or missing:
        raise SystemExit("MoE control: no FP8 experts to edit (%s)" % (missing[:2] or "no MoE layer"))
    return edits


def predict_control(torch, deq_dir, replacements):
    """Logits of the good dequantized model vs the same with the bad dequantized weights, on reference.py's prompts."""
    import transformers
    from tokenizers import Tokenizer
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.backends.cuda.matmul.allow_tf32 = False
    model = transformers.AutoModelForCausalLM.from_pretrained(deq_dir, dtype=torch.float32).to(dev).eval()
    tok = Tokenizer.from_file(os.path.join(deq_dir, "tokenizer.json"))
    prompts = []
    for snip, n in zip(common.prompt_texts(len(common.PROMPT_LENGTHS)), common.PROMPT_LENGTHS):
        prompts.append(tok.encode(snip["text"], add_special_tokens=True).ids[:n])

    def run():
        outs = []
        with torch.inference_mode():
            for ids in prompts:
                outs.append(model(input_ids=torch.tensor([ids], dtype=torch.long, device=dev)).logits[0].double().cpu())
        return outs

    good = run()
    params = dict(model.named_parameters())
    for k, w in replacements.items():
        params[k].data.copy_(w.to(device=params[k].device, dtype=params[k].dtype))
    badl = run()
    cos, agree, total = [], 0, 0
    for g, b in zip(good, badl):
        c = (g * b).sum(dim=1) / (g.norm(dim=1) * b.norm(dim=1)).clamp_min(1e-300)
        cos.extend(float(x) for x in c)
        agree += int((g.argmax(dim=1) == b.argmax(dim=1)).sum())
        total += g.shape[0]
    return {"prompts": len(prompts), "positions": total, "cos_min": round(min(cos), 6),
            "cos_mean": round(sum(cos) / len(cos), 6), "top1_pct": round(100.0 * agree / max(1, total), 2)}


def run_make(args):
    import torch
    only = common.parse_only(args.only)
    variants = common.parse_only(args.variants) or list(VARIANTS)
    for v in variants:
        if v not in VARIANTS:
            raise SystemExit("unknown variant %r (one of %s)" % (v, ", ".join(VARIANTS)))
    badscale = set(common.parse_only(args.badscale) or [])
    dts = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
    tsd = dts[args.tensor_scale_dtype]
    bsd = dts[args.block_scale_dtype]
    bases = only or [n for n in common.MODEL_NAMES if os.path.isfile(os.path.join(args.models, n, "config.json"))]
    log("make_fp8: bases %s, variants %s, badscale %s; torch %s" % (bases, variants, sorted(badscale), torch.__version__))
    t_all = time.time()
    agg_path = os.path.join(args.models, "fp8-report.json")
    try:
        with open(agg_path) as f:
            agg = json.load(f)
    except (OSError, ValueError):
        agg = {}
    failed = 0
    for base in bases:
        base_dir = os.path.join(args.models, base)
        try:
            with open(os.path.join(base_dir, "config.json")) as f:
                cfg = json.load(f)
            if cfg.get("quantization_config"):
                raise SystemExit("%s is already quantized" % base_dir)
            sd = load_checkpoint(base_dir)
        except (OSError, ValueError, SystemExit) as e:
            log("make_fp8: %s skipped: %s" % (base, e))
            failed += 1
            continue
        linear = set(k for k in sd if LINEAR_RE.match(k) and sd[k].ndim == 2)
        if not linear:
            log("make_fp8: %s: no decoder Linear weights found" % base)
            failed += 1
            continue
        linear = sorted(linear, key=lambda k: (int(LINEAR_RE.match(k).group(1)), k))
        log("make_fp8: %s: %d tensors, %d Linear weights to quantize (%s)" % (
            base, len(sd), len(linear), sorted({str(sd[k].dtype) for k in linear})))
        for v in variants:
            rep, qsd, quant, deq = make_variant(torch, base, base_dir, cfg, sd, linear, v, args.models, tsd, bsd)
            agg[rep["variant"]] = {k: rep[k] for k in rep if k != "per_tensor"}
            if v == "fp8b" and base in badscale:
                crep = make_badscale(torch, base, base_dir, cfg, qsd, quant, deq, args.models, not args.no_predict)
                agg[crep["variant"]] = crep
            del qsd, quant, deq
    write_json(agg_path, agg)
    log("make_fp8: done in %.1f s (%s)" % (time.time() - t_all, agg_path))
    return 2 if failed else 0


# ---------------------------------------------------------------------------------------------------------
# the report table, the control's verdict
# ---------------------------------------------------------------------------------------------------------

def print_report(models, names):
    rc = 0
    for n in names:
        try:
            with open(os.path.join(models, n, "fp8-report.json")) as f:
                r = json.load(f)
        except (OSError, ValueError) as e:
            print("%-24s no fp8-report.json (%s)" % (n, e))
            rc = 1
            continue
        if "changes" in r:
            p = r.get("prediction") or {}
            pred = ("; predicted logits cos min %.4f top1 %.1f%%" % (p["cos_min"], p["top1_pct"])) if "cos_min" in p \
                else ""
            print("%-24s control of %s: %s%s" % (n, r.get("control_of"), ", ".join(
                "%s %s (weights %.3f)" % (c["tensor"].replace("model.layers.", "L").replace(".weight_scale_inv", ""),
                                          c["edit"], c["weight_rel_change"]) for c in r["changes"]), pred))
        else:
            print("%-24s %-38s %3d tensors  rel err vs bf16 max %.5f  median %.5f  scales %.2e..%.2e" % (
                n, r["scheme"], r["tensors"], r["rel_err_max"], r["rel_err_median"], r["scale_min"], r["scale_max"]))
    return rc


def control_verdict(path, run):
    """Exit 0 when compare FAILed the control run on its numbers (logits/ref or greedy/ref at tp1, computed on every
    prompt), with the tokenizer row passing; 1 otherwise."""
    try:
        with open(path) as f:
            res = json.load(f)
    except (OSError, ValueError) as e:
        print("control %s: FAIL (no compare result: %s)" % (run, e))
        return 1
    rows = [r for r in res.get("rows", []) if r.get("model") == run]
    if not rows:
        print("control %s: FAIL (no rows for it in %s)" % (run, path))
        return 1
    tok = [r for r in rows if r.get("check") == "tokenizer"]
    if tok and tok[0].get("status") != "PASS":
        print("control %s: FAIL (its tokenizer row failed: %s)" % (run, (tok[0].get("reason") or "")[:200]))
        return 1
    caught, passed, broken = [], [], []
    for r in rows:
        if r.get("run") != "tp1" or r.get("check") not in ("logits/ref", "greedy/ref"):
            continue
        m = r.get("metrics") or {}
        reason = r.get("reason") or ""
        if r["check"] == "logits/ref":
            computed = "cos_min" in m and "not compared" not in reason and "nothing compared" not in reason
            nums = "logits/ref cos_min %s top1 %s%%" % (m.get("cos_min"), m.get("top1_pct"))
        else:
            computed = "prompts" in m and not m.get("missing") and "prompt_ids" not in reason
            nums = "greedy/ref full %s/%s close %s fail %s" % (m.get("match"), m.get("prompts"), m.get("close"),
                                                                m.get("fail"))
        if not computed:
            broken.append("%s: %s" % (r["check"], reason[:160]))
        elif r.get("status") == "FAIL":
            caught.append(nums)
        else:
            passed.append(nums + " PASS")
    if caught:
        print("control %s tp1: PASS, compare FAILed it on the numbers as it must: %s" % (run, "; ".join(caught)))
        return 0
    if passed:
        print("control %s tp1: FAIL, the wrong scales went unnoticed: %s" % (run, "; ".join(passed + broken)))
    else:
        print("control %s tp1: FAIL, nothing usable was compared: %s" % (
            run, "; ".join(broken) or "; ".join("%s %s: %s" % (r.get("run"), r.get("check"), (r.get("reason") or "")[:120])
                                                for r in rows)))
    return 1


# ---------------------------------------------------------------------------------------------------------
# self-check
# ---------------------------------------------------------------------------------------------------------

def selfcheck():
    import numpy as np
    ok = True

    def check(cond, what):
        nonlocal ok
        print("  %s  %s" % ("ok  " if cond else "FAIL", what))
        ok = ok and bool(cond)

    # the fp8 emulation on known values
    cases = {448.0: 448.0, 500.0: 448.0, -1000.0: -448.0, 300.0: 288.0, 1.0625: 1.0, 1.1875: 1.25, 1.0: 1.0,
             2.0 ** -6: 2.0 ** -6, 2.0 ** -9: 2.0 ** -9, 2.0 ** -10: 0.0, 3 * 2.0 ** -11: 2.0 ** -9,
             0.0: 0.0, -0.3: -0.3125, 7 * 2.0 ** -9: 7 * 2.0 ** -9, 15 * 2.0 ** -10: 2.0 ** -6}
    got = np_fp8_round(np.array(list(cases), dtype=np.float64))
    check(all(float(g) == v for g, v in zip(got, cases.values())),
          "fp8 e4m3fn rounding on %d known values (max 448, subnormals 2^-9, ties to even)" % len(cases))
    check(float(np_bf16_round(np.array([1.00390625], dtype=np.float32))[0]) == 1.0 and
          float(np_bf16_round(np.array([1.01171875], dtype=np.float32))[0]) == 1.015625,
          "bf16 rounding (ties to even)")

    names = {"model.layers.3.mlp.experts.7.down_proj.weight": True, "model.layers.0.mlp.gate_proj.weight": True,
             "model.layers.1.self_attn.o_proj.weight": True, "model.layers.1.mlp.gate.weight": False,
             "model.layers.1.mlp.experts.0.gate_proj.weight_scale_inv": False, "lm_head.weight": False}
    check(all(bool(LINEAR_RE.match(n)) == v for n, v in names.items()),
          "the quantized names: attention, dense MLP and experts' projections, never the router or lm_head")

    rng = np.random.default_rng(0)
    w = (rng.standard_normal((300, 200)) * 0.02).astype(np.float32)
    w[5, 7] = 0.5                     # an outlier
    w[256:300, 128:200] = 0.0         # the bottom-right partial block all zeros
    w[290, :] = 0.0                   # a zero row
    w = np_bf16_round(w)              # the checkpoints are bf16

    qb, sb = np_quant_block(w)
    check(sb.shape == (3, 2) and qb.shape == w.shape, "block: scale_inv shape %s for 300x200 (3x2 with partial edge "
          "blocks), weight %s" % (sb.shape, qb.shape))
    check(sb[2, 1] == 1.0, "block: the all-zero partial block gets scale 1.0")
    amax_q = np.abs(qb.reshape(-1))
    check(all(np.abs(qb[i * 128:(i + 1) * 128, j * 128:(j + 1) * 128]).max() == 448.0
              for i in range(3) for j in range(2) if (i, j) != (2, 1)),
          "block: every non-zero block reaches |fp8| = 448 exactly (scale = amax/448)")
    db = qb * np_expand_block(sb, w.shape)
    e = rel_err(db, w)
    check(e < 0.07, "block: ||dequant(quant(w)) - w|| / ||w|| = %.4f < 0.07" % e)
    check(np.isfinite(amax_q).all() and amax_q.max() <= 448.0, "block: all fp8 values finite, within +-448")

    qc, sc = np_quant_channel(w)
    check(sc.shape == (300, 1) and sc[290, 0] == 1.0, "channel: scale shape %s, the zero row's scale 1.0" % (sc.shape,))
    check(np.array_equal(sc, np_bf16_round(sc)), "channel: scales are bf16 values")
    dc = qc * sc
    e = rel_err(dc, w)
    check(e < 0.07, "channel: relative norm error %.4f < 0.07" % e)
    check(np.abs(qc).max() <= 448.0, "channel: |fp8| <= 448 with the bf16-rounded scale")

    qt, st = np_quant_tensor(w)
    dt = qt * st
    e = rel_err(dt, w)
    check(st.shape == (1,) and e < 0.07, "tensor: scale shape %s, relative norm error %.4f < 0.07" % (st.shape, e))

    try:
        import torch
    except ImportError:
        print("  (torch not importable here: the torch code was not cross-checked)")
        torch = None
    if torch is not None:
        tw = torch.from_numpy(w.copy()).to(torch.bfloat16)
        for variant, (nq, ns) in (("fp8b", (qb, sb)), ("fp8c", (qc, sc)), ("fp8t", (qt, st))):
            q, s, skey = quantize(torch, variant, tw, torch.float32)
            mism = int((q.float().numpy().astype(np.float64) != nq).sum())
            smis = int((s.float().numpy().astype(np.float32) != ns.astype(np.float32)).sum())
            check(q.dtype == torch.float8_e4m3fn and list(s.shape) == list(ns.shape) and mism == 0 and smis == 0,
                  "torch %s (%s %s %s): fp8 values equal to the numpy emulation (%d differ), scales (%d differ)" % (
                      variant, skey, str(s.dtype).replace("torch.", ""), list(s.shape), mism, smis))
            d = t_dequant(variant, q, s).numpy()
            check(rel_err(d, w) < 0.07, "torch %s: dequant relative norm error %.4f" % (variant, rel_err(d, w)))
        try:
            import tempfile
            from safetensors.torch import save_file
            q, s, _ = quantize(torch, "fp8b", tw, torch.float32)
            qc_t, sc_t, _ = quantize(torch, "fp8c", tw, torch.float32)
            with tempfile.TemporaryDirectory() as td:
                p = os.path.join(td, "t.safetensors")
                save_file({"a.weight": q, "a.weight_scale_inv": s, "b.weight": qc_t, "b.weight_scale": sc_t}, p)
                h = st_header(p)
            check([h["a.weight"]["dtype"], h["a.weight_scale_inv"]["dtype"], h["b.weight_scale"]["dtype"],
                   h["a.weight_scale_inv"]["shape"], h["b.weight_scale"]["shape"]] ==
                  ["F8_E4M3", "F32", "BF16", [3, 2], [300, 1]],
                  "safetensors header: F8_E4M3 weight, F32 [3, 2] scale_inv, BF16 [300, 1] scale")
        except ImportError:
            print("  (safetensors not importable: the file header was not checked)")
    print("selfcheck: %s" % ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", help="MODELDIR: the base models' directories; the variants are written next to them")
    ap.add_argument("--only", default="", help="base models, e.g. 'llama128 qwen3' (with --print-report: variants)")
    ap.add_argument("--variants", default=" ".join(VARIANTS))
    ap.add_argument("--badscale", default="llama128", help="bases that also get <base>-fp8b-badscale ('' for none)")
    ap.add_argument("--tensor-scale-dtype", choices=("f32", "bf16", "f16"), default="f32",
                    help="-fp8t's weight_scale dtype")
    ap.add_argument("--block-scale-dtype", choices=("f32", "bf16", "f16"), default="f32",
                    help="-fp8b's weight_scale_inv dtype (F32 as DeepSeek-V3; Qwen3 FP8 dense checkpoints carry BF16, "
                         "Qwen3-4B-Instruct-2507-FP8 F16)")
    ap.add_argument("--no-predict", action="store_true", help="skip the transformers prediction of the control")
    ap.add_argument("--selfcheck", action="store_true")
    ap.add_argument("--print-report", metavar="MODELDIR")
    ap.add_argument("--control-verdict", metavar="COMPARE_JSON")
    ap.add_argument("--run", help="with --control-verdict: the control's run name")
    args = ap.parse_args()
    if args.selfcheck:
        sys.exit(selfcheck())
    if args.print_report:
        sys.exit(print_report(args.print_report, common.parse_only(args.only) or []))
    if args.control_verdict:
        if not args.run:
            ap.error("--control-verdict needs --run")
        sys.exit(control_verdict(args.control_verdict, args.run))
    if not args.models:
        ap.error("--models is required")
    sys.exit(run_make(args))


if __name__ == "__main__":
    main()
