"""Where the suite's check files are: one folder per experiment under yeebench/checks/."""
from pathlib import Path

CHECKS = Path(__file__).resolve().parents[1] / 'checks'


def check_file(name):
    """The check file `name` ('pt2pt' or 'pt2pt.py') in whichever experiment folder holds it."""
    stem = name[:-3] if name.endswith('.py') else name
    found = sorted(CHECKS.glob(f'*/{stem}.py'))
    if len(found) != 1:
        raise LookupError(f'check file {stem}.py: {len(found)} matches under {CHECKS}')
    return found[0]


def all_check_files():
    """Every ReFrame test file of the suite (not the helper modules beside them, which import no ReFrame)."""
    return sorted(p for p in CHECKS.glob('*/*.py') if 'import reframe' in p.read_text())
