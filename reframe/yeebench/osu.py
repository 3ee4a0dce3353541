"""Running OSU Micro-Benchmarks: version-independent options, CUDA device buffers."""
import functools
import re
import subprocess

# A CUDA-enabled build lists the accelerator option in its help (absent otherwise):
#   5.x  '  -d TYPE       accelerator device buffers can be of TYPE `cuda' or `openacc''
#   7.x  '  -d, --accelerator  TYPE - use accelerator device buffers, which can be of TYPE `cuda','
# (7.x prints the same list for a ROCm-only build; OSU then refuses `-d cuda' at run time.)
_CUDA_OPTION = re.compile(r"^\s*-d[\s,].*\bcuda\b", re.MULTILINE)


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


def help_lists_cuda(text):
    """True when an OSU help text offers CUDA device buffers (-d cuda)."""
    return bool(_CUDA_OPTION.search(text))


def has_cuda(path):
    """True when the OSU benchmark at `path` was built with CUDA support."""
    return help_lists_cuda(help_text(path))


def device_buffer_options(opts, pt2pt):
    """`opts` for CUDA device buffers: -d cuda first; point-to-point adds D D (both ranks' buffers)."""
    return ['-d', 'cuda'] + list(opts) + (['D', 'D'] if pt2pt else [])
