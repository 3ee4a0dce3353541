"""JSON that someone else wrote (a report, a recorded run, a baseline): parsed, or one ResultsError.

Beyond what json.loads refuses, an integer longer than Python converts (4300 digits) and nesting
deeper than the parser's recursion are one-line errors too, and a lone UTF-16 surrogate escape
('\\ud800' without its pair: valid JSON, but text no file or terminal can take) becomes U+FFFD.
"""
import json
import re

from yeebench.results.errors import ResultsError

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def loads(text, what, scrub_surrogates=True):
    """The document of `text`; ResultsError naming `what` for anything json cannot turn into one. With
    `scrub_surrogates` False a lone surrogate stays (for readers that refuse it themselves)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise ResultsError(f"{what} is not valid JSON at line {err.lineno} column {err.colno} ({err.msg}); "
                           f"corrupt or truncated?") from None
    except RecursionError:
        raise ResultsError(f"{what} nests JSON too deeply to be read") from None
    except ValueError as err:   # int('9' * 5000): Python's limit on the digits of an integer
        raise ResultsError(f"{what} holds a number too long to read ({str(err).split(':')[0]})") from None
    return scrub(doc, text, what) if scrub_surrogates else doc


def scrub(doc, text, what="JSON"):
    """`doc` with every lone surrogate in its strings (keys included) replaced by U+FFFD; walked only
    when `text`, the JSON it came from, has a surrogate escape at all (a well-formed pair is one too)."""
    if not isinstance(text, str) or not _SURROGATE_ESCAPE.search(text):
        return doc
    try:
        return _scrubbed(doc)
    except RecursionError:
        raise ResultsError(f"{what} nests JSON too deeply to be read") from None


def has_lone_surrogate(obj, text):
    """True when a string of `obj` (keys included) holds a lone surrogate; looked for only when `text`,
    the JSON it came from, has a surrogate escape at all."""
    if not isinstance(text, str) or not _SURROGATE_ESCAPE.search(text):
        return False
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
    return False


def clean_text(text):
    """`text` with lone surrogates replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def _scrubbed(obj):
    if isinstance(obj, str):
        return clean_text(obj)
    if isinstance(obj, list):
        return [_scrubbed(item) for item in obj]
    if isinstance(obj, dict):
        return {clean_text(key): _scrubbed(value) for key, value in obj.items()}
    return obj
