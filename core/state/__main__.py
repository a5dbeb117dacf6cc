"""`python -m core.state revision -m "what changes"`: write the next state migration (core/state/migrate.py)."""

import sys

from core.state.migrate import main

sys.exit(main(sys.argv[1:]))
