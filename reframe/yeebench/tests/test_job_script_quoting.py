"""No check variable reaches the shell as syntax: every str and List[str] variable of every check (found in
ReFrame's variable registry) is set to a hostile value, the job scripts are generated (--dry-run),
and each script is parsed as the shell would: the value must come out as one literal word, never
split, never a command. A `bash -c SCRIPT` word is parsed the same way, recursively."""
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SETTINGS = REPO / 'reframe/config/settings.py'
CHECKS = REPO / 'reframe/yeebench/checks'
SHELLS = {'bash', 'sh', '/bin/bash', '/bin/sh', '/usr/bin/bash'}
# variables every run of these checks must see reach a script (a test that checks nothing is no test)
MUST_REACH = {'str': ('init_mode', 'output_root', 'precision', 'yee_opts', 'mpicc'),
              'list': ('programs', 'cmake_options')}
# variables whose value must be one of a fixed set and is refused otherwise (tested on their own below):
# hostile, they would stop the fixture every solver check depends on before any job script exists
VALIDATED = {'source_subdir'}
# variables holding a program's options as one string (`-S yee_opts='--n 64 --steps 10'`): split into
# shell words as the shell would, then each word quoted
OPTION_LISTS = ('_opts',)


def hostile(name):
    """A value that any unquoted use turns into several words or a command: quotes of both kinds,
    command substitution, ;, a comment, and a tag naming the variable."""
    if name.endswith(OPTION_LISTS):   # must split into words: each word hostile on its own
        # (words a shell splits at ; and ( ), which shlex.split keeps whole)
        return f"@@{name}@@ a;touch${{IFS}}PWNED_{name} $(touch${{IFS}}PWNED_{name})"
    return f"@@{name}@@ x'y\"z;touch PWNED_{name};$(touch PWNED_{name})`touch PWNED_{name}`#"


def words(line):
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


def leaks(script, payloads, where):
    """(where, variable, line) for each payload that the shell would not read as part of one word."""
    found = []
    for line in script.splitlines():
        present = [name for name, value in payloads.items() if f'@@{name}@@' in line]
        if not present:
            continue
        try:
            tokens = words(line)
        except ValueError:           # unbalanced quotes: the value broke the line's quoting
            found += [(where, name, line) for name in present]
            continue
        scripts = {i + 1 for i, token in enumerate(tokens[:-1])
                   if token == '-c' and i > 0 and tokens[i - 1] in SHELLS}
        for i in scripts:                 # a script run by bash -c: parsed the same way
            found += leaks(tokens[i], payloads, f'{where} (bash -c)')
        words_here = [t for i, t in enumerate(tokens) if i not in scripts]
        for name in present:
            tag = f'@@{name}@@'
            uses = line.count(tag) - sum(tokens[i].count(tag) for i in scripts)
            if name.endswith(OPTION_LISTS):
                # options given as one string: its shell words, each one a word of the line
                expected = shlex.split(payloads[name])
                whole = sum(words_here[i:i + len(expected)] == expected for i in range(len(words_here)))
            else:
                # the tag has no shell characters, so each use shows it once in the raw line; each use
                # quoted right gives back the whole value inside one word
                whole = sum(t.count(payloads[name]) for t in words_here)
            if uses != whole:
                found.append((where, name, line))
    return found


def reached(scripts, payloads):
    return {name for name in payloads for text in scripts.values() if f'@@{name}@@' in text}


@pytest.fixture(scope='module')
def variable_kinds(tmp_path_factory):
    """{check: {'str': [...], 'list': [...]}} from ReFrame's variable registry (loaded once: it loads every check)."""
    env = dict(os.environ, YEEBENCH_RFM_DIR=str(tmp_path_factory.mktemp('listing') / 'rfm'))
    listing = subprocess.run([sys.executable, str(Path(__file__).with_name('check_string_variables.py')),
                              str(SETTINGS), str(CHECKS), 'local'],
                             capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
    assert listing.returncode == 0, listing.stderr
    return json.loads(listing.stdout)


@pytest.fixture(scope='module', params=['str', 'list'])
def hostile_dry_run(tmp_path_factory, request, variable_kinds):
    """The scripts of one dry run with every variable of one kind hostile (str, then List[str], whose
    hostile one-element lists would otherwise break the fixtures the str variables are read through)."""
    reframe = Path(sys.executable).parent / 'reframe'
    if not reframe.exists():
        pytest.skip('reframe is not installed next to this Python')
    tmp = tmp_path_factory.mktemp(f'hostile-{request.param}')
    env = dict(os.environ, YEEBENCH_RFM_DIR=str(tmp / 'rfm'))
    variables = sorted({v for kinds in variable_kinds.values() for v in kinds[request.param]} - VALIDATED)
    payloads = {name: hostile(name) for name in variables}
    settings = [arg for name, value in payloads.items() for arg in ('-S', f'{name}={value}')]
    run = subprocess.run([str(reframe), '-C', str(SETTINGS), '-c', str(CHECKS), '-R', '--system', 'local',
                          '--dry-run', *settings], capture_output=True, text=True, env=env,
                         timeout=600, cwd=tmp)
    scripts = {str(p.relative_to(tmp)): p.read_text(errors='replace')
               for p in (tmp / 'rfm').rglob('*.sh')}   # job and build scripts, sweep scripts
    assert scripts, run.stdout[-3000:] + run.stderr[-3000:]
    return payloads, scripts, tmp, request.param


def test_no_check_variable_reaches_the_shell_unquoted(hostile_dry_run):
    payloads, scripts, _, _ = hostile_dry_run
    found = [leak for path, text in scripts.items() for leak in leaks(text, payloads, path)]
    assert not found, '\n'.join(f'{where}: {name}: {line}' for where, name, line in found[:40])


def test_hostile_job_scripts_are_valid_shell(hostile_dry_run):
    _, scripts, tmp, _ = hostile_dry_run
    bad = []
    for path in scripts:
        check = subprocess.run(['bash', '-n', str(tmp / path)], capture_output=True, text=True)
        if check.returncode:
            bad.append(f'{path}: {check.stderr.strip()}')
    assert not bad, '\n'.join(bad[:10])


def test_the_hostile_values_did_reach_job_scripts(hostile_dry_run):
    payloads, scripts, tmp, kind = hostile_dry_run
    missing = [name for name in MUST_REACH[kind] if name not in reached(scripts, payloads)]
    assert not missing, f'never in a job script, so never tested: {missing}'
    assert not list(tmp.rglob('PWNED_*')), 'generating the job scripts ran a payload'


def test_the_parser_sees_an_unquoted_value():
    payloads = {'v': hostile('v'), 'v_opts': hostile('v_opts')}
    assert leaks(f'yee {payloads["v_opts"]}', payloads, 'x')
    assert not leaks(f'yee {" ".join(map(shlex.quote, shlex.split(payloads["v_opts"])))}', payloads, 'x')
    assert leaks(f'yee --init-mode {payloads["v"]}', payloads, 'x')
    assert leaks(f'rm -rf "{payloads["v"]}"', payloads, 'x')
    assert leaks(f"bash -c {shlex.quote('yee ' + payloads['v'])}", payloads, 'x')
    assert not leaks(f'yee --init-mode {shlex.quote(payloads["v"])}', payloads, 'x')
    assert not leaks(f"bash -c {shlex.quote('yee ' + shlex.quote(payloads['v']))}", payloads, 'x')


def test_a_source_tree_that_is_not_shipped_is_refused_in_one_line(tmp_path):
    reframe = Path(sys.executable).parent / 'reframe'
    if not reframe.exists():
        pytest.skip('reframe is not installed next to this Python')
    env = dict(os.environ, YEEBENCH_RFM_DIR=str(tmp_path / 'rfm'))
    run = subprocess.run([str(reframe), '-C', str(SETTINGS), '-c', str(CHECKS / 'fdtd' / 'fdtd.py'), '--system', 'local',
                          '-n', 'FdtdStrongScaling%backend=cpu', '--mode', 'smoke', '--dry-run',
                          '-S', f'source_subdir={hostile("source_subdir")}'],
                         capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    out = run.stdout + run.stderr
    assert run.returncode != 0 and 'is not a source tree (solver, microbench)' in out, out[-2000:]
    assert not list(tmp_path.rglob('PWNED_*')), 'a hostile source_subdir ran'
