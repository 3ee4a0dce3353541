"""Finding and running the OSU Micro-Benchmarks (OSU >= 5.4, the first with -m on every benchmark).

Where a benchmark is taken from, first match wins:
  1. OSU_HOME: an install prefix or a build tree of any layout (5.x-7.x); when it is set but holds
     no such benchmark the search stops there (a typo must not silently benchmark another OSU);
  2. PATH (site modules, `spack load osu-micro-benchmarks`, a container image);
  3. the active Spack environment's view (SPACK_ENV);
  4. the suite's own build: <prefix>/libexec/osu-micro-benchmarks (`make build` when it found a
     tarball, see microbench/osu/), prefix = YEEBENCH_PREFIX or the repository's build/install.
When none has it, `locate` says which places it searched and why the suite's build is absent.
Nothing here runs an OSU program: the launch host may lack the MPI runtime the benchmarks need.
"""
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from yeebench import spack_env

REPO_ROOT = Path(__file__).resolve().parents[2]
PT2PT = ('osu_latency', 'osu_bw', 'osu_bibw', 'osu_mbw_mr', 'osu_multi_lat', 'osu_latency_mt')
# Benchmark folders under an install prefix, a 5.x build tree and a 7.x build tree.
_LAYOUTS = ('libexec/osu-micro-benchmarks/mpi/{kind}', 'libexec/osu-micro-benchmarks/mpi/{kind}/standard',
            'libexec/osu-micro-benchmarks/mpi/{kind}/blocking', 'mpi/{kind}', 'c/mpi/{kind}',
            'c/mpi/{kind}/standard', 'c/mpi/{kind}/blocking', 'bin', '.')
# Written by microbench/osu.mk beside the prefix: why the suite's own build is not there.
BUILD_STATUS_FILES = ('osu-build.failed', 'osu-build.skipped')


def kind(benchmark):
    return 'pt2pt' if benchmark in PT2PT else 'collective'


def _in_tree(root, benchmark):
    for pattern in _LAYOUTS:
        candidate = Path(root) / pattern.format(kind=kind(benchmark)) / benchmark
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate.resolve())
    return None


def suite_prefix(env=None):
    env = os.environ if env is None else env
    return Path(env.get('YEEBENCH_PREFIX') or REPO_ROOT / 'build' / 'install')


@dataclass
class Found:
    path: str = None      # absolute path of the benchmark, None when not found
    origin: str = ''      # 'OSU_HOME', 'PATH', 'spack view', 'suite build'
    reason: str = ''      # why it was not found: every place searched


def locate(benchmark, env=None):
    """Where `benchmark` (e.g. 'osu_latency') is, as a Found."""
    env = os.environ if env is None else env
    searched = []
    home = env.get('OSU_HOME')
    if home:
        if not Path(home).is_dir():
            return Found(reason=f'OSU Micro-Benchmarks not found: OSU_HOME={home} does not exist '
                                f'(unset it to use PATH, a Spack view or the suite\'s build)')
        path = _in_tree(home, benchmark)
        if path:
            return Found(path, 'OSU_HOME')
        return Found(reason=f'OSU Micro-Benchmarks not found: OSU_HOME={home} has no {benchmark} '
                            f'(looked in {", ".join(p.format(kind=kind(benchmark)) for p in _LAYOUTS)})')
    searched.append('OSU_HOME (not set)')
    on_path = shutil.which(benchmark, path=env.get('PATH'))
    if on_path:
        return Found(os.path.abspath(on_path), 'PATH')
    searched.append(f'PATH (no {benchmark})')
    env_dir = spack_env.active_environment(env)
    view = spack_env.view_path(env_dir) if env_dir else None
    if view and (path := _in_tree(view, benchmark)):
        return Found(path, 'spack view')
    searched.append(f'Spack view {view} (no {benchmark})' if view else 'Spack view (no active environment)')
    prefix = suite_prefix(env)
    path = _in_tree(prefix, benchmark)
    if path:
        return Found(path, 'suite build')
    searched.append(f'the suite\'s build {prefix}/libexec/osu-micro-benchmarks ({build_status(prefix)})')
    return Found(reason='OSU Micro-Benchmarks not found: searched ' + '; '.join(searched) +
                        '. Install OSU (spack install osu-micro-benchmarks), set OSU_HOME, or give '
                        '`make build` a tarball (OSU_TARBALL, OSU_MIRROR; see README)')


def build_status(prefix):
    """The one line `make build` left about the suite's OSU build, or 'not built'."""
    for name in BUILD_STATUS_FILES:
        path = Path(prefix).parent / name
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        if text:
            return text.splitlines()[0]
    return 'not built: run make build'


def options(max_size, iterations=None, warmup=None, min_size=None):
    """Size range and iteration counts.  iterations/warmup None keep OSU's own defaults
    (fewer iterations above 8 KB)."""
    opts = []
    if iterations:
        opts += ['-i', str(iterations)]
    if warmup:
        opts += ['-x', str(warmup)]
    return opts + ['-m', f'{min_size}:{max_size}' if min_size else f'{max_size}']


def help_lists_cuda(text):
    """True when an OSU help text offers CUDA device buffers (-d ... cuda), e.g. a recorded `-h`."""
    return any(line.lstrip().startswith('-d') and 'cuda' in line for line in text.splitlines())


def has_cuda(path):
    """True when the OSU program at `path` was built with CUDA: it links the CUDA runtime.

    Read from the file, not by running it.  Every OSU build carries the word "CUDA" in its
    messages ("CUDA Support Not Enabled"); only a CUDA build names libcudart or cudaMalloc.
    """
    try:
        data = Path(path).read_bytes()
    except OSError:
        return False
    return b'libcudart' in data or b'cudaMalloc' in data


def device_buffer_options(opts, pt2pt):
    """`opts` for CUDA device buffers: -d cuda first; point-to-point adds D D (both ranks' buffers)."""
    return ['-d', 'cuda'] + list(opts) + (['D', 'D'] if pt2pt else [])
