"""`python -m yeebench` is the same as the `yeebench` command."""
import sys

from yeebench.cli import main

sys.exit(main())
