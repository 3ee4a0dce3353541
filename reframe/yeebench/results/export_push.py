"""Pushing export lines to a time-series database's import endpoint over HTTP.

The endpoint's path says what it reads (ENDPOINTS): VictoriaMetrics' /api/v1/import/prometheus
(OpenMetrics text), /api/v1/import (its JSON lines), and /write (Influx line protocol; also InfluxDB
1.x /write and 2.x /api/v2/write). Figures go in batches of BATCH_FIGURES, each a POST of its own, so a
failure says how many figures the server had already accepted. "Accepted" is what the server
acknowledged with a 2xx status: VictoriaMetrics answers 204 even for lines it cannot parse (it logs
and skips them), which is why `--verify` reads the figures back (export_readback.py).
"""
import base64
import http.client
import os
import socket
import urllib.error
import urllib.parse
import urllib.request

from yeebench.results.errors import ResultsError
from yeebench.results.export_formats import document

#: Path ending -> the format the endpoint reads (the first match wins: the longer path first).
ENDPOINTS = (("/api/v1/import/prometheus", "openmetrics"), ("/api/v1/import", "vm-jsonl"),
             ("/write", "influx"))
CONTENT_TYPES = {"openmetrics": "application/openmetrics-text; version=1.0.0; charset=utf-8",
                 "vm-jsonl": "application/x-ndjson", "influx": "text/plain; charset=utf-8"}
BATCH_FIGURES = 5000
#: Sent verbatim as the Authorization header when set ("Token ..." for InfluxDB 2, "Bearer ...").
AUTH_ENV = "YEEBENCH_PUSH_AUTHORIZATION"


class PushError(Exception):
    """The push failed after the input was found good (exit 3); the message says what was accepted."""


def shown(url):
    """The URL for a message: no user, password or query (either may carry a credential)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def endpoint_format(url):
    """The format the push URL's endpoint reads; ResultsError for a URL that is not one."""
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port   # raises ValueError for a port that is not a number
    except ValueError as err:
        raise ResultsError(f"--push {url!r} is not a URL: {err}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ResultsError(f"--push {url!r} is not an http:// or https:// URL with a host")
    path = parts.path.rstrip("/")
    for ending, fmt in ENDPOINTS:
        if path.endswith(ending):
            return fmt
    known = ", ".join(f"{ending} ({fmt})" for ending, fmt in ENDPOINTS)
    raise ResultsError(f"--push {shown(url)}: no known import endpoint in the path; it must end in one of "
                       f"{known}")


def _request(url, body, fmt):
    parts = urllib.parse.urlsplit(url)
    headers = {"Content-Type": CONTENT_TYPES[fmt], "User-Agent": "yeebench-results-export"}
    if parts.username is not None:
        user = urllib.parse.unquote(parts.username)
        password = urllib.parse.unquote(parts.password or "")
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        netloc = parts.netloc.rsplit("@", 1)[1]
        url = urllib.parse.urlunsplit(parts._replace(netloc=netloc))
    if os.environ.get(AUTH_ENV):
        headers["Authorization"] = os.environ[AUTH_ENV]
    return urllib.request.Request(url, data=body, headers=headers, method="POST")


def opener_for(url):
    """A URL opener that goes straight to a loopback host (a proxy from the environment would never
    reach this machine's database) and through the environment's proxy otherwise."""
    host = urllib.parse.urlsplit(url).hostname or ""
    direct = host in ("localhost", "::1") or host.startswith("127.")
    return urllib.request.build_opener(urllib.request.ProxyHandler({})) if direct else urllib.request.build_opener()


def _server_says(err):
    try:
        text = err.read(2000).decode("utf-8", "replace")
    except Exception:   # a body that cannot be read adds nothing to the status line
        text = ""
    text = " ".join(text.split())
    return f": {text[:200]}" if text else ""


def send(url, body, fmt, timeout):
    """POST one body; None when the server acknowledged it, else why not (one line)."""
    try:
        with opener_for(url).open(_request(url, body, fmt), timeout=timeout) as response:
            response.read()
            return None
    except urllib.error.HTTPError as err:
        return f"the server refused it: HTTP {err.code} {err.reason}{_server_says(err)}"
    except urllib.error.URLError as err:
        reason = err.reason
        if isinstance(reason, ConnectionRefusedError):
            return "connection refused (is the database running and listening there?)"
        if isinstance(reason, socket.gaierror):
            return f"host name not resolved ({reason.strerror})"
        if isinstance(reason, (socket.timeout, TimeoutError)):
            return f"no answer within {timeout:g} s"
        return f"cannot reach it: {getattr(reason, 'strerror', None) or reason}"
    except (socket.timeout, TimeoutError):
        return f"no answer within {timeout:g} s"
    except (http.client.HTTPException, ConnectionError) as err:
        return f"the connection broke: {type(err).__name__} {err}".strip()


def push(figure_lines, url, fmt, timeout=30.0, batch=BATCH_FIGURES):
    """Send the lines in batches; the number of figures sent. PushError, naming how many figures were
    accepted before the failure, when a batch is not acknowledged."""
    total = len(figure_lines)
    accepted = 0
    for start in range(0, total, batch):
        chunk = figure_lines[start:start + batch]
        why = send(url, document(chunk, fmt).encode("utf-8"), fmt, timeout)
        if why is None:
            accepted += len(chunk)
            continue
        partial = " (the server may have stored part of that batch)" if "partial write" in why else ""
        rest = total - accepted - len(chunk)
        raise PushError(f"push to {shown(url)} failed: {why}; {accepted} of {total} figures were accepted "
                        f"(the failing batch held {len(chunk)}{partial}"
                        + (f", {rest} more were not sent)" if rest else ")"))
    return accepted
