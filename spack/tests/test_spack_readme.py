"""spack/README.md shows only commands that the Spack stage (spack/stage.sh) runs, as written."""
import re
from pathlib import Path

SPACK_DIR = Path(__file__).resolve().parents[1]


def logical_lines(text):
    return [re.sub(r'\s+', ' ', line).strip() for line in text.replace('\\\n', ' ').splitlines()]


def readme_commands():
    blocks = re.findall(r'^```\n(.*?)^```', (SPACK_DIR / 'README.md').read_text(), re.S | re.M)
    return [line for block in blocks for line in logical_lines(block) if line]


def stage_commands():
    '''The stage's lines with its variables as their defaults when run from the repository root.'''
    text = (SPACK_DIR / 'stage.sh').read_text().replace('"', '')
    text = text.replace('$STATE', '$PWD/build/spack').replace('$PREFIX', '$PWD/build/install')
    return '\n'.join(logical_lines(text))


def test_the_readme_shows_commands():
    commands = readme_commands()
    assert any(c.startswith('spack -e . install') for c in commands)
    assert any(c.startswith('YEEBENCH_PREFIX=') and ' -p spack ' in c for c in commands)


def test_every_readme_command_is_run_by_the_stage():
    stage = stage_commands()
    for command in readme_commands():
        assert command in stage, f'spack/README.md shows `{command}`, which spack/stage.sh does not run'


def test_every_inline_spack_command_of_the_readme_is_run_by_the_stage():
    stage = stage_commands()
    text = (SPACK_DIR / 'README.md').read_text()
    for command in re.findall(r'`(spack -e \. [^`]+)`', text):
        if '>' in command:  # containerize: the containers stage runs it
            continue
        assert command in stage, f'spack/README.md names `{command}`, which spack/stage.sh does not run'
