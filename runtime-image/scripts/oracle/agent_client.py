#!/usr/bin/env python3
"""What agent and app clients send, through the official `openai` Python client (issue #30; GPU machine, or any serve).

Runs with the portable Python 3.11 of ../shared/tools/openai-client-bundle.sh (openai 2.54, pydantic); needs neither
torch nor transformers. The server at URL serves MODEL with a tool-capable chat template of the model's family and the
tool-call parser chosen from it (hermes, llama3_json, mistral). Checks, one line each ("agent <check>: PASS|FAIL note"):
  tools-<mode>[-stream]  tool_choice required / a named function (constrained decoding: every answer a parseable call
                     of an offered function, finish_reason tool_calls, arguments valid against the function's schema)
                     and auto (200; any call it makes valid); streamed through client.chat.completions.stream(...) and
                     get_final_completion() (the client's own accumulation of delta.tool_calls; parsed_arguments)
                     (one call an answer, parallel_tool_calls false: a forced call is bounded by its schema)
  tools-parallel     tool_choice required with parallel calls allowed: every answer that finishes holds valid calls
                     (finish_reason tool_calls), and so do the complete calls of answers cut by max_tokens; a small
                     trained model seldom ends a run of calls by itself, so a second set of answers has logit_bias +100
                     on EOS (--eos-id): the grammar allows EOS only where the calls are whole, so each of those must
                     end at the first such place: after one call (hermes, llama3_json), or after the JSON array of
                     calls closes (mistral: the model may put several in it)
  tools-roundtrip    the assistant's call and a role "tool" result sent back through the template: 200
  schema-<name>      response_format json_schema (strict), --requests sampled requests at temperature 1 over a few
                     bounded schemas: every answer finishes (stop), parses and validates (jsonschema when installed,
                     and the validator below)
  json-object        response_format json_object at temperature 1: every finished answer parses to an object; at
                     least half finish (the grammar nests freely and a small model may ramble inside; the first GPU
                     run, 2026-12-04, saw 8, 13 and 1 of 60 cut at 1,000 tokens, over the fifth this first allowed)
  parse              client.chat.completions.parse(response_format=<pydantic model>) and .stream(response_format=...):
                     message.parsed is an instance of the model
  penalties          greedy completions with EOS held back (min_tokens): frequency/presence/repetition penalties
                     repeat less than plain greedy, a negative frequency penalty more; logit_bias -100 bans the first
                     token; +100 on "x" forces it; a bias just above the top-2 logprob gap flips the first token to the
                     second, just below it does not (the bias adds to the raw logit)
  echo-*             echo with logprobs (vLLM's shape): max_tokens 0 scores the prompt (text = prompt, first token null
                     logprob and null top_logprobs, finish length, 0 completion tokens), echo + generation, streamed
                     echo = the same text and logprobs, and the decode steps' logprobs of generated tokens equal to
                     the prompt logprobs of the same text scored by echo (within 0.05)
Writes --out (JSON: every check and the echo's ids and prompt logprobs, for oracle/echo_check.py against
transformers). Exit 1 when a check fails.

usage: agent_client.py URL MODEL --out FILE [--requests 300] [--parallel 32] [--no-parallel-calls] [--eos-id ID]
       [--tool-parser P] [--only LIST]
"""
import argparse
import concurrent.futures as cf
import json
import math
import os
import sys
import urllib.request

import openai

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_cases import (ASK, GAP_PROMPTS, PROMPTS, SCHEMAS, TOOL_PARAMS, TOOLS, Owner, invalid,  # noqa: E402
                         jsonschema)


class Checks:
    def __init__(self):
        self.rows = []

    def __call__(self, name, ok, note=""):
        self.rows.append({"check": name, "pass": bool(ok), "note": note})
        print("agent %-22s %s  %s" % (name + ":", "PASS" if ok else "FAIL", note), flush=True)
        return ok

    def guard(self, name, f):
        """Runs check f; an exception is that check's FAIL (the others still run)."""
        try:
            f()
        except Exception as e:  # noqa: BLE001 - any failure of the client or the server is a FAIL of this check
            self(name, False, "%s: %s" % (type(e).__name__, str(e)[:300]))


def post(root, path, body):
    req = urllib.request.Request(root + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)


def call_errors(calls, only=None, strict=True):
    """Why these tool calls are not valid calls of the offered functions (None: all valid). Not strict (tool_choice
    auto, nothing enforced): only the shape, a named call whose arguments parse to a JSON object."""
    if not calls:
        return "no tool calls"
    for c in calls:
        if not strict:
            try:
                ok = c.type == "function" and c.id and isinstance(c.function.name, str) and \
                    isinstance(json.loads(c.function.arguments), dict)
            except ValueError:
                ok = False
            if not ok:
                return "a malformed call %r" % (c,)
            continue
        if c.type != "function" or c.function.name not in TOOL_PARAMS:
            return "a call of %r" % c.function.name
        if only and c.function.name != only:
            return "called %s, not the named %s" % (c.function.name, only)
        if not c.id:
            return "a call without an id"
        try:
            args = json.loads(c.function.arguments)
        except ValueError as e:
            return "arguments %r do not parse: %s" % (c.function.arguments, e)
        why = invalid(args, TOOL_PARAMS[c.function.name])
        if why:
            return "arguments %r: %s" % (c.function.arguments, why)
    return None


# ----------------------------------------------------------------------------------------------------------------
# the checks
# ----------------------------------------------------------------------------------------------------------------

def stream_final(client, kw):
    """client.chat.completions.stream(**kw): the event types seen and get_final_completion() (None when the helper
    refused an answer cut by max_tokens: LengthFinishReasonError)."""
    try:
        with client.chat.completions.stream(**kw) as s:
            kinds = {e.type for e in s}
            return kinds, s.get_final_completion()
    except openai.LengthFinishReasonError:
        return set(), None


def tools(client, model, check, parallel, eos_id, fmt, n=4):
    modes = [("required", "required", None), ("named-add", {"type": "function", "function": {"name": "add"}}, "add"),
             ("named-weather", {"type": "function", "function": {"name": "get_weather"}}, "get_weather"),
             ("auto", "auto", None)]
    first_call = None
    for name, choice, only in modes:
        for stream in (False, True):
            label = "tools-" + name + ("-stream" if stream else "")
            bad, calls, texts = [], 0, 0
            for i in range(n):
                # one call an answer: its length is bounded by the schemas, so max_tokens never cuts a forced call
                kw = dict(model=model, messages=ASK, tools=TOOLS, tool_choice=choice, max_tokens=300,
                          temperature=0.8, seed=100 + i, parallel_tool_calls=False)
                if stream:
                    kinds, r = stream_final(client, kw)
                    if r is None:  # auto may answer in text until max_tokens; a forced call never is cut
                        if choice == "auto":
                            texts += 1
                        else:
                            bad.append("cut by max_tokens")
                        continue
                    c = r.choices[0]
                    tcs = c.message.tool_calls or []
                    if tcs and "tool_calls.function.arguments.done" not in kinds:
                        bad.append("no arguments.done event")
                    for t in tcs if choice != "auto" else []:  # auto: a call of an unknown name has none
                        if t.function.parsed_arguments is None or \
                                t.function.parsed_arguments != json.loads(t.function.arguments):
                            bad.append("parsed_arguments %r" % (t.function.parsed_arguments,))
                else:
                    r = client.chat.completions.create(**kw)
                    c = r.choices[0]
                    tcs = c.message.tool_calls or []
                if choice == "auto":
                    if tcs:
                        calls += 1
                        why = call_errors(tcs, strict=False)
                        if why or c.finish_reason != "tool_calls":
                            bad.append(why or "finish_reason %s" % c.finish_reason)
                    else:
                        texts += 1
                        if c.finish_reason not in ("stop", "length") or not isinstance(c.message.content, str):
                            bad.append("finish_reason %s, content %r" % (c.finish_reason, c.message.content))
                    continue
                why = call_errors(tcs, only)
                if why or c.finish_reason != "tool_calls":
                    bad.append(why or "finish_reason %s" % c.finish_reason)
                else:
                    calls += 1
                    if first_call is None and not stream:
                        first_call = tcs[0]
            note = "%d/%d answers called tools" % (calls, n) + (", %d answered in text" % texts if texts else "")
            check(label, not bad, note + ("; " + "; ".join(bad[:3]) if bad else ""))
    if parallel:  # several calls allowed: every answer that finished holds only valid calls
        bad, done, cut, cut_calls, most = [], 0, 0, 0, 0
        for i in range(n):
            r = client.chat.completions.create(model=model, messages=ASK, tools=TOOLS, tool_choice="required",
                                               max_tokens=600, temperature=0.8, seed=200 + i)
            c = r.choices[0]
            tcs = c.message.tool_calls or []
            most = max(most, len(tcs))
            if c.finish_reason == "length":  # the complete calls before the cut are parsed (hermes) and valid
                cut += 1
                cut_calls += len(tcs)
                if tcs and call_errors(tcs):
                    bad.append("cut answer: " + call_errors(tcs))
                continue
            done += 1
            why = call_errors(tcs)
            if why or c.finish_reason != "tool_calls":
                bad.append(why or "finish_reason %s" % c.finish_reason)
        ended = 0
        if eos_id is not None:  # EOS at +100 wherever the grammar allows it: where the calls first are whole
            for i in range(n):
                r = client.chat.completions.create(model=model, messages=ASK, tools=TOOLS, tool_choice="required",
                                                   max_tokens=600, temperature=0.8, seed=300 + i,
                                                   logit_bias={str(eos_id): 100})
                c = r.choices[0]
                why = call_errors(c.message.tool_calls)
                one = fmt != "mistral"  # mistral's array of calls closes where the model closes it
                if why or c.finish_reason != "tool_calls" or (one and len(c.message.tool_calls) != 1):
                    bad.append("EOS-biased answer: %s" % (why or "finish_reason %s, %d calls" % (
                        c.finish_reason, len(c.message.tool_calls or []))))
                else:
                    ended += 1
        check("tools-parallel", not bad and done + ended > 0,
              "%d/%d answers finished (%d cut by max_tokens, holding %d whole calls), most calls in one answer %d; "
              "EOS-biased: %d/%d ended where the calls first were whole; calls %s" % (
                  done, n, cut, cut_calls, most, ended, n if eos_id is not None else 0,
                  "; ".join(bad[:2]) if bad else "valid"))
    if first_call is None:
        check("tools-roundtrip", False, "no call to send back")
        return
    msgs = ASK + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": first_call.id, "type": "function",
             "function": {"name": first_call.function.name, "arguments": first_call.function.arguments}}]},
        {"role": "tool", "tool_call_id": first_call.id, "content": json.dumps({"result": 5})}]
    r = client.chat.completions.create(model=model, messages=msgs, tools=TOOLS, max_tokens=24, temperature=0)
    check("tools-roundtrip", isinstance(r.choices[0].message.content, (str, type(None))),
          "%s back through the template, answer finish_reason %s" % (first_call.function.name,
                                                                      r.choices[0].finish_reason))


def structured(client, model, check, total, par):
    names = list(SCHEMAS)
    per = max(1, total // len(names))

    def one(name, i):
        r = client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "Answer in JSON (%s)." % name}], temperature=1.0,
            seed=i, max_tokens=800,
            response_format={"type": "json_schema", "json_schema": {"name": name, "schema": SCHEMAS[name],
                                                                    "strict": True}})
        c = r.choices[0]
        if c.finish_reason != "stop":
            return "finish_reason %s after %d tokens: %r" % (c.finish_reason, r.usage.completion_tokens,
                                                              c.message.content[-80:])
        try:
            v = json.loads(c.message.content)
        except ValueError as e:
            return "does not parse (%s): %r" % (e, c.message.content)
        why = invalid(v, SCHEMAS[name])
        return None if why is None else "%r: %s" % (c.message.content, why)

    with cf.ThreadPoolExecutor(par) as ex:
        futs = {name: [ex.submit(one, name, i) for i in range(per)] for name in names}
        for name in names:
            res = []
            for f in futs[name]:
                try:
                    res.append(f.result())
                except Exception as e:  # noqa: BLE001
                    res.append("%s: %s" % (type(e).__name__, e))
            bad = [x for x in res if x]
            check("schema-" + name, not bad, "%d/%d valid%s" % (len(res) - len(bad), len(res),
                                                                 "; " + "; ".join(bad[:2]) if bad else ""))

    def obj(i):
        r = client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "A JSON object, please."}], temperature=1.0, seed=i,
            max_tokens=1000, response_format={"type": "json_object"})
        c = r.choices[0]
        if c.finish_reason == "length":
            return "length"
        try:
            v = json.loads(c.message.content)
        except ValueError as e:
            return "does not parse (%s): %r" % (e, c.message.content)
        return None if isinstance(v, dict) else "not an object: %r" % c.message.content

    n = max(20, total // 5)
    with cf.ThreadPoolExecutor(par) as ex:
        res = list(ex.map(obj, range(n)))
    cut = res.count("length")
    bad = [x for x in res if x and x != "length"]
    check("json-object", not bad and cut * 2 <= n,
          "%d/%d finished and parse to objects, %d cut by max_tokens%s" % (n - cut - len(bad), n, cut,
                                                                           "; " + "; ".join(bad[:2]) if bad else ""))


def parse_helpers(client, model, check, n=12):
    ok = 0
    why = []
    for i in range(n):
        r = client.chat.completions.parse(model=model, messages=[{"role": "user", "content": "Owner and pets?"}],
                                          response_format=Owner, temperature=1.0, seed=i, max_tokens=600)
        p = r.choices[0].message.parsed
        if isinstance(p, Owner):
            ok += 1
        else:
            why.append(repr(r.choices[0].message.content)[:100])
    _, final = stream_final(client, dict(model=model, messages=[{"role": "user", "content": "Owner?"}],
                                         response_format=Owner, temperature=1.0, seed=99, max_tokens=600))
    streamed = None if final is None else final.choices[0].message.parsed
    check("parse", ok == n and isinstance(streamed, Owner),
          "%d/%d parse() answers are Owner instances, stream(): %s%s" % (
              ok, n, type(streamed).__name__, "; " + "; ".join(why[:2]) if why else ""))


def single_id(root, text):
    """The id of the one token whose text is `text` (None unless it re-encodes to exactly one such token)."""
    t = post(root, "/tokenize", {"prompt": text, "add_special_tokens": False})["tokens"]
    if len(t) != 1:
        return None
    return t[0] if post(root, "/detokenize", {"tokens": t})["prompt"] == text else None


def penalties(client, model, root, check, gap_min, n=32):
    def greedy(prompt, **kw):
        extra = {"min_tokens": n}
        extra.update(kw.pop("extra_body", {}))
        r = client.completions.create(model=model, prompt=prompt, max_tokens=n, temperature=0, logprobs=1,
                                      extra_body=extra, **kw)
        return r.choices[0].logprobs.tokens

    def repeats(ts):
        return len(ts) - len(set(ts))

    plain = [greedy(p) for p in PROMPTS]
    base = sum(repeats(t) for t in plain)
    for name, kw, fewer in [("frequency", dict(frequency_penalty=1.5), True),
                            ("presence", dict(presence_penalty=1.5), True),
                            ("repetition", dict(extra_body={"repetition_penalty": 1.5}), True),
                            ("negative-frequency", dict(frequency_penalty=-1.5), False)]:
        got = [greedy(p, **kw) for p in PROMPTS]
        r = sum(repeats(t) for t in got)
        changed = sum(a != b for a, b in zip(plain, got))
        ok = changed > 0 and (r < base if fewer else r > base or base == len(PROMPTS) * (n - 1))
        check("penalty-" + name, ok, "%d repeated tokens over %d prompts (plain greedy %d); %d answers changed" % (
            r, len(PROMPTS), base, changed))
    # logit_bias: ban the first greedy token of each prompt
    bad = []
    for p, ts in zip(PROMPTS, plain):
        tid = single_id(root, ts[0])
        if tid is None:
            continue
        if greedy(p, logit_bias={str(tid): -100})[0] == ts[0]:
            bad.append(p)
    check("bias-ban", not bad, "first greedy token banned: it came back for %d prompts" % len(bad))
    x = single_id(root, "x")
    got = greedy(PROMPTS[0], logit_bias={str(x): 100})[:8] if x is not None else None
    check("bias-force", got == ["x"] * 8, "8 tokens %r" % (got,))
    # the bias adds to the raw logit: just above the top-2 gap flips the first token, just below does not
    flips, tried, notes = 0, 0, []
    for p in PROMPTS + GAP_PROMPTS:
        r = client.completions.create(model=model, prompt=p, max_tokens=1, temperature=0, logprobs=5)
        lp = r.choices[0].logprobs
        first, alts = lp.tokens[0], sorted(lp.top_logprobs[0].items(), key=lambda kv: -kv[1])
        second = next(((t, v) for t, v in alts if t != first), None)
        if second is None:
            continue
        gap = lp.token_logprobs[0] - second[1]
        sid = single_id(root, second[0])
        # bf16 logits are good to a few hundredths: leave them a margin; a byte inside a character has no own text
        if sid is None or gap < gap_min or "\ufffd" in first + second[0]:
            continue
        tried += 1
        d = min(0.5, gap / 2)

        def first_token(bias):
            return client.completions.create(model=model, prompt=p, max_tokens=1, temperature=0, logprobs=1,
                                             logit_bias={str(sid): bias}).choices[0].logprobs.tokens[0]
        up, down = first_token(gap + d), first_token(gap - d)
        if up == second[0] and down == first:
            flips += 1
        else:
            notes.append("%r: gap %.3f, bias gap+%.2f gave %r (want %r), gap-%.2f gave %r (want %r)" % (
                p, gap, d, up, second[0], d, down, first))
    check("bias-gap", tried > 0 and flips == tried, "%d/%d prompts flip exactly at the gap%s" % (
        flips, tried, "; " + "; ".join(notes[:2]) if notes else ""))


ECHO_PROMPT = "def main():\n    values = [1, 2, 3]\n    return sum(values)\n"


def echo(client, model, root, check, report, prompt=ECHO_PROMPT):
    ids = post(root, "/tokenize", {"prompt": prompt})["tokens"]
    r = client.completions.create(model=model, prompt=prompt, echo=True, logprobs=3, max_tokens=0)
    c = r.choices[0]
    lp = c.logprobs
    off = lp.text_offset
    problems = []
    if c.text != prompt:
        problems.append("text %r" % c.text)
    if len(lp.tokens) != len(ids) or r.usage.prompt_tokens != len(ids):
        problems.append("%d tokens, %d prompt tokens, /tokenize %d" % (len(lp.tokens), r.usage.prompt_tokens,
                                                                        len(ids)))
    if lp.token_logprobs[0] is not None or lp.top_logprobs[0] is not None:
        problems.append("first token scored: %r %r" % (lp.token_logprobs[0], lp.top_logprobs[0]))
    if any(v is None or not math.isfinite(v) or v > 1e-6 for v in lp.token_logprobs[1:]):
        problems.append("a prompt logprob missing, not finite or > 0")
    if any(not t or lp.tokens[i] not in t or len(t) > 4 for i, t in enumerate(lp.top_logprobs[1:], 1)):
        problems.append("top_logprobs without the token or with more than 3 + 1 entries")
    if off[0] != 0 or any(b < a for a, b in zip(off, off[1:])) or off[-1] > len(prompt):
        problems.append("text_offset %r" % off[:8])
    if c.finish_reason != "length" or r.usage.completion_tokens != 0:
        problems.append("finish_reason %s, %d completion tokens" % (c.finish_reason, r.usage.completion_tokens))
    check("echo-score", not problems, "%d prompt tokens scored; %s" % (len(ids), "; ".join(problems) or "vLLM's shape"))
    report["echo"] = {"ids": ids, "token_logprobs": lp.token_logprobs, "tokens": lp.tokens}

    # ignore_eos, not min_tokens: min_tokens bans EOS in the logits, and logprobs are the processed logits' (README)
    g = client.completions.create(model=model, prompt=prompt, echo=True, logprobs=2, max_tokens=8, temperature=0,
                                  extra_body={"ignore_eos": True})
    gc = g.choices[0]
    n = len(ids)
    ok = (gc.text.startswith(prompt) and len(gc.logprobs.tokens) == n + 8 and gc.logprobs.token_logprobs[0] is None
          and all(v is not None for v in gc.logprobs.token_logprobs[1:])
          and max(abs(a - b) for a, b in zip(gc.logprobs.token_logprobs[1:n], lp.token_logprobs[1:])) < 1e-3)
    check("echo-generate", ok, "prompt + 8 tokens %r; prompt logprobs as when scoring alone" % gc.text[len(prompt):])

    text, toks, lps, first = "", [], [], None
    for ch in client.completions.create(model=model, prompt=prompt, echo=True, logprobs=2, max_tokens=8,
                                        temperature=0, stream=True, extra_body={"ignore_eos": True}):
        if not ch.choices:
            continue
        x = ch.choices[0]
        first = x.text if first is None else first
        text += x.text
        if x.logprobs:
            toks += x.logprobs.tokens
            lps += x.logprobs.token_logprobs
    check("echo-stream", first == prompt and text == gc.text and toks == gc.logprobs.tokens
          and all((a is None and b is None) or abs(a - b) < 1e-3 for a, b in zip(lps, gc.logprobs.token_logprobs)),
          "first chunk is the prompt: %s; text and logprobs as unstreamed: %s" % (first == prompt, text == gc.text))

    # the logprobs the decode steps gave the generated tokens = the prompt logprobs of the same ids scored by echo:
    # the prompt's ids and each generated token's id (its text re-encoded alone; up to the first that does not
    # round-trip), sent as ids so that nothing merges across the boundary
    gen_ids = []
    for t in gc.logprobs.tokens[n:]:
        tid = single_id(root, t) if "\ufffd" not in t else None
        if tid is None:
            break
        gen_ids.append(tid)
    b = client.completions.create(model=model, prompt=ids + gen_ids, echo=True, logprobs=1, max_tokens=0)
    bl = b.choices[0].logprobs
    k = len(gen_ids)
    same_tokens = bl.tokens[n:n + k] == gc.logprobs.tokens[n:n + k]
    diffs = [abs(gc.logprobs.token_logprobs[n + i] - bl.token_logprobs[n + i]) for i in range(k)]
    check("echo-vs-generate", same_tokens and len(diffs) >= 2 and max(diffs) < 0.05,
          "%d generated tokens re-scored as a prompt (ids): max |decode logprob - prompt logprob| %.4f%s" % (
              len(diffs), max(diffs) if diffs else float("nan"), "" if same_tokens else "; the tokens differ"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("model")
    ap.add_argument("--out", required=True)
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--parallel", type=int, default=32)
    ap.add_argument("--no-parallel-calls", action="store_true", help="parallel_tool_calls false (Llama 3.1's template)")
    ap.add_argument("--eos-id", type=int, help="the checkpoint's EOS id (tools-parallel's biased answers)")
    ap.add_argument("--tool-parser", default="hermes", choices=("hermes", "llama3_json", "mistral"),
                    help="the server's tool-call format (tools-parallel: where EOS may first come)")
    ap.add_argument("--only", default="tools,structured,parse,penalties,echo")
    ap.add_argument("--gap-min", type=float, default=0.2, help="smallest top-2 logprob gap the bias-gap check uses")
    a = ap.parse_args()
    root = a.url.rstrip("/")
    client = openai.OpenAI(base_url=root + "/v1", api_key="none", max_retries=3, timeout=180)
    check = Checks()
    report = {"openai": openai.__version__, "jsonschema": jsonschema is not None}
    only = a.only.split(",")
    if "tools" in only:
        check.guard("tools", lambda: tools(client, a.model, check, not a.no_parallel_calls, a.eos_id,
                                                    a.tool_parser))
    if "structured" in only:
        check.guard("structured", lambda: structured(client, a.model, check, a.requests, a.parallel))
    if "parse" in only:
        check.guard("parse", lambda: parse_helpers(client, a.model, check))
    if "penalties" in only:
        check.guard("penalties", lambda: penalties(client, a.model, root, check, a.gap_min))
    if "echo" in only:
        check.guard("echo", lambda: echo(client, a.model, root, check, report))
    report["checks"] = check.rows
    with open(a.out, "w") as f:
        json.dump(report, f, indent=1)
    bad = [r for r in check.rows if not r["pass"]]
    print("agent_client.py: %d checks, %d failing (openai %s, jsonschema %s)" % (
        len(check.rows), len(bad), openai.__version__, "yes" if jsonschema else "no"))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
