"""`python -m core.guard check|bench` (see core.guard.cli)."""

import logging
import sys

from core.guard.cli import main

logging.getLogger("sqlglot").setLevel(logging.ERROR)  # "falling back to Command" is our DENY
sys.exit(main())
