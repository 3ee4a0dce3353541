"""Print, as JSON, every string variable each check declares ({class name: [variable, ...]}).

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


def string_variables(cls):
    builtin = set(rfm.RunOnlyRegressionTest._rfm_var_space) | set(rfm.RegressionTest._rfm_var_space)
    names = []
    for name, var in cls._rfm_var_space.items():
        types = getattr(var.field, '_types', ()) or ()
        if name not in builtin and str in types:
            names.append(name)
    return names


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
