"""microbench/osu: finding a release tarball and building OSU from it (stand-in tarballs, no compiler)."""
import hashlib
import io
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
BUILD = REPO / 'microbench/osu/build-osu.sh'
FIND = REPO / 'microbench/osu/find-tarball.sh'

# A stand-in OSU source tree: autotools' interface (configure --prefix, make, make install) in sh.
CONFIGURE = r'''#!/bin/sh
for a in "$@"; do case "$a" in --prefix=*) p=${a#--prefix=};; esac; done
[ -n "$FAKE_OSU_CONFIGURE_FAILS" ] && { echo "configure: error: no MPI" >&2; exit 1; }
printf 'all:\n\ttrue\ninstall:\n\tmkdir -p %s/libexec/osu-micro-benchmarks/mpi/pt2pt\n\tprintf "#!/bin/sh\\n" > %s/libexec/osu-micro-benchmarks/mpi/pt2pt/osu_latency\n\tchmod +x %s/libexec/osu-micro-benchmarks/mpi/pt2pt/osu_latency\n' "$p" "$p" "$p" > Makefile
'''


def make_tarball(path, top='osu-micro-benchmarks-9.9', configure=CONFIGURE):
    with tarfile.open(path, 'w:gz') as tar:
        data = configure.encode()
        info = tarfile.TarInfo(f'{top}/configure')
        info.size, info.mode = len(data), 0o755
        tar.addfile(info, io.BytesIO(data))
    return path


def build(tarball, prefix, **env):
    full = dict(os.environ, MPICC='echo', MPICXX='echo', **env)
    return subprocess.run(['bash', str(BUILD), str(tarball), str(prefix)], capture_output=True, text=True,
                          env=full, timeout=120)


def installed(prefix):
    return prefix / 'libexec/osu-micro-benchmarks/mpi/pt2pt/osu_latency'


def leftovers(prefix):
    '''Anything the build left in the prefix besides an empty libexec.'''
    return [p for p in prefix.rglob('*') if p.is_file()]


def test_build_installs_atomically_and_caches(tmp_path):
    tarball, prefix = make_tarball(tmp_path / 'osu-micro-benchmarks-9.9.tar.gz'), tmp_path / 'install'
    out = build(tarball, prefix)
    assert out.returncode == 0, out.stderr
    assert os.access(installed(prefix), os.X_OK)
    assert (prefix / 'libexec/osu-micro-benchmarks/VERSION').read_text().strip() == '9.9'
    assert not list(prefix.glob('.osu-build.*')), 'scratch folder left behind'
    again = build(tarball, prefix)
    assert again.returncode == 0 and 'up to date' in again.stdout


@pytest.mark.parametrize('content, step', [
    (b'this is not gzip', 'gunzip failed'),
    (None, 'checking the top folder failed'),
    ('configure-fails', 'configure failed'),
])
def test_bad_tarball_is_one_line_and_leaves_nothing(tmp_path, content, step):
    tarball, prefix = tmp_path / 'osu.tar.gz', tmp_path / 'install'
    env = {}
    if content is None:
        make_tarball(tarball, top='something-else-1.0')
    elif content == 'configure-fails':
        make_tarball(tarball)
        env['FAKE_OSU_CONFIGURE_FAILS'] = '1'
    else:
        tarball.write_bytes(content)
    out = build(tarball, prefix, OSU_BUILD_LOG=str(tmp_path / 'log'), **env)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f'build-osu: {tarball}: {step}'), out.stderr
    assert leftovers(prefix) == [] and not installed(prefix).exists()


def test_failed_rebuild_keeps_the_previous_install(tmp_path):
    good, prefix = make_tarball(tmp_path / 'good.tar.gz'), tmp_path / 'install'
    assert build(good, prefix).returncode == 0
    bad = make_tarball(tmp_path / 'bad.tar.gz', configure=CONFIGURE + '\n# changed\n')
    out = build(bad, prefix, FAKE_OSU_CONFIGURE_FAILS='1')
    assert out.returncode == 1 and 'configure failed' in out.stderr
    assert os.access(installed(prefix), os.X_OK)


def find(env):
    full = {k: v for k, v in os.environ.items() if k not in ('OSU_TARBALL', 'OSU_MIRROR', 'OSU_VERSION')}
    full.update(env)
    return subprocess.run(['bash', str(FIND)], capture_output=True, text=True, env=full, timeout=30)


def make_lab(root, versions, corrupt=None):
    mirror = root / 'mirror/osu-micro-benchmarks'
    mirror.mkdir(parents=True)
    sums = []
    for v in versions:
        path = make_tarball(mirror / f'osu-micro-benchmarks-{v}.tar.gz', top=f'osu-micro-benchmarks-{v}')
        sums.append(f'{hashlib.sha256(path.read_bytes()).hexdigest()}  ./mirror/osu-micro-benchmarks/{path.name}')
        if v == corrupt:
            path.write_bytes(path.read_bytes() + b'x')
    (root / 'SHA256SUMS').write_text('\n'.join(sums) + '\n')
    return root


def test_tarball_precedence(tmp_path):
    lab = make_lab(tmp_path / 'lab', ['7.2', '7.4'])
    mirror = make_lab(tmp_path / 'site', ['7.3']) / 'mirror'     # a Spack source mirror's root
    own = make_tarball(tmp_path / 'mine.tar.gz')
    assert find({'YEEBENCH_LAB': str(lab)}).stdout.strip().endswith('osu-micro-benchmarks-7.4.tar.gz')
    assert find({'YEEBENCH_LAB': str(lab), 'OSU_VERSION': '7.2'}).stdout.strip().endswith('-7.2.tar.gz')
    assert find({'YEEBENCH_LAB': str(lab), 'OSU_MIRROR': f'file://{mirror}'}).stdout.strip().endswith('-7.3.tar.gz')
    assert find({'YEEBENCH_LAB': str(lab), 'OSU_MIRROR': str(mirror), 'OSU_TARBALL': str(own)}).stdout.strip() == str(own)


def test_no_tarball_names_every_place_searched(tmp_path):
    out = find({'YEEBENCH_LAB': str(tmp_path / 'no-lab'), 'OSU_MIRROR': str(tmp_path / 'empty')})
    assert out.returncode == 3
    assert out.stderr.strip() == (f'no OSU tarball: searched OSU_TARBALL (not set); OSU_MIRROR={tmp_path}/empty '
                                  f'(no osu-micro-benchmarks/osu-micro-benchmarks-*.tar.gz); '
                                  f'lab {tmp_path}/no-lab/mirror/osu-micro-benchmarks (none)')


def test_lab_tarball_must_match_its_checksum(tmp_path):
    lab = make_lab(tmp_path / 'lab', ['7.4'], corrupt='7.4')
    out = find({'YEEBENCH_LAB': str(lab)})
    assert out.returncode == 1 and 'does not match its sha256' in out.stderr and not out.stdout
    missing = find({'OSU_TARBALL': str(tmp_path / 'nope.tar.gz')})
    assert missing.returncode == 1 and 'OSU_TARBALL=' in missing.stderr


def test_make_build_osu_leaves_the_reason_for_the_checks(tmp_path):
    prefix = tmp_path / 'build/install'
    bad = tmp_path / 'osu-micro-benchmarks-7.4.tar.gz'
    bad.write_bytes(b'not a tarball')
    env = dict(os.environ, OSU_TARBALL=str(bad))
    out = subprocess.run(['make', '--no-print-directory', 'build-osu', f'PREFIX={prefix}'], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr       # OSU is optional: make build goes on
    line = f'build-osu: {bad}: gunzip failed (not a valid gzip file)'
    assert line in out.stdout + out.stderr
    assert (tmp_path / 'build/osu-build.failed').read_text().strip() == line
    assert not (prefix / 'libexec').exists()
    from yeebench import osu
    reason = osu.locate('osu_latency', {'PATH': '', 'YEEBENCH_PREFIX': str(prefix)}).reason
    assert f'({line})' in reason
    none = dict(os.environ, YEEBENCH_LAB=str(tmp_path / 'no-lab'))
    none.pop('OSU_TARBALL', None)
    none.pop('OSU_MIRROR', None)
    out = subprocess.run(['make', '--no-print-directory', 'build-osu', f'PREFIX={prefix}'], cwd=REPO, env=none,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and 'build-osu: skipped: no OSU tarball: searched' in out.stdout
    assert not (tmp_path / 'build/osu-build.failed').exists()
    assert 'no OSU tarball' in osu.locate('osu_latency', {'PATH': '', 'YEEBENCH_PREFIX': str(prefix)}).reason
