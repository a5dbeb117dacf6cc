"""`python -m bot ...` — see bot/cli.py."""

import sys

from bot.cli import main

sys.exit(main(sys.argv[1:]))
