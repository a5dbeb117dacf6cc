"""Definitions in the state database: proposed, approved, rejected, retired, reverted — never edited.

Every change is a new row. Approving a definition retires the active one of the same database,
kind, name and scope, and the new row `replaces` it, so `revert` can bring it back; removing one
retires it. Rows come back as `Definition` records with their id and status.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import sqlalchemy as sa

from core.definitions.model import Definition, Provenance, Scope, Status
from core.state.rows import all_rows, first_row, new_id, stored_utc, utcnow
from core.state.schema import definitions as table

IMPORTED = ("dbt", "osi")  # sources whose definitions name their own owner


def _definition(row: Any) -> Definition:
    body = dict(row.body or {})
    body.update(kind=row.kind, name=row.name)
    d = Definition.from_json(body)
    when = stored_utc(row.decided_at) or stored_utc(row.proposed_at)
    return Definition(
        **{
            **{f: getattr(d, f) for f in d.__dataclass_fields__},
            "id": int(row.id),
            "status": row.status,
            "scope": Scope(
                channel=row.scope_channel or "", team=row.scope_team or "", user=row.scope_user or ""
            ),
            "provenance": Provenance(
                source=row.source,
                # an import keeps its owner (dbt's meta.owner); the rest, who proposed or decided
                owner=(d.provenance.owner if row.source in IMPORTED else "")
                or row.decided_by
                or row.proposed_by
                or "",
                date=when.date().isoformat() if when else "",
                version=int(row.version),
                origin=d.provenance.origin or (f"trace {row.trace_id}" if row.trace_id else ""),
            ),
        }
    )


def _body(d: Definition) -> dict[str, Any]:
    data = d.to_json()
    for key in ("id", "status", "scope", "kind", "name"):
        data.pop(key, None)
    provenance = data.pop("provenance", {}) or {}
    kept = {k: provenance[k] for k in ("origin", "owner") if provenance.get(k)}
    if kept:
        data["provenance"] = kept
    return data


def _same_slot(database: str, d: Definition) -> sa.ColumnElement[bool]:
    """Rows of this database with this kind, name and scope."""
    scope = d.scope
    return sa.and_(
        table.c.database == database,
        table.c.kind == d.kind,
        table.c.ref == d.ref,
        sa.func.coalesce(table.c.scope_channel, "") == scope.channel,
        sa.func.coalesce(table.c.scope_team, "") == scope.team,
        sa.func.coalesce(table.c.scope_user, "") == scope.user,
    )


def propose(
    engine: sa.Engine,
    database: str,
    d: Definition,
    *,
    by: str,
    status: Status = "proposed",
    trace_id: str | None = None,
    note: str = "",
    at: dt.datetime | None = None,
) -> int:
    """Store `d` as proposed (or at once as active, for an analyst or an import); returns its id."""
    now = at or utcnow()
    with engine.begin() as conn:
        latest = conn.execute(sa.select(sa.func.max(table.c.version)).where(_same_slot(database, d))).scalar()
        current = conn.execute(
            sa.select(table.c.id).where(_same_slot(database, d), table.c.status == "active")
        ).scalar()
        values = {
            "database": database,
            "kind": d.kind,
            "name": d.name,
            "ref": d.ref,
            "body": _body(d),
            "scope_channel": d.scope.channel or None,
            "scope_team": d.scope.team or None,
            "scope_user": d.scope.user or None,
            "source": d.provenance.source,
            "status": "proposed",
            "version": int(latest or 0) + 1,
            "replaces": current,
            "proposed_by": by,
            "proposed_at": now,
            "trace_id": trace_id,
            "note": note or None,
        }
        new = new_id(conn.execute(table.insert().values(**values)))
    if status == "active":
        approve(engine, new, by=by, at=now)
    return new


def approve(engine: sa.Engine, id_: int, *, by: str, at: dt.datetime | None = None) -> Definition | None:
    """Make a proposal active; the active definition it replaces is retired. None if not pending."""
    now = at or utcnow()
    with engine.begin() as conn:
        row = conn.execute(sa.select(table).where(table.c.id == id_)).first()
        if row is None or row.status != "proposed":
            return None
        d = _definition(row)
        conn.execute(
            table.update()
            .where(_same_slot(row.database, d), table.c.status == "active")
            .values(status="retired", decided_by=by, decided_at=now)
        )
        conn.execute(
            table.update().where(table.c.id == id_).values(status="active", decided_by=by, decided_at=now)
        )
    return get(engine, id_)


def reject(engine: sa.Engine, id_: int, *, by: str, note: str = "") -> bool:
    with engine.begin() as conn:
        done = conn.execute(
            table.update()
            .where(table.c.id == id_, table.c.status == "proposed")
            .values(status="rejected", decided_by=by, decided_at=utcnow(), note=note or table.c.note)
        )
    return bool(done.rowcount)


def retire(engine: sa.Engine, id_: int, *, by: str) -> bool:
    """Remove an active definition (it stays in the history)."""
    with engine.begin() as conn:
        done = conn.execute(
            table.update()
            .where(table.c.id == id_, table.c.status == "active")
            .values(status="retired", decided_by=by, decided_at=utcnow())
        )
    return bool(done.rowcount)


def revert(engine: sa.Engine, id_: int, *, by: str) -> Definition | None:
    """Undo an approved change: retire it and bring back the version it replaced. Returns the
    definition now active in its place (None when it replaced nothing, or was not active)."""
    with engine.begin() as conn:
        row = conn.execute(
            sa.select(table.c.replaces).where(table.c.id == id_, table.c.status == "active")
        ).first()
        if row is None:
            return None
        now = utcnow()
        conn.execute(
            table.update().where(table.c.id == id_).values(status="retired", decided_by=by, decided_at=now)
        )
        if row.replaces is not None:
            conn.execute(
                table.update()
                .where(table.c.id == row.replaces, table.c.status == "retired")
                .values(status="active", decided_by=by, decided_at=now)
            )
    return get(engine, int(row.replaces)) if row.replaces is not None else None


def get(engine: sa.Engine, id_: int) -> Definition | None:
    return first_row(engine, sa.select(table).where(table.c.id == id_), _definition)


def active(engine: sa.Engine, database: str) -> list[Definition]:
    """Every active definition of a database, whatever its scope (`Definitions.for_asker` picks)."""
    statement = (
        sa.select(table).where(table.c.database == database, table.c.status == "active").order_by(table.c.id)
    )
    return all_rows(engine, statement, _definition)


def pending(engine: sa.Engine, database: str | None = None) -> list[Definition]:
    """Proposals waiting for an analyst, oldest first."""
    statement = sa.select(table).where(table.c.status == "proposed").order_by(table.c.id)
    if database is not None:
        statement = statement.where(table.c.database == database)
    return all_rows(engine, statement, _definition)


def history(engine: sa.Engine, database: str, ref: str) -> list[Definition]:
    statement = sa.select(table).where(table.c.database == database, table.c.ref == ref).order_by(table.c.id)
    return all_rows(engine, statement, _definition)


def database_of(engine: sa.Engine, id_: int) -> str | None:
    with engine.connect() as conn:
        value = conn.execute(sa.select(table.c.database).where(table.c.id == id_)).scalar()
    return str(value) if value is not None else None


def replace_imported(engine: sa.Engine, database: str, source: str, new: list[Definition], *, by: str) -> int:
    """An import replaces what the previous import of that source put there: definitions no
    longer in it are retired, the rest are approved again as new versions. Returns how many."""
    now = utcnow()
    keep = {(d.kind, d.ref) for d in new}
    with engine.begin() as conn:
        rows = conn.execute(
            sa.select(table.c.id, table.c.kind, table.c.ref).where(
                table.c.database == database, table.c.source == source, table.c.status == "active"
            )
        ).all()
        gone = [r.id for r in rows if (r.kind, r.ref) not in keep]
        if gone:
            conn.execute(
                table.update()
                .where(table.c.id.in_(gone))
                .values(status="retired", decided_by=by, decided_at=now)
            )
    for d in new:
        propose(engine, database, d, by=by, status="active", at=now)
    return len(new)
