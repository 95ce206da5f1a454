"""Shared helpers of the oracle scripts (make_models.py, reference.py, compare.py).

Runs on the GPU machine with the venv's python3; this module itself needs only the standard library (and
`tokenizers` for the functions that take a tokenizer). Everything is deterministic: the same Python
installation gives the same corpus, the same split, the same prompts and the same tokenizer inputs.
"""
import json
import os
import random
import sys
import sysconfig
import zlib

BOS = "<|begin_of_text|>"
EOS = "<|end_of_text|>"
PAD = "<|pad|>"
SPECIAL_TOKENS = [BOS, EOS, PAD]          # ids 0, 1, 2 in every tokenizer made here

MODEL_NAMES = ["llama", "mistral", "qwen2", "qwen3", "llama128", "llamaodd", "qwen3moe", "qwen3moe128", "mixtral"]   # make_models.SPECS, in this order
DEFAULT_MODELS = ["llama", "mistral", "qwen2", "qwen3"]   # what make_models.py makes without --models

# directories of the standard library whose files never enter the corpus (tests, third-party packages,
# codec tables full of escapes)
_EXCLUDED_DIRS = {"site-packages", "dist-packages", "test", "tests", "idle_test", "__pycache__", "encodings",
                  "__phello__", "_pyrepl"}

HELD_OUT_MODULUS = 10   # a file whose path's crc32 % 10 == 0 is held out (prompts, tokenizer inputs)


def log(*args):
    print(*args, flush=True)


def stdlib_files():
    """Sorted (relative posix path, absolute path) of the standard library's *.py files."""
    root = sysconfig.get_paths()["stdlib"]
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _EXCLUDED_DIRS and not d.startswith("."))
        for fn in filenames:
            if fn.endswith(".py"):
                full = os.path.join(dirpath, fn)
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                out.append((rel, full))
    out.sort()
    if not out:
        raise SystemExit("no *.py files under the stdlib path %r" % root)
    return out


def is_held_out(rel):
    return zlib.crc32(rel.encode("utf-8")) % HELD_OUT_MODULUS == 0


def read_text(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def corpus(held_out, max_bytes=8_000_000, seed=0):
    """List of (rel, text): the training files (held_out=False) or the held-out files (held_out=True).

    Training files are taken in a seeded shuffled order until max_bytes of text; held-out files all, sorted."""
    files = [(rel, full) for rel, full in stdlib_files() if is_held_out(rel) == held_out]
    if not held_out:
        random.Random(seed).shuffle(files)
    out, total = [], 0
    for rel, full in files:
        text = read_text(full)
        if not text or not text.strip():
            continue
        if "\x00" in text:
            continue
        out.append((rel, text))
        total += len(text.encode("utf-8"))
        if max_bytes and total >= max_bytes:
            break
    if not out:
        raise SystemExit("empty corpus (held_out=%s)" % held_out)
    return out


def write_jsonl(path, rows):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def read_jsonl(path, skip_bad=False):
    rows = []
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except ValueError:
                if not skip_bad:
                    raise
    return rows


def model_dirs(models_root, only=None):
    """The model names under models_root that have a config.json, in MODEL_NAMES order then others."""
    names = []
    if os.path.isdir(models_root):
        present = sorted(d for d in os.listdir(models_root)
                         if os.path.isfile(os.path.join(models_root, d, "config.json")))
        names = [n for n in MODEL_NAMES if n in present] + [n for n in present if n not in MODEL_NAMES]
    if only:
        names = [n for n in names if n in only]
    return names


def parse_only(value):
    """'llama qwen3' or 'llama,qwen3' -> ['llama', 'qwen3']; empty -> None."""
    if not value:
        return None
    items = [x for x in value.replace(",", " ").split() if x]
    return items or None


# ---------------------------------------------------------------------------------------------------------
# prompts and tokenizer inputs (both drawn from the held-out files)
# ---------------------------------------------------------------------------------------------------------

# 16 prompt lengths in tokens (BOS included); a few long ones
PROMPT_LENGTHS = [8, 10, 13, 16, 20, 24, 29, 33, 40, 47, 56, 64, 77, 96, 112, 120]


def prompt_texts(n=len(PROMPT_LENGTHS), seed=2024):
    """n deterministic snippets (each a few KB) from held-out files, starting at a line boundary."""
    files = corpus(held_out=True, max_bytes=0)
    files = [(rel, text) for rel, text in files if len(text) > 2000]
    rng = random.Random(seed)
    out = []
    for j in range(n):
        rel, text = files[rng.randrange(len(files))]
        lines = text.splitlines(keepends=True)
        # start at a non-blank line somewhere in the first 80% of the file
        for _ in range(50):
            start = rng.randrange(max(1, int(len(lines) * 0.8)))
            if lines[start].strip():
                break
        snippet = "".join(lines[start:])[:6000]
        if len(snippet) < 1500:
            snippet = text[:6000]
        out.append({"file": rel, "line": start + 1, "text": snippet})
    return out


def tokenizer_inputs(n_lines=200, n_chunks=60, seed=7):
    """~300 deterministic strings: stdlib lines and multi-line chunks, then unicode/whitespace/special cases."""
    files = corpus(held_out=True, max_bytes=0)
    rng = random.Random(seed)
    all_lines = []
    for rel, text in files:
        for line in text.split("\n"):
            if line.strip() and len(line) <= 300:
                all_lines.append(line)
    lines = [all_lines[i] for i in sorted(rng.sample(range(len(all_lines)), min(n_lines, len(all_lines))))]
    chunks = []
    for _ in range(n_chunks):
        rel, text = files[rng.randrange(len(files))]
        ls = text.split("\n")
        s = rng.randrange(len(ls))
        chunks.append("\n".join(ls[s:s + rng.randint(2, 8)]))
    special = [
        "", " ", "  ", "   ", "\t", "\n", "\n\n", "\n\n\n", "\r\n", " \t \n ", "\t\tdef f(x):\n\t\t\treturn x",
        "    indented = 4\n        deeper = 8\n", "trailing spaces   ", "   leading spaces",
        "hello world", " hello", "Hello  World  !", "HELLO", "don't won't it's", "a-b_c.d/e\\f",
        "1234567890 3.14159 -1e-10 0x1F 0b1010", "x" * 300, "ab" * 150, "== != <= >= -> ** // := ...",
        "emoji 😀🎉👍🏽", "👨‍👩‍👧‍👦 family", "🤖🦀🐍", "flags 🇫🇷🇯🇵",
        "中文测试，你好世界。", "日本語のテキスト、カタカナ", "한국어 텍스트", "混合 mixed 文字 text",
        "café naïve résumé Ångström", "e\u0301 combining acute", "a\u0308\u0304 stacked marks", "Z\u0335\u0321a\u0336lgo",
        "Ελληνικά κείμενο", "Русский текст", "العربية نص", "עברית", "हिन्दी पाठ", "ไทย",
        "nbsp\u00a0here", "zero\u200bwidth\u200djoiner", "\ufeffbom at start", "soft\u00adhyphen", "\u2028line sep",
        "ctrl \x01\x02\x7f chars", "nul a\x00b",
        BOS, EOS, PAD, "x" + BOS + "y", "text " + EOS + " more", BOS + BOS, BOS + " hello " + EOS,
        "<|begin_of_text", "begin_of_text|>", "<|unknown|>", "<|", "|>", "<|pad|><|pad|>pad",
        "print(\"<|end_of_text|>\")",
    ]
    return lines + chunks + special
