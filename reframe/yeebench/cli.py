"""The `yeebench` command: one entry point, one sub-command module per tool.

Each module named in SUBCOMMANDS exposes `register(subparsers)`, which adds its
parser and sets `func` (called with the parsed namespace, returns an exit code).
"""
import argparse
import codecs
import importlib
import io
import sys

from yeebench import __version__
from yeebench.usage import UsageError

SUBCOMMANDS = (
    "yeebench.results.cli",
    "yeebench.vcluster.cli",
    "yeebench.acceptance.cli",
    "yeebench.package_cli",
    "yeebench.siteconfig.cli",
)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="yeebench",
        description="yeebench: HPC benchmark suite tools (results, virtual cluster, acceptance, checks-dir, site configuration).",
    )
    parser.add_argument("--version", action="version", version=f"yeebench {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in SUBCOMMANDS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            absent_tool = module_name == err.name or module_name.startswith(f"{err.name}.")
            if not absent_tool:  # a real missing dependency must not be hidden
                raise
            continue
        module.register(subparsers)
    return parser


def _unencodable(err):
    """An encoding error handler for the output streams: a byte of a file name that was not UTF-8
    (surrogateescape, U+DC80..U+DCFF) is written back as that byte, any other lone surrogate (from a
    recorded file's JSON) as '?': printing a name or a row never ends a command with a traceback."""
    if not isinstance(err, UnicodeEncodeError):
        raise err
    out = bytearray()
    for char in err.object[err.start:err.end]:
        code = ord(char)
        out += bytes([code - 0xDC00]) if 0xDC80 <= code <= 0xDCFF else b"?"
    return bytes(out), err.end


codecs.register_error("yeebench-output", _unencodable)


def _tolerant_streams():
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="yeebench-output")


def main(argv=None):
    _tolerant_streams()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UsageError as err:
        print(f"yeebench {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("yeebench: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
