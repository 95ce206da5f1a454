#!/usr/bin/env bash
# FP8 against bf16 on the Llama-3.1-8B geometry, one GPU, one call (device tool, kind nvidia-h200, carry [".device"]):
#   1. make   oracle/bench_make_8b.py (random bf16 weights, /tmp/tl-8b), then oracle/bench_make_fp8.py: the same
#             weights block-scaled (fp8b, /tmp/tl-8b-fp8b) and per channel (fp8c, /tmp/tl-8b-fp8c)
#   2. bw     oracle/bench_transformers.py --parts bw: the device read bandwidth of this run (bw.json)
#   3. bench  bench-model --tp 1 on each label in the same run (bf16 first): decode per batch (CUDA graphs) and a
#             prefill of $PREFILL tokens; the ratios against the bf16 run and each batch-1 step against its roofline
#             (the bytes a decode step reads: every weight but the input embedding table, / the read bandwidth) are
#             printed last.
# A label is a checkpoint (bf16, or a variant of VARIANTS) with optional modifiers after '@' (none: the defaults): @warp =
# the one-warp-per-row GEMVs (TENSORLANE_GEMV_MMA=off), @mma = the tensor-core GEMVs (TENSORLANE_GEMV_MMA=on), @gemv8 = the FP8 GEMV
# up to 8 tokens (TENSORLANE_FP8_GEMM=9), @nofuse = the residual add, RMSNorm and silu as kernels of their own
# (TENSORLANE_FUSED_GEMV=off), @pdl = captured steps with programmatic dependent launch (TENSORLANE_PDL=on, the default
# since 2026-12-04), @nopdl = without it (TENSORLANE_PDL=off), @pipe / @px / @pxb = the fused one-token linears' inner-loop
# variants pipe, pipe-xf32, pipe-xf32-bits (TENSORLANE_FUSED_GEMV_VARIANT; FusedGemvVariant), @fc = the attention's key
# slices merged by their last block (TENSORLANE_ATTN_COMBINE=fused), @fr = a one-token step's rope and KV write folded
# into its attention kernel (TENSORLANE_ATTN_ROPE=fused), @l2 = each layer's o weight prefetched toward L2 before its
# attention (TENSORLANE_L2_PREFETCH=on), @l2m<N> = o and then the gate/up's first rows, N MiB a layer
# (TENSORLANE_L2_PREFETCH=N), @l2q = o and the next layer's qkv (o+qkv), @l2qm<N> = o, the next qkv, then gate/up rows,
# N MiB (o+qkv+mlp@N).
# Environment: BATCHES (1,8,32,128), CONTEXT (512), PREFILL (2048), WARMUP (300), ITERS (50), VARIANTS ("fp8b fp8c"),
# LABELS ("bf16 $VARIANTS"), BUDGET (570 s). Results under $OUT: fp8-bench.txt (the table), <label>.json
# (bench-model's), bw.json, fp8-bench.log.
set -uo pipefail
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
PY_LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
bash "$(dirname "$0")/device-unpack.sh" || exit 2
JAVA=".device/jre/bin/java -Xmx4g"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
PY="env LD_LIBRARY_PATH=$PY_LD_LIBRARY_PATH ${PY:-python3}"
ORACLE=runtime-image/scripts/oracle
CKPT=${CKPT:-/tmp/tl-8b}
BATCHES=${BATCHES:-1,8,32,128}
CONTEXT=${CONTEXT:-512}
PREFILL=${PREFILL:-2048}
WARMUP=${WARMUP:-300}
ITERS=${ITERS:-50}
VARIANTS=${VARIANTS:-fp8b fp8c}
LABELS=${LABELS:-bf16 $VARIANTS}
STEPS=${STEPS:-make bw bench}
LOG="$OUT/fp8-bench.log"
W=/tmp/tl-fp8-bench
mkdir -p "$W"
. "$(dirname "$0")/device-lib.sh"
: > "$LOG"
say "== date: $(date -u +%FT%TZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
if has_step make; then
  step "make bf16" "$W/make.log" timeout "$(tmo 240 200)" $PY $ORACLE/bench_make_8b.py --out "$CKPT"
  grep '^bench_make_8b' "$W/make.log" | tee -a "$LOG"
  for v in $VARIANTS; do
    step "make $v" "$W/make-$v.log" timeout "$(tmo 200 150)" $PY $ORACLE/bench_make_fp8.py --src "$CKPT" --out "$CKPT-$v" --variant "$v"
    grep '^bench_make_fp8' "$W/make-$v.log" | tee -a "$LOG"
  done
fi
if has_step bw; then
  step "bw" "$W/bw.log" timeout "$(tmo 60 20)" $PY $ORACLE/bench_transformers.py --model "$CKPT" --out "$OUT/bw.json" --parts bw
  grep '^bw' "$W/bw.log" | tee -a "$LOG"
fi
if has_step bench; then
  for label in $LABELS; do
    variant=${label%%@*}; mods=${label#"$variant"}
    dir=$CKPT; [ "$variant" != bf16 ] && dir=$CKPT-$variant
    [ -f "$dir/.complete" ] || { say "== $label: no checkpoint in $dir"; continue; }
    envs=()
    case "$mods" in *@warp*) envs+=(TENSORLANE_GEMV_MMA=off) ;; esac
    case "$mods" in *@mma*) envs+=(TENSORLANE_GEMV_MMA=on) ;; esac
    case "$mods" in *@gemv8*) envs+=(TENSORLANE_FP8_GEMM=9) ;; esac
    case "$mods" in *@nofuse*) envs+=(TENSORLANE_FUSED_GEMV=off) ;; esac
    case "$mods" in *@pdl*) envs+=(TENSORLANE_PDL=on) ;; esac
    case "$mods" in *@nopdl*) envs+=(TENSORLANE_PDL=off) ;; esac
    case "$mods" in *@pipe@*|*@pipe) envs+=(TENSORLANE_FUSED_GEMV_VARIANT=pipe) ;; esac
    case "$mods" in *@px@*|*@px) envs+=(TENSORLANE_FUSED_GEMV_VARIANT=pipe-xf32) ;; esac
    case "$mods" in *@pxb*) envs+=(TENSORLANE_FUSED_GEMV_VARIANT=pipe-xf32-bits) ;; esac
    case "$mods" in *@fc*) envs+=(TENSORLANE_ATTN_COMBINE=fused) ;; esac
    case "$mods" in *@fr*) envs+=(TENSORLANE_ATTN_ROPE=fused) ;; esac
    case "$mods" in *@l2@*|*@l2) envs+=(TENSORLANE_L2_PREFETCH=on) ;; esac
    if [[ "$mods" =~ @l2m([0-9]+) ]]; then envs+=(TENSORLANE_L2_PREFETCH=${BASH_REMATCH[1]}); fi
    case "$mods" in *@l2q@*|*@l2q) envs+=(TENSORLANE_L2_PREFETCH=o+qkv) ;; esac
    if [[ "$mods" =~ @l2qm([0-9]+) ]]; then envs+=(TENSORLANE_L2_PREFETCH=o+qkv+mlp@${BASH_REMATCH[1]}); fi
    t=$(tmo 150 30)
    step "bench-model $label ${envs[*]}" "$W/$label.log" env "${envs[@]}" timeout -s QUIT -k 5 "$t" $JAVA -jar "$APP" bench-model --model "$dir" --tp 1 \
      --batches "$BATCHES" --context "$CONTEXT" --prefill-tokens "$PREFILL" --warmup "$WARMUP" --iters "$ITERS" \
      --max-seconds $(( t - 15 )) --label "$label" --json "$OUT/$label.json"
    grep -vE '^engine: loaded [0-9.]+ GB$' "$W/$label.log" | grep -E '^(bench-model|load|engine: (weights|loading|one-token)| batch| +[0-9]+ |prefill)' | tee -a "$LOG"
  done
fi
{
  echo "================ fp8 bench: $(date -u +%FT%TZ) ================"
  $PY - "$OUT" $LABELS <<'PYEOF'
import json, os, sys
out, variants = sys.argv[1], [l for l in sys.argv[2:] if l != "bf16"]
def load(l):
    p = os.path.join(out, l + ".json")
    return json.load(open(p)) if os.path.exists(p) else None
base = load("bf16")
def decode(r):
    return {d["batch"]: d for d in (r or {}).get("decode", [])}
bd = decode(base)
print("decode tokens/s (wall, median step) and the ratio to bf16 of the same run; prefill tokens/s")
print("%-6s %s | prefill" % ("", "  ".join("b%-4d tok/s  x bf16" % b for b in sorted(bd))))
for v in ["bf16"] + variants:
    r = load(v)
    if r is None:
        print("%-6s no result" % v)
        continue
    d = decode(r)
    cells = []
    for b in sorted(bd):
        if b in d:
            cells.append("%10.1f %6.3f" % (d[b]["tokens_per_s"], d[b]["tokens_per_s"] / bd[b]["tokens_per_s"]))
        else:
            cells.append("%10s %6s" % ("-", "-"))
    pf = r.get("prefill", {}).get("tokens_per_s")
    bpf = (base or {}).get("prefill", {}).get("tokens_per_s")
    print("%-6s %s | %s" % (v, "  ".join(cells), "%.0f (%.3fx)" % (pf, pf / bpf) if pf and bpf else "-"))
bw = (load("bw") or {}).get("device_bw", {}).get("read_gbps")
print("batch-1 roofline: the bytes a decode step reads (weights per rank less the input embedding table) / device read "
      "bandwidth %s GB/s" % ("%.1f" % bw if bw else "-"))
for v in ["bf16"] + variants:
    r = load(v)
    d1 = decode(r).get(1)
    if not r or not d1 or not bw:
        continue
    cfg = r.get("config") or {}
    wb = (r.get("load") or {}).get("weight_bytes_per_rank")
    emb = 0 if cfg.get("tied_embeddings") else cfg.get("vocab", 0) * cfg.get("hidden", 0) * 2
    if not wb:
        continue
    roof = (wb - emb) / (bw * 1e9) * 1e3
    ms = d1["wall_ms"]["median"]
    print("%-12s b1 %.3f ms (gpu %.3f), reads %.3f GB, roofline %.3f ms: %.1f%% of it (%.1f%% counting the embedding "
          "table)" % (v, ms, d1["gpu_ms"]["median"], (wb - emb) / 1e9, roof, 100 * roof / ms,
                      100 * wb / (bw * 1e9) * 1e3 / ms))
PYEOF
} | tee "$OUT/fp8-bench.txt"
