"""Business definitions: the meaning a schema does not hold, declared, imported, taught and learned.

Where they come from, and where they live:
- the catalog YAML's `definitions:` section, and any files in the database's `definitions:`
  setting (YAML or OSI) — reviewed like code (`load.py`);
- the state database: imported from dbt or OSI (`askbase catalog import`), taught in chat and
  approved by an analyst, remembered from a clarification (core/state/definitions.py).

Every definition is checked against the schema when it is loaded (`check.py`): one that no longer
fits is left out with a warning that names it — it never misleads an answer. For a question,
`in_force` gives those that apply to the asker (their person, channel and team scopes), the
pipeline picks the ones the question needs (`retrieve.py`), shows them to the SQL writer as
ready SQL (`prompt.py`), expands the ones a query names like tables (`expand.py`) and says which
the answer used (`used.py`).

Modules:
  model.py     Definition, Definitions, Scope, Provenance
  load.py      the YAML format
  check.py     each definition against the schema and the guard
  retrieve.py  which definitions a question needs
  prompt.py    the writer's "Business definitions" section
  expand.py    entities and metrics named like tables → CTEs
  used.py      which definitions an answer's SQL used
"""

from __future__ import annotations

import logging
from pathlib import Path

import sqlalchemy as sa

from core.access import Principal
from core.data_rules import rules_policy
from core.database import Database
from core.definitions import osi
from core.definitions.check import check
from core.definitions.load import DefinitionError, load_file
from core.definitions.model import Definition, Definitions
from core.state import definitions as store

log = logging.getLogger(__name__)

__all__ = ["Definition", "DefinitionError", "Definitions", "declared", "in_force", "of_database"]


def declared(db: Database) -> tuple[Definition, ...]:
    """The definitions of the database's files (catalog YAML, `definitions:` files in Askbase's
    YAML or OSI, told apart by content), as written."""
    paths = [p for p in (db.config.catalog, *db.config.definitions) if p]
    out: list[Definition] = []
    for path in paths:
        if not Path(path).is_file():
            continue
        try:
            if osi.is_osi(path):
                read = osi.read(path, db.catalog.dialect)
                out.extend(read.definitions)
                for skipped in read.skipped:
                    log.warning("OSI definition of %s not read from %s: %s", db.name, path, skipped)
            else:
                out.extend(load_file(path))
        except DefinitionError as exc:
            log.warning("definitions of %s not loaded: %s", db.name, exc)
    return tuple(out)


def of_database(db: Database, state: sa.Engine | None) -> Definitions:
    """Every definition of the database that fits its schema today, whatever its scope."""
    stored: list[Definition] = []
    if state is not None:
        try:
            stored = store.active(state, db.name)
        except sa.exc.SQLAlchemyError:
            log.exception("could not read the definitions of %s from the state database", db.name)
    everything = Definitions((*db.catalog.memo(("declared_definitions",), lambda: declared(db)), *stored))
    if not everything:
        return everything
    return db.catalog.memo(("definitions", everything.fingerprint()), lambda: _fitting(db, everything))


def _fitting(db: Database, definitions: Definitions) -> Definitions:
    problems = check(definitions, db.catalog, rules_policy(db))
    if not problems:
        return definitions
    bad = set()
    for problem in problems:
        log.warning("definition left out on %s: %s", db.name, problem)
        bad.add(problem.split(": ", 2)[1] if problem.count(": ") >= 2 else problem)
    return Definitions(tuple(d for d in definitions if f"{d.kind} '{d.name}'" not in bad))


def in_force(db: Database, state: sa.Engine | None, who: Principal) -> Definitions:
    """The definitions that apply to this asker here (person > channel > team > database)."""
    return of_database(db, state).for_asker(who.user, who.channel, who.team)
