"""A quick "valid" for documents a JSON Schema (Draft 7) accepts, from the keywords our schemas use.

jsonschema walks the schema anew for every document: about 0.3 ms a row, the whole cost of reading
a machine's run (175,000 rows), and 4 ms a test case of a ReFrame report. compile(schema) turns
the schema once into nested Python checks. A check says True only where jsonschema accepts the
document; it says False ("ask jsonschema") for anything it does not decide itself: a failing
document, and every edge it leaves to jsonschema (a float where an integer is wanted, a bool or a
dict subclass, a const or enum of another type). So the errors, their wording and every edge case
stay jsonschema's; only the common valid document is answered here. A schema using a keyword
outside the subset compiles to None: validate with jsonschema alone.
"""
import re

# keywords that constrain nothing
ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "default", "examples",
                         "defs", "definitions"})
_TYPES = {"string": (str,), "object": (dict,), "array": (list,), "boolean": (bool,), "null": (type(None),),
          "number": (int, float), "integer": (int,)}  # exact types: type(True) is bool, not int


class Unsupported(Exception):
    """The schema uses a keyword this module does not decide."""


def _pointer(root, ref):
    if not ref.startswith("#"):
        raise Unsupported(f"$ref {ref!r} outside the schema")
    node = root
    for part in filter(None, ref[1:].split("/")):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise Unsupported(f"$ref {ref!r} names nothing")
        node = node[part]
    return node


def _literal(value):
    """(type, value) a const/enum entry is matched by, or None where jsonschema's equality is subtler."""
    if isinstance(value, bool) or not isinstance(value, (str, int, type(None))):
        return None
    return type(value), value


def _compile(schema, root, cache):
    if schema is True or schema == {}:
        return lambda value: True
    if not isinstance(schema, dict):
        raise Unsupported(f"schema {schema!r}")
    if "$ref" in schema:   # Draft 7: the keywords beside a $ref are ignored
        ref = schema["$ref"]
        if ref not in cache:
            cache[ref] = None  # a recursive reference: resolved once the target is compiled
            cache[ref] = _compile(_pointer(root, ref), root, cache)
        return lambda value, ref=ref: cache[ref](value)
    checks = []
    for keyword, arg in schema.items():
        if keyword in ANNOTATIONS:
            continue
        if keyword == "type":
            names = [arg] if isinstance(arg, str) else list(arg)
            if any(n not in _TYPES for n in names):
                raise Unsupported(f"type {arg!r}")
            allowed = tuple({t for n in names for t in _TYPES[n]})
            checks.append(lambda value, allowed=allowed: type(value) in allowed)
        elif keyword == "properties":
            checks.append(_properties({name: _compile(sub, root, cache) for name, sub in arg.items()},
                                      {name: _only_types(sub) for name, sub in arg.items()}))
        elif keyword == "additionalProperties":
            if "patternProperties" in schema:
                raise Unsupported("additionalProperties beside patternProperties")
            known = frozenset(schema.get("properties", {}))
            if arg is False:
                checks.append(lambda value, known=known: type(value) is not dict or known.issuperset(value))
            else:
                sub = _compile(arg, root, cache)
                checks.append(lambda value, known=known, sub=sub: type(value) is not dict or all(
                    sub(v) for k, v in value.items() if k not in known))
        elif keyword == "required":
            names = tuple(arg)
            checks.append(lambda value, names=names: type(value) is not dict or all(n in value for n in names))
        elif keyword == "items":
            if not isinstance(arg, dict):
                raise Unsupported("items as a list of schemas")
            sub = _compile(arg, root, cache)
            checks.append(lambda value, sub=sub: type(value) is not list or all(sub(v) for v in value))
        elif keyword in ("const", "enum"):
            entries = [_literal(arg)] if keyword == "const" else [_literal(e) for e in arg]
            entries = frozenset(e for e in entries if e is not None)
            checks.append(lambda value, entries=entries: type(value) in (str, int, type(None))
                          and (type(value), value) in entries)
        elif keyword == "pattern":
            search = re.compile(arg).search
            checks.append(lambda value, search=search: type(value) is not str or search(value) is not None)
        elif keyword == "minLength":
            checks.append(lambda value, n=arg: type(value) is not str or len(value) >= n)
        elif keyword == "minimum":
            checks.append(lambda value, m=arg: type(value) not in (int, float) or value >= m)
        elif keyword == "allOf":
            subs = [_compile(sub, root, cache) for sub in arg]
            checks.append(lambda value, subs=subs: all(s(value) for s in subs))
        else:
            raise Unsupported(f"keyword {keyword!r}")
    if len(checks) == 1:
        return checks[0]

    def every(value):
        for check in checks:
            if not check(value):
                return False
        return True
    return every


def _only_types(schema):
    """The exact types a schema of only `type` (and annotations) allows; None for any other schema."""
    if not isinstance(schema, dict) or set(schema) - ANNOTATIONS != {"type"}:
        return None
    names = [schema["type"]] if isinstance(schema["type"], str) else list(schema["type"])
    return frozenset(t for n in names for t in _TYPES[n])


def _properties(subs, types):
    """The check of `properties`: a plain type test inline, any other subschema called."""
    def check(value):
        if type(value) is not dict:
            return True
        for key, item in value.items():
            allowed = types.get(key)
            if allowed is not None:
                if type(item) not in allowed:
                    return False
            elif key in subs and not subs[key](item):
                return False
        return True
    return check


def compile_schema(schema):
    """A function document -> True (jsonschema accepts it) or False (ask jsonschema); None when the
    schema uses a keyword outside the subset."""
    try:
        return _compile(schema, schema, {})
    except Unsupported:
        return None
