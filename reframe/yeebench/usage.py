"""The error every `yeebench` sub-command raises for bad input from the user.

Its own module so that the entry point (yeebench.cli), which imports the sub-command modules, and
the sub-commands, which raise it, both import it from here and not from each other.
"""


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""
