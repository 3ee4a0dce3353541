"""JSON reports of the solver (`yee`) and the probes (affinity, numa-bw, halo).

Schemas are fixed in notes/interfaces.md; these functions find the JSON object
in a program's stdout (launchers may print other lines around it), check the
fields the checks rely on, and return plain dicts.
"""
import json
import math
import re

from yeebench.parsers import ParseError


def find_json_objects(text):
    """Every top-level JSON object in `text`, in order (other lines are skipped)."""
    decoder = json.JSONDecoder()
    objects, pos = [], 0
    while True:
        start = text.find('{', pos)
        if start < 0:
            return objects
        try:
            obj, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            pos = start + 1
            continue
        if isinstance(obj, dict):
            objects.append(obj)
        pos = end


def _one(text, predicate, what):
    found = [o for o in find_json_objects(text) if predicate(o)]
    if not found:
        raise ParseError(f'no {what} JSON object in the output')
    return found[-1]


def _require(obj, keys, what):
    missing = [k for k in keys if k not in obj]
    if missing:
        raise ParseError(f'{what} lacks field(s): {", ".join(missing)}')


# -- solver --------------------------------------------------------------------
YEE_FIELDS = ('valid', 'cells', 'steps', 'ranks', 'threads', 'mcells_per_s', 'seconds', 'energy', 'checksum')


def parse_yee(text):
    """The solver's report (schema 'yee-report')."""
    report = _one(text, lambda o: o.get('schema') == 'yee-report', 'yee-report')
    _require(report, YEE_FIELDS, 'yee report')
    return report


def yee_problems(report):
    """Why a solver run cannot be trusted (empty list = sane)."""
    problems = []
    if report.get('valid') is not True:
        problems.append('the solver says its run is not valid')
    energy = report.get('energy')
    if not isinstance(energy, (int, float)) or not math.isfinite(energy):
        problems.append(f'energy is not finite: {energy!r}')
    if not re.fullmatch(r'[0-9a-fA-F]{16}', str(report.get('checksum', ''))):
        problems.append(f'checksum is not 16 hex digits: {report.get("checksum")!r}')
    rate = report.get('mcells_per_s')
    if not isinstance(rate, (int, float)) or not math.isfinite(rate) or rate <= 0:
        problems.append(f'Mcells/s is not a positive number: {rate!r}')
    return problems


def yee_halo_share(report):
    """Percent of the total time spent in halo exchange."""
    seconds = report.get('seconds') or {}
    total = seconds.get('total') or 0
    return 100.0 * (seconds.get('halo') or 0) / total if total > 0 else 0.0


# -- probes --------------------------------------------------------------------
def parse_probe(text, program):
    """A probe's report: program is 'affinity', 'numa-bw' or 'halo'."""
    report = _one(text, lambda o: o.get('program') == program, f'{program} report')
    required = {'affinity': ('ranks', 'threads_per_rank', 'placement'),
                'numa-bw': ('valid', 'threads', 'kernels'),
                'halo': ('valid', 'ranks', 'results')}.get(program, ())
    _require(report, required, f'{program} report')
    return report


def numa_bw_triad(report):
    """Best triad bandwidth (GB/s) of a numa-bw report."""
    try:
        return float(report['kernels']['triad']['best_gbs'])
    except (KeyError, TypeError, ValueError):
        raise ParseError('numa-bw report has no kernels.triad.best_gbs') from None
