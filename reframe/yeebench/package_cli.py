"""`yeebench checks-dir`: where the installed package's ReFrame checks are.

    reframe -C /site/config.py -c "$(yeebench checks-dir)" -R -r
"""
from yeebench import package_data
from yeebench.usage import UsageError


def checks_dir(args):
    path = package_data.checks_dir()
    if not path.is_dir():
        raise UsageError(f'the yeebench package at {package_data.package_dir()} has no checks/ folder: '
                         'reinstall it (pip install yeebench)')
    print(path)
    return 0


def register(subparsers):
    p = subparsers.add_parser(
        'checks-dir', help="print the folder of the package's ReFrame checks",
        description="Print the folder of the installed package's ReFrame checks (one folder per experiment), "
                    "for ReFrame's -c option: reframe -C SITE_CONFIG -c \"$(yeebench checks-dir)\" -R -r. "
                    "Exit status 0; 2 when the package has no checks folder.")
    p.set_defaults(func=checks_dir)
