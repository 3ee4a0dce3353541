"""What the current ReFrame run selected on its command line (ReFrame does not hand it to tests).

The smoke set's reduced sizes must apply only to a run that asked for the smoke set (`-t smoke`),
never to a full run that happens to include a smoke member: the same predicate as EESSI's CI
selection, read from the command line ReFrame parsed.
"""
import re
import sys


def tag_patterns(argv=None):
    """The -t/--tag PATTERNs on a reframe command line, in order."""
    argv = sys.argv[1:] if argv is None else argv
    found, take_next = [], False
    for arg in argv:
        if take_next:
            found.append(arg)
            take_next = False
        elif arg in ('-t', '--tag'):
            take_next = True
        elif arg.startswith('--tag='):
            found.append(arg[len('--tag='):])
        elif arg.startswith('-t') and not arg.startswith('--') and len(arg) > 2:
            found.append(arg[2:])
        elif arg == '--':
            break
    return found


def selected_by_tag(tag, argv=None):
    """True when the run's tag filters select `tag` (ReFrame matches -t patterns with re.search)."""
    for pattern in tag_patterns(argv):
        try:
            if re.search(pattern, tag):
                return True
        except re.error:
            continue
    return False
