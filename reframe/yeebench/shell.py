"""Words of a job script: every value is quoted, so a variable set with `-S` is always data.

A check's settings come from the command line, a site's configuration or a parameter; none
of them may reach the shell as syntax. `quote` and `words` turn values into single literal
shell words; `Verbatim` marks the rare word a check composed as shell on purpose (a variable
expansion it set itself), which quoting leaves alone.
"""
import shlex


class Verbatim(str):
    '''A job-script word written as is: shell the check itself wrote, never a user's value.'''


def quote(value):
    '''One literal shell word for value (a Verbatim word is already shell and kept).'''
    if isinstance(value, Verbatim):
        return value
    return Verbatim(shlex.quote(str(value)))


def words(args):
    '''A command line of literal words, for prerun/postrun lines.'''
    return ' '.join(quote(a) for a in args)
