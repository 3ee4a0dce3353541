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

Which benchmarks the suite knows is one table, BENCHMARKS: the point-to-point and collective checks
take their parameters and figure names from it, `locate` its folders, and `make test-osu` its
iteration counts (`python -m yeebench.osu iterations-for`).  A new point-to-point benchmark is one entry.
"""
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from yeebench import package_data, spack_env


@dataclass(frozen=True)
class Benchmark:
    """One OSU program the suite knows."""
    name: str                  # the program, e.g. 'osu_bw'
    kind: str                  # 'pt2pt' or 'collective': the OSU folder it is installed in
    column: str = 'latency_us'  # the output column its figures come from (yeebench.parsers.osu names)
    peak: str = None           # bandwidth benchmarks: the peak figure's name (its large-message twin:
    #                            yeebench.curve_foms.large_name, e.g. peak_bibw -> bibw_large)
    checked: bool = True       # a parameter value of OsuPt2Pt / OsuCollective (False: only located)
    device_buffers: bool = True  # takes CUDA device buffers (-d cuda; point-to-point adds D D)
    short_iterations: int = None  # timed iterations in a short run (make test-osu): OSU's -i applies to
    #                               every size, so a ping-pong wants many and a 64-message window few


#: Every OSU benchmark the suite runs or locates, in parameter order.  The first of each kind is the
#: one located to find that kind's folder (capabilities); a collective's case is its name without osu_.
BENCHMARKS = (
    Benchmark('osu_latency', 'pt2pt', short_iterations=1000),
    Benchmark('osu_bw', 'pt2pt', 'bandwidth_MBs', 'peak_bw', short_iterations=20),
    Benchmark('osu_bibw', 'pt2pt', 'bandwidth_MBs', 'peak_bibw', short_iterations=20),
    Benchmark('osu_mbw_mr', 'pt2pt', 'bandwidth_MBs', 'peak_mbw', short_iterations=20),
    Benchmark('osu_multi_lat', 'pt2pt', checked=False),
    Benchmark('osu_latency_mt', 'pt2pt', checked=False),
    Benchmark('osu_allreduce', 'collective'),
    Benchmark('osu_bcast', 'collective'),
    Benchmark('osu_alltoall', 'collective'),
)

#: The ping-pong: the single-copy probe, the collectives' alpha/beta, the smoke case.
PINGPONG = 'osu_latency'

COLLECTIVE_PREFIX = 'osu_'


def benchmark(name):
    """The table entry of `name`; KeyError for a benchmark the suite does not know."""
    for entry in BENCHMARKS:
        if entry.name == name:
            return entry
    raise KeyError(f'OSU benchmark {name!r} is not in yeebench.osu.BENCHMARKS')


def names(kind, checked=True):
    """Benchmarks of `kind` in table order (checked=True: those the checks run)."""
    return [b.name for b in BENCHMARKS if b.kind == kind and (b.checked or not checked)]


def collectives():
    """The collectives OsuCollective sweeps, by short name ('allreduce' for osu_allreduce)."""
    return [name[len(COLLECTIVE_PREFIX):] for name in names('collective')]


def collective_benchmark(collective):
    return COLLECTIVE_PREFIX + collective


def probes():
    """{kind: benchmark} located to find each kind's folder: the first entry of each kind."""
    found = {}
    for entry in BENCHMARKS:
        found.setdefault(entry.kind, entry.name)
    return found


def iterations_for():
    """The short run's timed iterations per benchmark, as OsuPt2Pt.iterations_for takes them."""
    return ','.join(f'{b.name}:{b.short_iterations}' for b in BENCHMARKS if b.short_iterations)
# Benchmark folders under an install prefix, a 5.x build tree and a 7.x build tree.
_LAYOUTS = ('libexec/osu-micro-benchmarks/mpi/{kind}', 'libexec/osu-micro-benchmarks/mpi/{kind}/standard',
            'libexec/osu-micro-benchmarks/mpi/{kind}/blocking', 'mpi/{kind}', 'c/mpi/{kind}',
            'c/mpi/{kind}/standard', 'c/mpi/{kind}/blocking', 'bin', '.')
# Written by microbench/osu.mk beside the prefix: why the suite's own build is not there.
BUILD_STATUS_FILES = ('osu-build.failed', 'osu-build.skipped')


def kind(benchmark):
    return 'pt2pt' if benchmark in names('pt2pt', checked=False) else 'collective'


def _in_tree(root, benchmark):
    for pattern in _LAYOUTS:
        candidate = Path(root) / pattern.format(kind=kind(benchmark)) / benchmark
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate.resolve())
    return None


def suite_prefix(env=None):
    '''Where `make build` installs: YEEBENCH_PREFIX, else the checkout's build/install; None for an
    installed package without YEEBENCH_PREFIX (it has no build of its own).'''
    env = os.environ if env is None else env
    if env.get('YEEBENCH_PREFIX'):
        return Path(env['YEEBENCH_PREFIX'])
    root = package_data.checkout_root()
    return root / 'build' / 'install' if root is not None else None


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
    path = _in_tree(prefix, benchmark) if prefix is not None else None
    if path:
        return Found(path, 'suite build')
    advice = 'Install OSU (spack install osu-micro-benchmarks), set OSU_HOME'
    if prefix is None:
        searched.append('the suite\'s build (none: an installed package, YEEBENCH_PREFIX not set)')
        advice += ', or put its benchmarks on PATH'
    else:
        searched.append(f'the suite\'s build {prefix}/libexec/osu-micro-benchmarks ({build_status(prefix)})')
        advice += ', or give `make build` a tarball (OSU_TARBALL, OSU_MIRROR; see README)'
    return Found(reason='OSU Micro-Benchmarks not found: searched ' + '; '.join(searched) + '. ' + advice)


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


if __name__ == '__main__':     # for make: python -m yeebench.osu iterations-for
    if sys.argv[1:] != ['iterations-for']:
        sys.exit('usage: python -m yeebench.osu iterations-for')
    print(iterations_for())
