"""Optional extras: what each one installs, and the one line that names it when it is missing.

`pip install askbase` is what `askbase ask`, `console`, `index`, `catalog`, `audit` and `db` need
on SQLite (keyword or LLM mode). The rest is an extra of pyproject.toml — the chat platforms and
charts (registered by bot/extras.py: core knows no chat platform), `postgres`, `mysql` (here:
core opens those databases) and the warehouse drivers (core/warehouse) — installed by those who use
it. Code that needs one imports it where it is used; when the import fails, the person is told in
one line which extra to install ("Slack support is not installed: pip install 'askbase[slack]'"),
never shown a traceback:

- the command line (bot/cli.py) turns an ImportError of a module registered here into that line
  (`missing_extra`), whichever command hit it;
- opening a database whose driver is an extra raises `MissingExtra` (a ValueError, so it reaches
  people as "could not be opened: ..." like any wrong URL, core/pipeline.py) — `require_driver`;
- charts are a bonus: without matplotlib an answer simply comes without one (bot/charts.py asks
  `installed("charts")`).

tests/integration/test_package_edges.py checks every extra registered exists in pyproject.toml and that the
base commands run with none of these modules importable.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util

# extra → what it gives, as the start of the line a person reads
WHAT = {
    "postgres": "The PostgreSQL driver",
    "mysql": "The MySQL/MariaDB driver",
    "bench": "What the benchmarks need",
}

# extra → the top-level modules Askbase imports from it (the first is the one `installed` looks for)
MODULES: dict[str, tuple[str, ...]] = {
    "postgres": ("psycopg",),
    "mysql": ("pymysql",),
    "bench": ("datasketch",),
}


def register(extra: str, what: str, modules: tuple[str, ...]) -> None:
    """Another layer's extra (bot/extras.py: the chat platforms, charts)."""
    WHAT[extra] = what
    MODULES[extra] = modules
    installed.cache_clear()


def extra_of(module: str) -> str | None:
    """The extra that installs the top-level `module`."""
    return next((extra for extra, modules in MODULES.items() if module in modules), None)


# SQLAlchemy driver names (of the URLs core/connect.py and core/state/engine.py open) → the extra
# that installs the DB-API module
DRIVERS = {"postgresql+psycopg": "postgres", "mysql+pymysql": "mysql", "mariadb+pymysql": "mysql"}


class MissingExtra(ValueError):
    """Something Askbase was asked to do needs an extra that is not installed; the message says which."""

    def __init__(self, extra: str) -> None:
        super().__init__(message(extra))
        self.extra = extra


def message(extra: str) -> str:
    """The one line a person reads: what is missing and the command that installs it."""
    return f"{WHAT.get(extra, f'The {extra} extra')} is not installed: pip install 'askbase[{extra}]'"


def missing_extra(exc: BaseException) -> str | None:
    """The extra whose absence `exc` (an ImportError) shows, or None when it is not one of ours."""
    if not isinstance(exc, ImportError) or not exc.name:
        return None
    return extra_of(exc.name.split(".")[0])


def require(extra: str) -> None:
    """Import what `extra` installs, or raise MissingExtra naming it."""
    for module in MODULES[extra]:
        try:
            importlib.import_module(module)
        except ImportError:
            raise MissingExtra(extra) from None


def require_driver(drivername: str) -> None:
    """Before an engine is made for a URL with this driver name: MissingExtra when its driver is
    an extra that is not installed (other drivers are SQLAlchemy's business)."""
    extra = DRIVERS.get(drivername)
    if extra is not None:
        require(extra)


@functools.cache
def installed(extra: str) -> bool:
    """Whether `extra`'s first module can be imported (found, not imported: cheap)."""
    try:
        return importlib.util.find_spec(MODULES[extra][0]) is not None
    except (ImportError, ValueError):
        return False
