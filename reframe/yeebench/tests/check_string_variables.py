"""Print, as JSON, every string variable each check declares
({class name: {'str': [variable, ...], 'list': [List[str] variable, ...]}}).

Read from ReFrame's own variable registry of each loaded test class (fixtures included),
leaving out the variables ReFrame itself declares on every test. Run with the suite's
configuration: python check_string_variables.py SETTINGS CHECKS_DIR SYSTEM
"""
import json
import sys

import reframe as rfm
import reframe.core.config as config
import reframe.core.runtime as runtime
from reframe.frontend.loader import RegressionCheckLoader


def _is_list_of_str(kind):
    return getattr(kind, '__name__', '') == 'List[str]' and getattr(kind, '_elem_type', None) is str


def string_variables(cls):
    """{'str': [...], 'list': [...]}: the class's own variables of type str and of type List[str]."""
    builtin = set(rfm.RunOnlyRegressionTest._rfm_var_space) | set(rfm.RegressionTest._rfm_var_space)
    found = {'str': [], 'list': []}
    for name, var in cls._rfm_var_space.items():
        types = getattr(var.field, '_types', ()) or ()
        if name in builtin:
            continue
        if str in types:
            found['str'].append(name)
        elif any(_is_list_of_str(t) for t in types):
            found['list'].append(name)
    return found


def main(settings, checks, system):
    site = config.load_config(settings)
    site.select_subconfig(system)
    runtime.init_runtime(site)
    found = {}
    pending = [type(test) for test in RegressionCheckLoader([checks], recurse=True).load_all()]
    while pending:
        cls = pending.pop()
        if cls.__name__ in found:
            continue
        found[cls.__name__] = string_variables(cls)
        # fixtures are test classes too, and their variables reach build scripts
        pending.extend(f.cls for f in getattr(cls, '_rfm_fixture_space', {}).values())
    print(json.dumps(found, sort_keys=True))


if __name__ == '__main__':
    main(*sys.argv[1:4])
