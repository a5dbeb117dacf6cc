"""`GET /files/<token>`: an answer's CSV or chart, for whoever holds a valid link (links.py).

The stored SQL of the answer runs again through `Askbase.rerun` as the person the link was made
for, in the place it was made for — access → guard → execute → audit, like every other path to a
database — the CSV streamed to a temporary file (purpose `csv`), the chart drawn from the rows
(purpose `rerun`). What a person reads when something is wrong is a short plain-text page.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from pathlib import Path

from aiohttp import web

from bot.answer_view import slug
from bot.charts import chart_png
from bot.teams import links
from core.answer import Outcome
from core.askbase import Askbase
from core.conversation.service import Conversations, StoredTurn

log = logging.getLogger("askbase.teams.files")

CHUNK = 256 * 1024
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _page(status: int, text: str) -> web.Response:
    return web.Response(status=status, text=text + "\n", content_type="text/plain", charset="utf-8")


def _refused(outcome: Outcome, database: str) -> web.Response:
    log.info("trace %s: download refused (%s): %s", outcome.trace.id, outcome.error_kind, outcome.error)
    if outcome.error_kind == "access":
        return _page(403, f"You may not query '{database}' here any more.")
    if outcome.error_kind in ("guard", "database", "unknown_database"):
        return _page(410, "This result cannot be made again; ask the question again in Teams.")
    return _page(503, "The database did not answer. Try the link again in a minute.")


def _export(askbase: Askbase, turn: StoredTurn, link: links.Link, path: Path) -> Outcome:
    return askbase.rerun(
        turn.sql,
        database=turn.database,
        principal=link.principal,
        purpose="csv",
        question=turn.question,
        csv_path=path,
    )


def _chart(askbase: Askbase, turn: StoredTurn, link: links.Link) -> tuple[Outcome, bytes | None]:
    outcome = askbase.rerun(
        turn.sql, database=turn.database, principal=link.principal, purpose="rerun", question=turn.question
    )
    if outcome.status != "answer":
        return outcome, None
    return outcome, chart_png(outcome.columns, outcome.rows, turn.question)


def handler(
    conversations: Conversations,
    key: bytes,
    executor: Executor,
    clock: Callable[[], dt.datetime] | None = None,
) -> Handler:
    """`executor`: where the CSV and the chart are made (the answering queue); `clock`: now, for a
    link's expiry (tests move it)."""
    askbase = conversations.askbase

    async def serve_file(request: web.Request) -> web.StreamResponse:
        try:
            link = links.verify(key, request.match_info.get("token", ""), now=clock() if clock else None)
        except links.BadLink as exc:
            return _page(410 if "expired" in str(exc) else 403, str(exc))
        loop = asyncio.get_running_loop()
        turn = await loop.run_in_executor(executor, conversations.turn, link.trace_id)
        if turn is None or not turn.answered:
            return _page(404, "There is no result behind this link.")
        name = f"{slug(turn.question)}-{turn.trace_id}"
        if link.kind == "png":
            outcome, png = await loop.run_in_executor(executor, _chart, askbase, turn, link)
            if outcome.status != "answer":
                return _refused(outcome, turn.database)
            if png is None:
                return _page(404, "This result has no chart.")
            return web.Response(
                body=png,
                content_type="image/png",
                headers={
                    "Cache-Control": "private, max-age=300",
                    "Content-Disposition": f'inline; filename="{name}.png"',
                },
            )
        tmp = Path(tempfile.mkdtemp(prefix="askbase-teams-csv-"))
        try:
            path = tmp / f"{name}.csv"
            outcome = await loop.run_in_executor(executor, _export, askbase, turn, link, path)
            if outcome.status != "answer" or outcome.exported_rows is None:
                return _refused(outcome, turn.database)
            response = web.StreamResponse(
                headers={
                    "Content-Type": "text/csv; charset=utf-8",
                    "Content-Disposition": f'attachment; filename="{name}.csv"',
                    "Cache-Control": "no-store",
                }
            )
            response.content_length = path.stat().st_size
            await response.prepare(request)
            with path.open("rb") as data:
                while chunk := data.read(CHUNK):
                    await response.write(chunk)
            await response.write_eof()
            return response
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    return serve_file
