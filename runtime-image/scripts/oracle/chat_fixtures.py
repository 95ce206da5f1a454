"""Expected chat-template renderings for io.tensorlane.runtime.chat (the Java/Jinjava renderer).

Renders every template under runtime-image/src/test/resources/chat/templates/ for a fixed set of conversations
and writes runtime-image/src/test/resources/chat/expected/<template>.json: a list of
  {"template", "case", "conversation", "add_generation_prompt", "kwargs", "tools", "documents", "bos_token",
   "eos_token", "now", "expected", "error", "rendered_by"}.
"expected" is the rendered prompt; where the template raises (raise_exception, e.g. Llama 3.1 refusing two tool calls
in one message) it is null and "error" holds the exception's message. The tool cases (TOOL_CASES) pass `tools` (OpenAI
function schemas, as vLLM hands them to the template) and conversations with assistant `tool_calls` (arguments already
parsed into objects, as vLLM's chat_utils does before rendering) and `tool` messages; they run on the templates of
TOOL_TEMPLATES only.

The reference is transformers' apply_chat_template. With transformers importable (the GPU machine's venv) every case
is rendered twice and must agree: by apply_chat_template of a PreTrainedTokenizerFast carrying the template and the
special tokens (rendered_by "transformers X apply_chat_template"), and by the template compiled with transformers' own
_compile_jinja_template, rendered with the arguments apply_chat_template passes (messages, tools, documents,
add_generation_prompt, the special tokens, the chat_template_kwargs); a case that raises must raise in both with the
same message. Without it, a Jinja2 environment configured exactly as transformers configures it
(ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, its tojson/raise_exception/strftime_now).
strftime_now is pinned to NOW in both, so Llama 3.2's "Today Date" is deterministic.

Usage: python3 chat_fixtures.py [--out DIR]   (needs jinja2 >= 3.1; Debian: apt-get install python3-jinja2)
"""
import argparse
import copy
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
    "mistral-7b-instruct-v0.3": ("<s>", "</s>"),
}
# the templates that render tools and tool calls (Llama 3's does not)
TOOL_TEMPLATES = ["llama-3.1-instruct", "llama-3.2-instruct", "qwen2.5-instruct", "qwen3", "mistral-7b-instruct-v0.3"]

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


WEATHER = {"type": "function", "function": {
    "name": "get_current_weather",
    "description": "Get the current weather in a given location",
    "parameters": {"type": "object",
                   "properties": {"location": {"type": "string", "description": "City and country, e.g. Paris, France"},
                                  "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                   "required": ["location"]}}}
CLOCK = {"type": "function", "function": {
    "name": "get_time", "description": "Current time in a time zone (IANA name, e.g. Europe/Zürich)",
    "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]}}}
TOOLS = [WEATHER, CLOCK]
USER_WEATHER = {"role": "user", "content": "What's the weather like in Paris today?"}


def call(call_id, name, arguments):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


CALL_PARIS = call("abc123DEF", "get_current_weather", {"location": "Paris, France", "unit": "celsius"})
CALL_ZURICH = call("xyz789GHI", "get_time", {"zone": "Europe/Zürich"})
ASSISTANT_CALL = {"role": "assistant", "content": "", "tool_calls": [CALL_PARIS]}
TOOL_RESULT = {"role": "tool", "tool_call_id": "abc123DEF", "name": "get_current_weather",
               "content": '{"temperature": 21, "condition": "sunny"}'}
ANSWER = {"role": "assistant", "content": "It is sunny and 21 °C in Paris."}

# (case, conversation, add_generation_prompt, kwargs, tools, documents)
TOOL_CASES = [
    ("tools_user", [USER_WEATHER], True, {}, TOOLS, None),
    ("tools_system_user", [SYSTEM, USER_WEATHER], True, {}, TOOLS, None),
    ("tools_empty_list", [SYSTEM, USER_WEATHER], True, {}, [], None),
    ("tools_multi_turn", [SYSTEM, {"role": "user", "content": "Hi!"}, {"role": "assistant", "content": "Hello!"},
                          USER_WEATHER], True, {}, TOOLS, None),
    ("tool_call_pending", [USER_WEATHER, ASSISTANT_CALL], False, {}, TOOLS, None),
    ("tool_result", [USER_WEATHER, ASSISTANT_CALL, TOOL_RESULT], True, {}, TOOLS, None),
    ("tool_result_answered", [SYSTEM, USER_WEATHER, ASSISTANT_CALL, TOOL_RESULT, ANSWER], False, {}, TOOLS, None),
    ("tool_history_without_tools", [USER_WEATHER, ASSISTANT_CALL, TOOL_RESULT, ANSWER,
                                    {"role": "user", "content": "Thanks!"}], True, {}, None, None),
    ("tool_call_with_content", [USER_WEATHER, {"role": "assistant", "content": "Let me check.",
                                               "tool_calls": [CALL_PARIS]}, TOOL_RESULT], True, {}, TOOLS, None),
    ("parallel_tool_calls", [{"role": "user", "content": "Weather in Paris and the time in Zürich?"},
                             {"role": "assistant", "content": "", "tool_calls": [CALL_PARIS, CALL_ZURICH]},
                             TOOL_RESULT,
                             {"role": "tool", "tool_call_id": "xyz789GHI", "name": "get_time", "content": "09:30"}],
     True, {}, TOOLS, None),
    ("tool_call_id_not_nine", [USER_WEATHER, {"role": "assistant", "content": "",
                                              "tool_calls": [call("call_1", "get_current_weather",
                                                                  {"location": "Paris"})]}], False, {}, TOOLS, None),
    ("tools_in_system_message", [SYSTEM, USER_WEATHER], True, {"tools_in_user_message": False}, TOOLS, None),
    ("tools_nested_arguments", [USER_WEATHER, {"role": "assistant", "content": "", "tool_calls": [
        call("nest12345", "get_current_weather",
             {"location": "São Paulo", "options": {"days": [1, 2], "detail": None, "metric": True, "ratio": 0.5}})]}],
     False, {}, TOOLS, None),
    ("tools_enable_thinking_false", [USER_WEATHER], True, {"enable_thinking": False}, TOOLS, None),
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
    """render(source, conversation, add_generation_prompt, bos, eos, kwargs, tools, documents) through transformers'
    own PreTrainedTokenizerFast.apply_chat_template (tokenize=False), or None without transformers. A word-level
    tokenizer holding just the special tokens stands for the model's; the template is compiled once by transformers
    (its compile is cached per source), with strftime_now pinned before the first render."""
    try:
        import transformers
        from tokenizers import Tokenizer, models
        from transformers import PreTrainedTokenizerFast
        from transformers.utils.chat_template_utils import _compile_jinja_template
    except ImportError:
        return None

    def render(source, conversation, agp, bos, eos, kwargs, tools, documents):
        vocab = {"<unk>": 0}
        for t in (bos, eos):
            if t is not None:
                vocab.setdefault(t, len(vocab))
        tok = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="<unk>")),
                                      unk_token="<unk>", **{k: v for k, v in (("bos_token", bos), ("eos_token", eos))
                                                             if v is not None})
        tok.chat_template = source
        _compile_jinja_template(source).environment.globals["strftime_now"] = fixed_strftime_now
        return tok.apply_chat_template(copy.deepcopy(conversation), tools=copy.deepcopy(tools),
                                       documents=copy.deepcopy(documents), tokenize=False, add_generation_prompt=agp,
                                       **kwargs)
    return render, "transformers %s apply_chat_template" % transformers.__version__


def outcome(fn):
    """(rendered, None) or (None, the message of the TemplateError the template raised)."""
    import jinja2
    try:
        return fn(), None
    except jinja2.exceptions.TemplateError as e:
        return None, str(e)


def cases_for(name):
    out = [(case, conv, agp, kwargs, None, None) for case, conv, agp, kwargs in CASES]
    if name in TOOL_TEMPLATES:
        out += TOOL_CASES
    return out


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
        for case, conversation, agp, kwargs, tools, documents in cases_for(name):
            expected, error = outcome(lambda: template.render(
                messages=copy.deepcopy(conversation), tools=copy.deepcopy(tools), documents=copy.deepcopy(documents),
                add_generation_prompt=agp, **special, **kwargs))
            by = rendered_by
            if applied is not None:
                render, by = applied
                via_tokenizer = outcome(lambda: render(source, conversation, agp, bos, eos, kwargs, tools, documents))
                if via_tokenizer != (expected, error):
                    print("%s/%s: apply_chat_template and the compiled template differ" % (name, case), file=sys.stderr)
                    return 1
            fixtures.append({"template": name, "case": case, "conversation": conversation,
                             "add_generation_prompt": agp, "kwargs": kwargs, "tools": tools, "documents": documents,
                             "bos_token": bos, "eos_token": eos, "now": NOW.isoformat(), "expected": expected,
                             "error": error, "rendered_by": by})
        path = os.path.join(args.out, name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(fixtures, f, ensure_ascii=False, indent=1)
            f.write("\n")
        raised = sum(1 for x in fixtures if x["error"] is not None)
        print("%s: %d cases (%d raise) -> %s (%s)" % (name, len(fixtures), raised, os.path.relpath(path),
                                                     fixtures[-1]["rendered_by"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
