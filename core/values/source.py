"""The database the value index reads: its name, settings, folder, catalog and read-only engine.

A protocol rather than `core.database.Database` because a Database owns its value index
(`Database.values`): the index needs only this narrow reading of a database, so the dependency
points one way — core.database → core.values — and a test can index anything that has these five.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import sqlalchemy as sa

from core.catalog import Catalog
from core.settings import DatabaseSettings


class Source(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def config(self) -> DatabaseSettings: ...

    @property
    def var_dir(self) -> Path: ...

    @property
    def catalog(self) -> Catalog: ...

    @property
    def engine(self) -> sa.Engine: ...
