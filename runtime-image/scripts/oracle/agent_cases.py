#!/usr/bin/env python3
"""What oracle/agent_client.py sends and how it judges answers: the tools, the json_schema cases, the pydantic models of
parse(), the prompts, and a small JSON Schema validator of the keywords the server's schema compiler takes
(structured.SchemaCompiler), cross-checked with jsonschema where the running Python has it. Needs pydantic only."""
import json
from typing import List, Literal, Optional

import pydantic

try:
    import jsonschema  # not in the client bundle; used when the Python running this has it
except ImportError:
    jsonschema = None


# ----------------------------------------------------------------------------------------------------------------
# a small JSON Schema validator: the keywords the server's schema compiler takes (structured.SchemaCompiler)
# ----------------------------------------------------------------------------------------------------------------

def same(a, b):
    """JSON equality (True is not 1)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def type_ok(v, t):
    if t == "object":
        return isinstance(v, dict)
    if t == "array":
        return isinstance(v, list)
    if t == "string":
        return isinstance(v, str)
    if t == "boolean":
        return isinstance(v, bool)
    if t == "null":
        return v is None
    if t == "integer":
        return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
    if t == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    raise ValueError("unknown type %r" % t)


def errors(v, s, root, at="$"):
    """The ways v breaks schema s (empty: valid)."""
    out = []
    if "$ref" in s:
        ref = s["$ref"]
        sect, name = ref.split("/")[1], ref.split("/")[-1]
        return errors(v, root[sect][name], root, at)
    for sub in s.get("allOf", []):
        out += errors(v, sub, root, at)
    if "anyOf" in s and all(errors(v, sub, root, at) for sub in s["anyOf"]):
        out.append("%s: none of anyOf" % at)
    if "const" in s and not same(v, s["const"]):
        out.append("%s: %r is not the const %r" % (at, v, s["const"]))
    if "enum" in s and not any(same(v, e) for e in s["enum"]):
        out.append("%s: %r not in the enum" % (at, v))
    if "type" in s:
        ts = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not any(type_ok(v, t) for t in ts):
            return out + ["%s: %r is not of type %s" % (at, v, s["type"])]
    if isinstance(v, dict):
        props = s.get("properties", {})
        for k in s.get("required", []):
            if k not in v:
                out.append("%s: %r is required" % (at, k))
        extra = s.get("additionalProperties", True)
        for k, x in v.items():
            if k in props:
                out += errors(x, props[k], root, "%s.%s" % (at, k))
            elif extra is False:
                out.append("%s: %r is not allowed" % (at, k))
            elif isinstance(extra, dict):
                out += errors(x, extra, root, "%s.%s" % (at, k))
    if isinstance(v, list):
        if "items" in s:
            for i, x in enumerate(v):
                out += errors(x, s["items"], root, "%s[%d]" % (at, i))
        if len(v) < s.get("minItems", 0) or len(v) > s.get("maxItems", len(v)):
            out.append("%s: %d items" % (at, len(v)))
    if isinstance(v, str) and (len(v) < s.get("minLength", 0) or len(v) > s.get("maxLength", len(v))):
        out.append("%s: length %d" % (at, len(v)))
    return out


def invalid(v, schema):
    """None when v validates against schema (both validators agree), else why not."""
    e = errors(v, schema, schema)
    if jsonschema is not None:
        ok = jsonschema.Draft202012Validator(schema).is_valid(v)
        if ok == bool(e):
            return "the validators disagree (jsonschema %s, ours %s)" % (ok, e or "valid")
    return "; ".join(e) if e else None


# ----------------------------------------------------------------------------------------------------------------
# what the checks send
# ----------------------------------------------------------------------------------------------------------------

def fn(name, description, params):
    return {"type": "function", "function": {"name": name, "description": description, "strict": True,
                                             "parameters": params}}


TOOLS = [
    fn("get_weather", "The weather in a city.", {
        "type": "object", "additionalProperties": False, "required": ["city", "unit"],
        "properties": {"city": {"type": "string", "maxLength": 16}, "unit": {"enum": ["celsius", "fahrenheit"]}}}),
    fn("add", "The sum of two integers.", {
        "type": "object", "additionalProperties": False, "required": ["a", "b"],
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}),
]
TOOL_PARAMS = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
ASK = [{"role": "user", "content": "What is the weather in Paris in celsius? And what is 2 + 3?"}]

SCHEMAS = {
    "person": {"type": "object", "additionalProperties": False, "required": ["name", "age", "tags"],
               "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer"},
                              "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 3}}},
    "choice": {"type": "object", "additionalProperties": False, "required": ["kind", "value", "ok"],
               "properties": {"kind": {"enum": ["cat", "dog", "bird"]},
                              "value": {"anyOf": [{"type": "integer"}, {"type": "null"}, {"type": "boolean"}]},
                              "ok": {"const": True}}},
    "points": {"type": "object", "additionalProperties": False, "required": ["point", "points"],
               "$defs": {"P": {"type": "object", "additionalProperties": False, "required": ["x", "y"],
                               "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}},
               "properties": {"point": {"$ref": "#/$defs/P"},
                              "points": {"type": "array", "items": {"$ref": "#/$defs/P"}, "minItems": 1,
                                         "maxItems": 3}}},
    "list": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 5},
    "code": {"type": "object", "additionalProperties": False, "required": ["code", "note"],
             "properties": {"code": {"type": "string", "minLength": 3, "maxLength": 6},
                            "note": {"type": ["string", "null"], "maxLength": 10}}},
}


class Pet(pydantic.BaseModel):
    kind: Literal["cat", "dog"]
    name: str = pydantic.Field(max_length=10)
    age: int


class Owner(pydantic.BaseModel):
    owner: str = pydantic.Field(max_length=10)
    pets: List[Pet] = pydantic.Field(max_length=2)
    nickname: Optional[str] = pydantic.Field(max_length=8)


PROMPTS = ["def parse(", "import os\nimport sys\n\n", "class Node:\n    def __init__(self", "for i in range(",
           "    return self."]
GAP_PROMPTS = ["if __name__ == ", "    except ", "from . import ", "    def __repr__(self):\n        return ", "x = ["]
