"""Parsers for benchmark output: OSU (5.x-7.x), NetPIPE, the solver's and probes' JSON, numactl.

Every parser takes text and returns plain Python data; on unusable input it
raises ParseError (a ValueError) whose message names the problem.
"""


class ParseError(ValueError):
    """The text is not the output the parser expects."""
