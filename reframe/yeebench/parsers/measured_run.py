"""Where a job's measured program starts in its stdout and stderr.

A job that runs other programs first (the single-copy probe, yeebench.single_copy) prints MARKER on
a line of its own, to stdout and to stderr, just before the program it measures. Parsers of the
program's output read only what follows the last marker, so nothing printed before it (a run that
was refused, a line cut short, launcher chatter) counts as the measured run's. Text without a
marker is read whole: the job ran its program alone.
"""

MARKER = '== yeebench: the measured run starts here =='


def after_marker(text):
    """The part of `text` after the line holding the last MARKER (all of `text` without one)."""
    at = text.rfind(MARKER)
    if at < 0:
        return text
    end = text.find('\n', at)
    return '' if end < 0 else text[end + 1:]
