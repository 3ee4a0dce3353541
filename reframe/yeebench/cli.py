"""The `yeebench` command: one entry point, one sub-command module per tool.

Each module named in SUBCOMMANDS exposes `register(subparsers)`, which adds its
parser and sets `func` (called with the parsed namespace, returns an exit code).
"""
import argparse
import importlib
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


def main(argv=None):
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
