"""Running OSU Micro-Benchmarks: version-independent options."""
import functools
import subprocess


@functools.lru_cache(maxsize=None)
def help_text(path):
    """`<benchmark> -h` output ('' when it cannot run here, e.g. no MPI singleton)."""
    try:
        out = subprocess.run([path, '-h'], capture_output=True, text=True, timeout=20,
                             env=None, stdin=subprocess.DEVNULL)
        return out.stdout + out.stderr
    except (OSError, subprocess.SubprocessError):
        return ''


def options(path, max_size, iterations=None, warmup=None, min_size=None):
    """Options for size range and iteration counts; -m only where the version has it (5.3 pt2pt has not).

    iterations/warmup None keep OSU's own defaults (fewer iterations above 8 KB).
    """
    opts = []
    if iterations:
        opts += ['-i', str(iterations)]
    if warmup:
        opts += ['-x', str(warmup)]
    if ' -m' in help_text(path):
        opts += ['-m', f'{min_size}:{max_size}' if min_size else f'{max_size}']
    return opts
