"""Nothing about the compute nodes is read from the launch host: what a partition has comes from its
system file (features and extras, yeebench.capabilities), programs resolve in job scripts, builds run
as jobs.  The checks are run here with a launch host PATH that holds no MPI, OSU or NetPIPE."""
import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from checkfiles import all_check_files, check_file

REPO = Path(__file__).resolve().parents[3]
FILES = ('pt2pt.py', 'collectives.py', 'fdtd.py', 'binding.py', 'numa.py')


def reframe(tmp_path, *args, system):
    exe = Path(sys.executable).parent / 'reframe'
    if not exe.exists():
        pytest.skip('reframe is not installed next to this Python')
    empty = tmp_path / 'empty-bin'
    empty.mkdir(exist_ok=True)
    # the launch host's PATH has no mpirun, OSU, NetPIPE, numactl or compilers at all
    env = {'HOME': str(tmp_path), 'PATH': str(empty), 'YEEBENCH_RFM_DIR': str(tmp_path / 'rfm'),
           'YEEBENCH_PREFIX': str(tmp_path / 'no-prefix')}
    files = [a for f in FILES for a in ('-c', str(check_file(f)))]
    out = subprocess.run([str(exe), '-C', str(REPO / 'reframe/config/settings.py'), '--system', system,
                          *files, *args], capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
    return out.returncode, re.sub(r'\x1b\[[0-9;]*m', '', out.stdout + out.stderr)


def job_scripts(tmp_path):
    return {p.parent.name: p.read_text() for p in (tmp_path / 'rfm').rglob('rfm_job.sh')}


def test_a_cluster_partition_resolves_everything_through_its_system_file(tmp_path):
    rc, out = reframe(tmp_path, '--mode', 'smoke', '-p', 'host', '--dry-run', system='generic-slurm')
    assert rc == 0, out
    assert 'FAIL' not in out, out
    # the one skip is a launcher fact (srun takes no rankfile), not a missing tool
    skips = [line for line in out.splitlines() if '[     SKIP ]' in line]
    assert all('rankfiles are an Open MPI mpirun feature' in line for line in skips), skips
    scripts = job_scripts(tmp_path)
    osu = [s for name, s in scripts.items() if name.startswith('Osu')]
    assert osu and all('$OSU_HOME/libexec/osu-micro-benchmarks/mpi/' in s for s in osu), osu
    assert any('srun' in s and 'NPopenmpi' in s for name, s in scripts.items() if name.startswith('NetPIPE'))
    # the solver comes from the fixture's build job on a node, not from a lookup on this host
    fdtd = [s for name, s in scripts.items() if name.startswith('FdtdStrongScaling')]
    assert fdtd and all('/SolverBinary' in s and '/bin/yee ' in s for s in fdtd), fdtd
    builds = [p.read_text() for p in (tmp_path / 'rfm').rglob('rfm_build.sh')]
    assert builds and all('#SBATCH' in b for b in builds), 'the fixture builds must be jobs on the nodes'


def test_a_partition_without_the_tools_lists_the_cases_and_skips_naming_partition_and_feature(tmp_path):
    # `local` detects what this machine has when the configuration loads: with nothing on PATH it has
    # no OSU and no NetPIPE, and the cases say so instead of vanishing
    rc, listing = reframe(tmp_path, '--mode', 'smoke', '-l', system='local')
    assert rc == 0 and '- OsuPt2Pt ' in listing and '- NetPIPEPt2Pt ' in listing, listing
    rc, out = reframe(tmp_path, '--mode', 'smoke', '-n', 'Osu|NetPIPE', '--dry-run', system='local')
    assert rc == 0, out
    assert re.search(r"SKIP .*partition local:default has no osu: ", out), out
    assert re.search(r"SKIP .*partition local:default has no netpipe: ", out), out


def _calls_a_program(path):
    '''Lines where a check module starts a process or looks a program up (subprocess, which).'''
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ('run', 'Popen', 'check_output', 'which') \
                and isinstance(node.value, ast.Name) and node.value.id in ('subprocess', 'shutil'):
            found.append(node.lineno)
    return found


@pytest.mark.parametrize('name', [p.name for p in all_check_files()])
def test_no_check_runs_or_looks_up_a_program_on_the_launch_host(name):
    # container.py too: what the node's container runtime has is asked in the job (image_probe)
    assert _calls_a_program(check_file(name)) == []


def test_acceptance_probes_run_in_the_job_not_at_setup(tmp_path):
    # mpi_f08, the solver's output options and nvcc are found out on the node, in the job script
    exe = Path(sys.executable).parent / 'reframe'
    env = {'HOME': str(tmp_path), 'PATH': str(tmp_path), 'YEEBENCH_RFM_DIR': str(tmp_path / 'rfm')}
    out = subprocess.run([str(exe), '-C', str(REPO / 'reframe/config/settings.py'), '--system', 'generic-slurm',
                          '-p', 'host', '-c', str(check_file('acceptance')), '-c', str(check_file('acceptance_storage')),
                          '-n', 'AcceptanceMPIBindings%binding=fortran-f08|AcceptanceStorage%tool=yee-io',
                          '--dry-run', '--flex-alloc-nodes=2'],
                         capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
    assert out.returncode == 0, out.stdout + out.stderr
    scripts = job_scripts(tmp_path)
    f08 = next(s for name, s in scripts.items() if name.startswith('AcceptanceMPIBindings'))
    assert 'mpifort -o f08_probe f08_probe.f90' in f08 and f08.index('f08_probe') < f08.index('mpi_reduce')
    io = next(s for name, s in scripts.items() if name.startswith('AcceptanceStorage'))
    assert '--help > yee-help.txt' in io and '$YEE_IO_OPTS' in io
