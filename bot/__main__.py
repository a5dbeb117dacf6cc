"""`python -m bot ...` — see bot/cli.py."""

import sys

from bot.cli import run

sys.exit(run())
