"""A database people ask about: its read-only engine and, loaded lazily, what the engine knows of it.

One `Database` per configured name per process (see `Databases`), so connection pools, the
catalog, the relationship graph and the value index are built once and shared by every question.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from core.catalog import Catalog, load_catalog, schema_signature, sqlglot_dialect
from core.connect import readonly_engine, redact
from core.demo import demo_settings
from core.graph import RelationshipGraph, build_graph
from core.settings import DEMO_DB, DatabaseSettings, Settings
from core.values import ValueIndex, open_index
from core.warehouse import BULK_REFLECTED, incremental
from core.warehouse import reflect as warehouse_reflect


class UnknownDatabase(LookupError):
    pass


def not_configured(name: str) -> str:
    """What an unknown name means to people: a channel, a thread or a schedule still names a
    database the configuration no longer has (error kind "unknown_database")."""
    return f"The database '{name}' is not configured any more."


@dataclass
class Database:
    name: str
    config: DatabaseSettings
    var_dir: Path
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def url(self) -> str:
        return redact(self.config.url)

    @cached_property
    def engine(self) -> sa.Engine:
        return readonly_engine(self.config.url, self.config.warehouse)

    @property
    def backend(self) -> str:
        return make_url(self.config.url).get_backend_name()

    @property
    def cache_dir(self) -> Path:
        return self.var_dir / "cache"

    @property
    def catalog(self) -> Catalog:
        """Reflected + overlaid catalog; re-read when the schema signature changes (see refresh)."""
        with self._lock:
            if "_catalog" not in self.__dict__:
                bulk = self._bulk()
                fingerprint = self._fingerprint_now(bulk.pop("signer", None))
                self.__dict__["_catalog"] = load_catalog(
                    self.engine,
                    self.name,
                    overlay_path=self.config.catalog,
                    schema=self.config.schema_name,
                    cache_dir=self.cache_dir,
                    signer=lambda: fingerprint,
                    **bulk,
                )
                self.__dict__["_fingerprint"] = fingerprint
            catalog: Catalog = self.__dict__["_catalog"]
            return catalog

    @property
    def catalog_fingerprint(self) -> str:
        """The schema's fingerprint (`schema_signature`) when the current catalog was read: the
        schema watch (core/schema_watch.py) reloads nothing while the schema still has it."""
        self.catalog  # noqa: B018
        return str(self.__dict__.get("_fingerprint", ""))

    def _bulk(self) -> dict[str, Any]:
        """Warehouses and DuckDB are read in bulk from INFORMATION_SCHEMA (core/warehouse/reflect.py)."""
        if self.backend not in BULK_REFLECTED:
            return {}
        configured = self.config.schemas or ([self.config.schema_name] if self.config.schema_name else [])
        schemas = warehouse_reflect.default_schemas(self.engine, configured)
        qualify = bool(configured)
        dialect = sqlglot_dialect(self.engine)
        signer = {"signer": lambda: warehouse_reflect.signature(self.engine, schemas)}
        if self.backend == "files":  # a file's columns are not in its view's SQL: read them all
            return {
                "reflector": lambda: warehouse_reflect.bulk_reflect(
                    self.engine, self.name, schemas, dialect, qualify, views_are_tables=True
                ),
                **signer,
            }

        def refresher(stale: Mapping[str, Any] | None) -> tuple[Catalog, dict[str, Any]]:
            """Only the tables changed since the last reflection are read again (incremental.py):
            this process's last one, else the one the stale catalog cache kept."""
            last = self.__dict__.get("last_reflection")
            done = incremental.reflect_incrementally(
                self.engine, self.name, schemas, dialect, qualify, stale, last.prior if last else None
            )
            self.__dict__["last_reflection"] = done
            return done.catalog, done.record

        return {"refresher": refresher, **signer}

    def schema_signature(self) -> str:
        """The cheap fingerprint of the schema as it is now (one query; core/schema_watch.py)."""
        return self._fingerprint_now(self._bulk().get("signer"))

    def _fingerprint_now(self, signer: Callable[[], str] | None) -> str:
        """The warehouse's bulk `signer`, or core/catalog.py's schema_signature elsewhere."""
        return str(signer()) if signer is not None else schema_signature(self.engine, self.config.schema_name)

    def refresh(self) -> bool:
        """Reload the catalog if the schema changed; True when it did."""
        old = self.__dict__.get("_catalog")
        with self._lock:
            self.__dict__.pop("_catalog", None)
        new = self.catalog
        changed = old is None or old.signature != new.signature
        if changed:
            for derived in ("graph", "values"):
                self.__dict__.pop(derived, None)
        return changed

    @cached_property
    def graph(self) -> RelationshipGraph:
        return build_graph(self.catalog, self.engine, cache_dir=self.cache_dir)

    @cached_property
    def values(self) -> ValueIndex:
        return open_index(self)

    def dispose(self) -> None:
        if "engine" in self.__dict__:
            self.engine.dispose()


def _looks_like_url(text: str) -> bool:
    return "://" in text


def database_config(name_or_url: str, settings: Settings) -> tuple[str, DatabaseSettings]:
    """Resolve `--db NAME|URL` to a name and its settings (a URL is its own, unnamed config)."""
    if name_or_url in settings.databases:
        return name_or_url, settings.databases[name_or_url]
    if name_or_url == DEMO_DB:
        return DEMO_DB, demo_settings(Path(settings.var_dir))
    if _looks_like_url(name_or_url):
        return redact(name_or_url), DatabaseSettings(url=name_or_url)
    if name_or_url.endswith((".sqlite", ".db", ".sqlite3")) and Path(name_or_url).is_file():
        return Path(name_or_url).stem, DatabaseSettings(url=f"sqlite:///{Path(name_or_url).resolve()}")
    known = ", ".join(sorted({DEMO_DB, *settings.databases})) or DEMO_DB
    raise UnknownDatabase(
        f"no database named '{name_or_url}'. Configured: {known}. A SQLAlchemy URL works too."
    )


class Databases:
    """Process-wide registry: one Database object (pools, catalog, index) per name."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._open: dict[str, Database] = {}
        self._lock = threading.Lock()

    def get(self, name_or_url: str | None = None) -> Database:
        name, config = database_config(name_or_url or self.settings.default_db, self.settings)
        with self._lock:
            db = self._open.get(name)
            if db is None:
                db = Database(name=name, config=config, var_dir=Path(self.settings.var_dir))
                self._open[name] = db
            return db

    def names(self) -> list[str]:
        return sorted({DEMO_DB, *self.settings.databases})

    def close(self) -> None:
        with self._lock:
            for db in self._open.values():
                db.dispose()
            self._open.clear()
