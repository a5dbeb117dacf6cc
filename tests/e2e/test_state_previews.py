"""The state database keeps at most a preview of an answer (core/previews.py, `state.preview_bytes`).

An answer of 80 rows of 200 KB cells (16 MB, under the 20 MB result cap) goes through the real
Slack app and a schedule's real tick; what the state database then holds is read back row by row:
the turn, the trace, the cache, the audit row, the schedule's last result — each a bounded preview
that says it was cut, never the answer whole.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3

import pytest
import sqlalchemy as sa

from core.askbase import Askbase
from core.previews import cut_text, is_cut, json_preview, rows_preview, size_of
from core.schedules import store, tick
from core.schedules.diff import describe_diff, diff
from core.schedules.results import snapshot
from core.schedules.triggers import interval_spec
from core.settings import load_settings
from core.state.schema import answer_cache, audit, schedules, traces, turns
from tests.unit.test_schedules_tick import Plain

BUDGET = 16_384
CELL = 200_000
BIG_ROWS = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 80) "
    "SELECT i AS id, printf('%.*c', {cell}, 'x') || i AS note FROM n ORDER BY i"
)
BIG_VALUE = "SELECT printf('%.*c', 200000, 'y') AS note"
CHANNEL = "C0001"


def stored_bytes(value) -> int:
    return len(value.encode()) if isinstance(value, str) else size_of(value)


# ---------------------------------------------------------------- the preview itself


def test_a_preview_fits_its_budget_and_says_it_was_cut():
    assert cut_text("short", 100) == "short" and not is_cut("short")
    cut = cut_text("é" * 10_000, 1000)  # two bytes a character: never half a character
    assert is_cut(cut) and cut.startswith("é" * 500) and "[preview: 1,000 of 20,000 bytes]" in cut

    data = {"stages": [{"name": f"s{i}", "outputs": {"text": "z" * 50_000}} for i in range(50)]}
    kept, was_cut = json_preview(data, 4096)
    assert was_cut and size_of(kept) < 4096 + 1024
    assert "more items left out" in json.dumps(kept)
    assert json_preview({"a": 1}, 4096) == ({"a": 1}, False)

    rows = [(i, "w" * 5_000) for i in range(1_000)]
    preview = rows_preview(rows, 8192)
    assert preview.values_cut and preview.rows_left_out > 0
    assert size_of([list(r) for r in preview.rows]) <= 8192
    assert all(is_cut(r[1]) for r in preview.rows) and [r[0] for r in preview.rows] == list(
        range(len(preview.rows))
    )


# ---------------------------------------------------------------- through Slack


@pytest.mark.parametrize("sql", [BIG_ROWS.format(cell=CELL), BIG_VALUE], ids=["many rows", "one value"])
def test_a_huge_answer_leaves_only_previews_in_the_state_database(make_bot, slack, plan, tmp_path, sql):
    bot = make_bot(state={"preview_bytes": BUDGET})
    plan.sql = sql
    _, ts = bot.sender.mention("What do the notes say?")
    reply = slack.wait_for(lambda s: s.answer_in(CHANNEL, ts), timeout=30)
    assert "yyyy" in reply.all_text() or "xxxx" in reply.all_text()  # the person got the answer
    with bot.state.connect() as conn:
        (turn,) = conn.execute(sa.select(turns)).all()
        (trace,) = conn.execute(sa.select(traces.c.data)).scalars().all()
        cached = conn.execute(sa.select(answer_cache.c.answer, answer_cache.c.bytes)).all()
        (audited,) = conn.execute(sa.select(audit)).all()
    # the turn: the sentence quotes a 200 KB cell; a preview of it is kept, marked as one
    assert stored_bytes(turn.answer) <= BUDGET + 100
    if sql == BIG_VALUE:
        assert is_cut(turn.answer) and ": yyyyyyyy" in turn.answer[:40]
    assert turn.columns == ["note"] or turn.columns == ["id", "note"]
    assert stored_bytes(trace) <= 2 * BUDGET
    # the cache keeps an answer whole or not at all (a preview must never be replayed as the answer)
    max_bytes = bot.askbase.settings.cache.max_bytes
    for answer, size in cached:
        assert size <= max_bytes and stored_bytes(answer) <= max_bytes
        assert answer["rows"][0][-1].startswith("y" * 1000) and len(answer["rows"][0][-1]) == CELL
    assert (sql == BIG_VALUE) == bool(cached)  # 16 MB of rows are not cached; 200 KB are
    assert stored_bytes(audited.question) < 100 and audited.rows == (80 if sql != BIG_VALUE else 1)
    state_file = tmp_path / "state.sqlite"
    files = [state_file, state_file.with_name("state.sqlite-wal")]
    assert sum(f.stat().st_size for f in files if f.exists()) < 8 * 1024 * 1024  # 16 MB answered


# ---------------------------------------------------------------- a schedule's last result


@pytest.fixture
def big_askbase(tmp_path):
    notes = tmp_path / "notes.sqlite"
    with sqlite3.connect(notes) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        conn.executemany(
            "INSERT INTO notes (id, body) VALUES (?, ?)", [(i, "n" * CELL + str(i)) for i in range(60)]
        )
    engine = Askbase(
        load_settings(
            var_dir=str(tmp_path / "var"),
            state_url=f"sqlite:///{tmp_path / 'state.sqlite'}",
            databases={"notes": {"url": f"sqlite:///{notes}"}},
            state={"preview_bytes": BUDGET},
        )
    )
    yield engine, notes
    engine.close()


def test_a_schedule_keeps_a_preview_of_its_last_result_and_its_diff_says_so(big_askbase):
    askbase, notes = big_askbase
    start = dt.datetime(2025, 6, 2, 8, 0, tzinfo=dt.UTC)
    s = store.create(
        askbase.state,
        team="T1",
        channel="C1",
        owner="U1",
        question="The notes?",
        sql="SELECT id, body FROM notes ORDER BY id",
        database="notes",
        trigger=interval_spec(60),
        now=start,
    )
    first = tick.run_tick(askbase, s.id, Plain(), now=start + dt.timedelta(minutes=1), worker="w1")
    assert len(first.result.outcome.rows) == 60  # the post has the whole result
    tick.delivered(askbase, first, "1700000000.000100")
    with askbase.state.connect() as conn:
        kept = conn.execute(sa.select(schedules.c.last_result).where(schedules.c.id == s.id)).scalar_one()
    assert stored_bytes(kept) <= BUDGET + 1024
    assert kept["cut"] is True and kept["row_count"] == 60 and 0 < len(kept["rows"]) < 60
    assert all(is_cut(body) for _, body in kept["rows"])

    # the next run changes a value past what the preview kept: the diff never claims "no change"
    with sqlite3.connect(notes) as conn:
        conn.execute("UPDATE notes SET body = body || ' changed' WHERE id = 0")
    second = tick.run_tick(askbase, s.id, Plain(), now=start + dt.timedelta(minutes=2), worker="w1")
    changes = second.result.changes
    assert "No change since the last run." not in changes
    assert changes[-1].startswith("(compared on the first ") and "the start of long values" in changes[-1]


def test_a_diff_of_previews_never_calls_a_row_left_out_of_one_removed_or_added():
    teams = [(i, f"team {i}", i * 10) for i in range(100)]
    whole = snapshot(["id", "team", "open"], teams[:40], budget=1024)
    cut = snapshot(["id", "team", "open"], [(-1, "team -1", 5), *teams], budget=1024)
    assert whole.complete and 0 < len(cut.rows) < 101 and not cut.complete and not cut.cut
    # the old result was whole, so a new row is added for sure; rows of the old one the new preview
    # left out (40 and on) may be there still: not "removed"
    lines = describe_diff(diff(whole, cut))
    added = [r for r in cut.rows if not 0 <= r[0] < 40]
    assert lines[0] == "Rows: 40 → 101" and lines[1].startswith(f"{len(added)} rows added: -1 · team -1")
    assert not any("removed" in line for line in lines)
    assert lines[-1] == f"(compared on the first 40 rows before and {len(cut.rows)} now only)"
    # and back: rows of the cut old result absent from the whole new one are removed; none is added
    lines = describe_diff(diff(cut, whole))
    assert lines[1].startswith(f"{len(added)} rows removed: -1 · team -1")
    assert not any("added" in line for line in lines)
    small = snapshot(["n"], [(1,)], budget=1024)
    assert small.complete and describe_diff(diff(small, small)) == ["No change since the last run."]
