"""`yeebench config from-slurm`: a ReFrame system file for the Slurm cluster this runs on."""
import sys

from yeebench import safe_io
from yeebench.usage import UsageError

from . import slurm


def cmd_from_slurm(args):
    if args.output not in (None, '-'):
        safe_io.check_output(args.output)      # refused before Slurm is asked anything
    try:
        text = slurm.collect(args.partition)
    except slurm.SlurmError as err:
        raise UsageError(str(err))
    if args.output in (None, '-'):
        sys.stdout.write(text)
        return 0
    try:
        slurm.write_atomically(args.output, text)
    except OSError as err:
        raise UsageError(f'cannot write {args.output}: {err.strerror or err}')
    print(f'config from-slurm: wrote {args.output}', file=sys.stderr)
    return 0


def register(subparsers):
    parser = subparsers.add_parser('config', help='ReFrame configuration for a site that has none',
                                   description='ReFrame configuration for a site that has none.')
    sub = parser.add_subparsers(dest='config_command', metavar='SUBCOMMAND')
    sub.required = True
    slurm_parser = sub.add_parser(
        'from-slurm', help='write a ReFrame system file from sinfo and scontrol show node',
        description='Write a ReFrame system file for the Slurm cluster this runs on, from sinfo and '
                    '`scontrol show node`: one partition per Slurm partition with its processor, GPUs '
                    '(Gres), memory and node count. Without Slurm, or with one it cannot read: one line '
                    'on stderr, exit 2, nothing written.')
    slurm_parser.add_argument('--partition', metavar='P', help='only the Slurm partition P')
    slurm_parser.add_argument('-o', '--output', metavar='FILE', help='write FILE (atomically) instead of stdout')
    slurm_parser.set_defaults(func=cmd_from_slurm)
