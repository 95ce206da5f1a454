"""Expected chat-template renderings for io.tensorlane.runtime.chat (the Java/Jinjava renderer).

Renders every template under runtime-image/src/test/resources/chat/templates/ for a fixed set of conversations
and writes runtime-image/src/test/resources/chat/expected/<template>.json: a list of
  {"template", "case", "conversation", "add_generation_prompt", "kwargs", "bos_token", "eos_token", "now",
   "expected", "rendered_by"}.

The reference is transformers' apply_chat_template. With transformers importable (the GPU machine's venv) every case
is rendered twice and must agree: by apply_chat_template of a PreTrainedTokenizerFast carrying the template and the
special tokens (rendered_by "transformers X apply_chat_template"), and by the template compiled with transformers' own
_compile_jinja_template, rendered with the arguments apply_chat_template passes (messages, tools=None, documents=None, add_generation_prompt, the special tokens, the
chat_template_kwargs). Without it, a Jinja2 environment configured exactly as transformers configures it
(ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, its tojson/raise_exception/strftime_now).
strftime_now is pinned to NOW in both, so Llama 3.2's "Today Date" is deterministic.

Usage: python3 chat_fixtures.py [--out DIR]   (needs jinja2 >= 3.1; Debian: apt-get install python3-jinja2)
"""
import argparse
import datetime
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESOURCES = os.path.join(HERE, "..", "..", "src", "test", "resources", "chat")
NOW = datetime.datetime(2026, 11, 30, 9, 30, 0)

# name -> (bos_token, eos_token) as in the models' tokenizer_config.json (None: not set, so not passed)
TOKENS = {
    "llama-3-instruct": ("<|begin_of_text|>", "<|eot_id|>"),
    "llama-3.1-instruct": ("<|begin_of_text|>", "<|eot_id|>"),
    "llama-3.2-instruct": ("<|begin_of_text|>", "<|eot_id|>"),
    "qwen2.5-instruct": (None, "<|im_end|>"),
    "qwen3": (None, "<|im_end|>"),
}

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
CASES = [
    ("system_user", [SYSTEM, {"role": "user", "content": "What is the capital of France?"}], True, {}),
    ("system_user_no_prompt", [SYSTEM, {"role": "user", "content": "What is the capital of France?"}], False, {}),
    ("multi_turn", [SYSTEM,
                    {"role": "user", "content": "Hi!"},
                    {"role": "assistant", "content": "Hello! How can I help?"},
                    {"role": "user", "content": "Tell me a joke."}], True, {}),
    ("multi_turn_ends_with_assistant", [{"role": "user", "content": "2+2?"},
                                        {"role": "assistant", "content": "4"}], False, {}),
    ("no_system", [{"role": "user", "content": "Hello"},
                   {"role": "assistant", "content": "Hi there."},
                   {"role": "user", "content": "Bye"}], True, {}),
    ("unicode", [{"role": "system", "content": "Réponds en français. 日本語も可。"},
                 {"role": "user", "content": "Straße, naïve café, 😀 emoji, Ωmega, \u00a0nbsp and \"quotes\" \\ slash"}],
     True, {}),
    ("whitespace", [{"role": "system", "content": "  padded system \n\n"},
                    {"role": "user", "content": "\n\t  leading and trailing  \n"},
                    {"role": "assistant", "content": "  answer with spaces\n\n"},
                    {"role": "user", "content": "line one\n\nline two\n"}], True, {}),
    ("thinking_history", [{"role": "user", "content": "Think first: 3*7?"},
                          {"role": "assistant", "content": "<think>\nthree times seven\n</think>\n\n21"},
                          {"role": "user", "content": "And 3*8?"}], True, {}),
    ("thinking_last_assistant", [{"role": "user", "content": "Why?"},
                                 {"role": "assistant", "content": "<think>\n\nbecause\n\n</think>\n\n  Because."}],
     False, {}),
    ("enable_thinking_false", [{"role": "user", "content": "Quick answer: 1+1?"}], True, {"enable_thinking": False}),
    ("enable_thinking_true", [{"role": "user", "content": "Quick answer: 1+1?"}], True, {"enable_thinking": True}),
    ("date_string", [{"role": "user", "content": "What day is it?"}], True, {"date_string": "01 Jan 2025"}),
]


def fixed_strftime_now(fmt):
    return NOW.strftime(fmt)


def compiler():
    """(compile(template) -> jinja2.Template, rendered_by)."""
    try:
        import transformers
        from transformers.utils.chat_template_utils import _compile_jinja_template

        def compile_transformers(source):
            t = _compile_jinja_template(source)
            t.environment.globals["strftime_now"] = fixed_strftime_now  # pin the date
            return t
        return compile_transformers, "transformers " + transformers.__version__
    except ImportError:
        pass
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = fixed_strftime_now
    return env.from_string, "jinja2 %s (transformers environment)" % jinja2.__version__


def apply_chat_template_renderer():
    """render(source, conversation, add_generation_prompt, bos, eos, kwargs) through transformers' own
    PreTrainedTokenizerFast.apply_chat_template (tokenize=False), or None without transformers. A word-level tokenizer
    holding just the special tokens stands for the model's; the template is compiled once by transformers (its
    compile is cached per source), with strftime_now pinned before the first render."""
    try:
        import transformers
        from tokenizers import Tokenizer, models
        from transformers import PreTrainedTokenizerFast
        from transformers.utils.chat_template_utils import _compile_jinja_template
    except ImportError:
        return None

    def render(source, conversation, agp, bos, eos, kwargs):
        vocab = {"<unk>": 0}
        for t in (bos, eos):
            if t is not None:
                vocab.setdefault(t, len(vocab))
        tok = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="<unk>")),
                                      unk_token="<unk>", **{k: v for k, v in (("bos_token", bos), ("eos_token", eos))
                                                             if v is not None})
        tok.chat_template = source
        _compile_jinja_template(source).environment.globals["strftime_now"] = fixed_strftime_now
        return tok.apply_chat_template(conversation, tokenize=False, add_generation_prompt=agp, **kwargs)
    return render, "transformers %s apply_chat_template" % transformers.__version__


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(RESOURCES, "expected"))
    args = ap.parse_args()
    compile_template, rendered_by = compiler()
    applied = apply_chat_template_renderer()
    os.makedirs(args.out, exist_ok=True)
    for name, (bos, eos) in TOKENS.items():
        with open(os.path.join(RESOURCES, "templates", name + ".jinja"), encoding="utf-8") as f:
            source = f.read()
        template = compile_template(source)
        special = {k: v for k, v in (("bos_token", bos), ("eos_token", eos)) if v is not None}
        fixtures = []
        for case, conversation, agp, kwargs in CASES:
            expected = template.render(messages=conversation, tools=None, documents=None,
                                       add_generation_prompt=agp, **special, **kwargs)
            by = rendered_by
            if applied is not None:
                render, by = applied
                via_tokenizer = render(source, conversation, agp, bos, eos, kwargs)
                if via_tokenizer != expected:
                    print("%s/%s: apply_chat_template and the compiled template differ" % (name, case), file=sys.stderr)
                    return 1
            fixtures.append({"template": name, "case": case, "conversation": conversation,
                             "add_generation_prompt": agp, "kwargs": kwargs, "bos_token": bos, "eos_token": eos,
                             "now": NOW.isoformat(), "expected": expected, "rendered_by": by})
        path = os.path.join(args.out, name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(fixtures, f, ensure_ascii=False, indent=1)
            f.write("\n")
        print("%s: %d cases -> %s (%s)" % (name, len(fixtures), os.path.relpath(path), fixtures[-1]["rendered_by"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
