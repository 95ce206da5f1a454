#!/usr/bin/env python3
"""Writes the tiny byte-level BPE fixture (tokenizer.json and its configs) next to this script.

Ids 0..255 are the 256 byte symbols in byte order, mapped to printable characters as GPT-2's
bytes_to_unicode does (so id == byte value); then one id per merge, in merge order; then the added
special tokens. Run it again after changing MERGES; the output is committed.
"""
import json
import os


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


MERGES = [
    ("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("Ġ", "a"), ("e", "r"),
    ("l", "l"), ("he", "ll"), ("hell", "o"), ("Ġ", "hello"), ("Ġ", "Ġ"), ("Ċ", "Ċ"),
    ("â", "Ĥ"),  # the first two bytes of the euro sign (E2 82 AC): "€" is two tokens
    ("Ġ", "w"), ("o", "r"), ("Ġw", "or"), ("l", "d"), ("Ġwor", "ld"),
]
SPECIAL = ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    b2u = bytes_to_unicode()
    vocab = {b2u[b]: b for b in range(256)}
    for a, b in MERGES:
        vocab[a + b] = len(vocab)
    special_ids = {t: len(vocab) + i for i, t in enumerate(SPECIAL)}
    bos = SPECIAL[0]
    tok = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": special_ids[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True} for t in SPECIAL],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": bos, "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {bos: {"id": bos, "ids": [special_ids[bos]], "tokens": [bos]}},
        },
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
            "vocab": vocab, "merges": [a + " " + b for a, b in MERGES],
        },
    }
    template = ("{{- bos_token }}{%- for message in messages %}"
                "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}"
                "{%- endfor %}{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}")
    config = {
        "add_bos_token": True,
        "bos_token": bos,
        "eos_token": {"content": "<|eot_id|>", "lstrip": False, "normalized": False, "rstrip": False, "single_word": False},
        "clean_up_tokenization_spaces": True,
        "model_max_length": 131072,
        "tokenizer_class": "PreTrainedTokenizerFast",
        "chat_template": template,
    }
    gen = {"bos_token_id": special_ids[bos], "eos_token_id": [special_ids["<|end_of_text|>"], special_ids["<|eot_id|>"]],
           "do_sample": True, "temperature": 0.6, "top_p": 0.9}
    for name, obj in [("tokenizer.json", tok), ("tokenizer_config.json", config), ("generation_config.json", gen)]:
        with open(os.path.join(here, name), "w", encoding="utf-8") as f:
            json.dump(obj, f, ensure_ascii=False, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
